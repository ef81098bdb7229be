"""Errors raised by the cache."""

from __future__ import annotations

__all__ = ["CacheError", "CacheNotStarted", "CacheSyncTimeout", "NamespaceNotCached"]


class CacheError(Exception):
    """Base of the cache's errors."""


class CacheSyncTimeout(CacheError, TimeoutError):
    """An informer did not finish its initial list in time.

    The message names the resource and, when the last list attempt failed, why (a 403 says
    "forbidden" and points at RBAC: the usual cause, and otherwise a silent hang).
    """

    def __init__(self, message: str, *, resource: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.resource = resource
        self.cause = cause


class NamespaceNotCached(CacheError, LookupError):
    """A read asked for a namespace outside the namespaces the cache was restricted to."""


class CacheNotStarted(CacheError, RuntimeError):
    """An operation needs the cache to be started first."""
