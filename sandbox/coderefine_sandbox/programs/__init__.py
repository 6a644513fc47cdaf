"""Targets run as programs: the runs the tests make (argv, stdin, files read) recorded by an interpreter
start-up hook (hook/), replayed run by run on each version (execute.py, outputs.py), and timed as whole
processes with interpreter start-up measured beside them (timing.py). steps.py holds the runner's steps."""

import os

HOOK_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook")
PROGRAM_TARGET = "<program>"  # the evidence key of a program's runs and lines
