"""The local Kubernetes control plane (server side). Never imports the runtime."""

from setpoint.cluster.local_cluster import LocalCluster

__all__ = ["LocalCluster"]
