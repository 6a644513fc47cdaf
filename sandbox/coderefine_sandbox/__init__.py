"""Code that runs inside the sandbox. It never imports coderefine (the host package).

`python -m coderefine_sandbox.runner REQUEST.json` runs one evaluation (modes.py: baseline or candidate) or
a profile (profiling/), step by step, each step in a process of its own: recording/ (the tests, with the calls
to the targets recorded), behaviour/ (replay and comparison, generated inputs), timing/ (interleaved timing
workers) and programs/ (targets run as programs). protocol/ types every request, report and file between
them and with the host; process.py, audit.py, pinning.py and workload.py serve several stages; confine.py is
the sandbox backends' own step around each job."""
