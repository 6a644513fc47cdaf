"""The behaviour stage: recorded (or generated) calls replayed on a module version in a process of its own
(replay.py) and compared with the recording (compare.py, with values.py and describe.py), and inputs
generated from type hints on the original (generate.py). steps.py holds the runner's steps."""
