"""The timing stage: original and candidate timed on the recorded calls in interleaved pyperf worker processes
(worker.py), a paired speedup with its interval (stats.py), a series stopped once decisive (sequential.py), a
sample of the calls when one pass is too long (sampling.py), and the machine's timing slot (lock.py).
steps.py holds the runner's steps."""
