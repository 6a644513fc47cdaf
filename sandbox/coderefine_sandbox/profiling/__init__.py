"""The runner's `profile` mode (`coderefine scan`): steps.py runs the project's tests with the pytest plugin
(plugin.py), or the user's workload command (command.py), once profiled and once for coverage; collect.py
is what both gather with."""
