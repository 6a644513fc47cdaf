"""The recording stage: the project's tests under pytest in a workspace (testrun.py), with the runner's pytest
plugin (pytest_plugin.py) in the test process keeping only the selected tests (selection.py) and, for the
original, recording the calls to the targets (capture.py) and the targets' lines the tests run (linecov.py)."""
