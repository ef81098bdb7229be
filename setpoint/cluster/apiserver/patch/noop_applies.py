"""Applies known to change nothing, so that a controller re-applying its unchanged
configuration on every reconcile costs about as much as a GET.

Server-side apply is a deterministic function of the live object (fixed by its
resourceVersion), the request body, the manager, ``force``, the subresource, the field
validation directive and the schema. When an apply with those inputs changed nothing, the same
request against the same revision changes nothing again: its answer is the stored object (and
the same warnings). Dry runs are never remembered (they write nothing even when they would
change something). Bodies are remembered by a 128-bit BLAKE2b digest, so memory stays small.
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Any, Final

from setpoint.cluster.apiserver.patch.merge_schema import MergeNode

#: Remembered applies per server (the oldest are forgotten first).
CAPACITY: Final = 4096
DIGEST_BYTES: Final = 16

Key = tuple[str, str, str, bool, str, bytes]


class NoOpApplies:
    """Remembered no-op applies of one server."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._entries: dict[Key, tuple[int, MergeNode, list[str]]] = {}

    @staticmethod
    def key(
        storage_key: str,
        subresource: str,
        manager: str,
        force: bool,
        field_validation: str,
        body: bytes,
    ) -> Key:
        """The memo key of an apply."""
        digest = hashlib.blake2b(body, digest_size=DIGEST_BYTES).digest()
        return (storage_key, subresource, manager, force, field_validation, digest)

    def lookup(self, key: Key, revision: int, root: MergeNode) -> list[str] | None:
        """The warnings of a remembered no-op apply at ``revision`` (None: not known)."""
        entry = self._entries.get(key)
        if entry is None or entry[0] != revision or entry[1] is not root:
            return None
        return list(entry[2])

    def remember(self, key: Key, revision: int, root: MergeNode, warnings: list[str]) -> None:
        """Record that this apply changed nothing at ``revision``."""
        self._entries.pop(key, None)
        if len(self._entries) >= self._capacity:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = (revision, root, list(warnings))


_BY_SERVER: weakref.WeakKeyDictionary[Any, NoOpApplies] = weakref.WeakKeyDictionary()


def noop_applies(owner: Any) -> NoOpApplies:
    """The memo of one server (keyed by its object operations)."""
    memo = _BY_SERVER.get(owner)
    if memo is None:
        memo = NoOpApplies()
        _BY_SERVER[owner] = memo
    return memo
