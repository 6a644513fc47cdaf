"""Reports: console, JSON."""
