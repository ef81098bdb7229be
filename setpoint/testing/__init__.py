"""pytest plugin and fixtures for testing operators against the local cluster."""

from setpoint.testing.background_cluster import BackgroundCluster

__all__ = ["BackgroundCluster"]
