"""Decoded watch events, as yielded by ``Client.watch``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar

__all__ = ["WatchEvent", "WatchEventType"]

ObjectT = TypeVar("ObjectT")


class WatchEventType(StrEnum):
    """The ``type`` of a watch event."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"


@dataclass(frozen=True, slots=True)
class WatchEvent(Generic[ObjectT]):
    """One event: its type, the object (dict, or the user's model), and its resourceVersion.

    For ``DELETED`` the object is its last state. ``BOOKMARK`` objects carry only
    ``metadata.resourceVersion`` (and the ``k8s.io/initial-events-end`` annotation at the end of
    initial events); they are only yielded when asked for.
    """

    type: WatchEventType
    object: ObjectT
    resource_version: str

    @property
    def is_initial_events_end(self) -> bool:
        """Whether this is the bookmark that ends ``send_initial_events`` replay."""
        if self.type is not WatchEventType.BOOKMARK or not isinstance(self.object, dict):
            return False
        metadata: Any = self.object.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        return bool(annotations.get("k8s.io/initial-events-end") == "true")
