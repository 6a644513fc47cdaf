"""`coderefine bench`: measure a provider and configuration on a suite of tasks (see README, "Bench")."""
