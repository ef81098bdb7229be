"""cnat: run a command in a pod at a scheduled time (the ``At`` of Programming Kubernetes)."""
