"""`coderefine scan` and `coderefine sweep`: find the project's functions worth optimizing (a profile of
its tests or of a workload), then refine many of them at once through an engine (local processes or a Ray
cluster), merge the verified changes file by file, and report them together."""
