"""The local Kubernetes control plane (server side). Never imports the runtime."""

from setpoint.api.deferred_certificates import deferred_default_certificates

# aiohttp's own TLS contexts, which it fills with the system's CA certificates when imported,
# are used by no part of the server: they load on first use, if any.
with deferred_default_certificates():
    from setpoint.cluster.local_cluster import LocalCluster

__all__ = ["LocalCluster"]
