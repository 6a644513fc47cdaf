"""Code that runs inside the sandbox. It never imports coderefine (the host package)."""
