"""The three contestants, each a script run as its own process against the harness's cluster.

Every script reads the kubeconfig from ``$KUBECONFIG`` and the namespace from ``$BENCH_NAMESPACE``
and sends requests with a ``User-Agent`` whose product name identifies it, so the cluster's
per-client counters tell its requests apart from the harness's own.
"""
