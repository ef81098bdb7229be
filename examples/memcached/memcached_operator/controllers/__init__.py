"""The reconcilers of memcached-operator (each module registers one on the operator)."""

from memcached_operator.controllers import memcached as memcached
from memcached_operator.controllers import memcachedproxy as memcachedproxy

__all__ = ["memcached", "memcachedproxy"]
