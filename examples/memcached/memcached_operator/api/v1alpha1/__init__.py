"""cache.example.com/v1alpha1: Memcached and MemcachedProxy."""

from memcached_operator.api.v1alpha1.memcached import Memcached, MemcachedSpec, MemcachedStatus
from memcached_operator.api.v1alpha1.memcachedproxy import (
    McrouterSpec,
    MemcachedProxy,
    MemcachedProxySpec,
    MemcachedProxyStatus,
    ProxyRules,
    ServiceReference,
)

__all__ = [
    "McrouterSpec",
    "Memcached",
    "MemcachedProxy",
    "MemcachedProxySpec",
    "MemcachedProxyStatus",
    "MemcachedSpec",
    "MemcachedStatus",
    "ProxyRules",
    "ServiceReference",
]
