"""Where a sweep's refinements run: `local` (a process pool on this machine) or `ray` (a Ray cluster)."""
