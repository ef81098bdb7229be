"""Expectations: pod writes a controller made and has not yet seen in its cache.

Upstream counts expected adds and deletes and lowers them from informer events. Here the
check is level-based: a created pod is observed once the cache holds it (or anything newer
than it), a deleted pod once the cache no longer holds it or shows its deletionTimestamp.
Expectations older than five minutes are dropped, as upstream's ``ExpectationsTimeout``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXPECTATIONS_TIMEOUT", "PendingWrites"]

EXPECTATIONS_TIMEOUT = 300.0


def _version(obj: Mapping[str, Any]) -> int:
    try:
        return int(str((obj.get("metadata") or {}).get("resourceVersion") or 0))
    except ValueError:
        return 0


@dataclass
class _Pending:
    since: float
    created: dict[str, int] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)


class PendingWrites:
    """Per-owner expectations of pod creations and deletions."""

    def __init__(self) -> None:
        self._pending: dict[str, _Pending] = {}

    def expect(
        self,
        key: str,
        now: float,
        created: Sequence[Mapping[str, Any]] = (),
        deleted: Sequence[str] = (),
    ) -> None:
        """Remember pods just created (the stored objects) and names just deleted."""
        entry = self._pending.setdefault(key, _Pending(since=now))
        entry.since = now
        for pod in created:
            entry.created[str(pod["metadata"]["name"])] = _version(pod)
        entry.deleted.update(deleted)

    def forget(self, key: str) -> None:
        """Drop the expectations of ``key`` (its owner is gone)."""
        self._pending.pop(key, None)

    def satisfied(
        self,
        key: str,
        now: float,
        cached: Callable[[str], Mapping[str, Any] | None],
        every: Callable[[], Sequence[Mapping[str, Any]]],
    ) -> bool:
        """Whether the cache reflects every expected write: ``cached(name)`` reads one pod of
        the owner's namespace, ``every()`` lists them all (needed only when a created pod is
        not there: gone already, or not seen yet)."""
        entry = self._pending.get(key)
        if entry is None:
            return True
        if now - entry.since > EXPECTATIONS_TIMEOUT:
            self.forget(key)
            return True
        missing = [v for name, v in entry.created.items() if cached(name) is None]
        created_seen = not missing
        if missing:
            # Gone already? Then the cache must at least have seen a later write.
            newest = max((_version(p) for p in every()), default=0)
            created_seen = all(version and newest >= version for version in missing)
        deleted_seen = all(
            (pod := cached(name)) is None or (pod.get("metadata") or {}).get("deletionTimestamp")
            for name in entry.deleted
        )
        if created_seen and deleted_seen:
            self.forget(key)
            return True
        return False
