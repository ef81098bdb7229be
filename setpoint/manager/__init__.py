"""Runs caches and controllers together: leader election, probes, metrics, shutdown."""
