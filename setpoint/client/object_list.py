"""The result of ``Client.list``: items plus the list's resourceVersion."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = ["ObjectList"]

ItemT = TypeVar("ItemT")


@dataclass(slots=True)
class ObjectList(Generic[ItemT]):
    """The result of :meth:`Client.list`: all items (every page) and the list's resourceVersion.

    Start a watch from ``resource_version`` to see every change after this list.
    """

    items: list[ItemT]
    resource_version: str
    kind: str = ""
    api_version: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    continue_token: str | None = None  # set only for a manual ``limit`` page with more to come

    def __iter__(self) -> Iterator[ItemT]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        # Lists can hold thousands of objects: never dump them into logs by accident.
        return (
            f"ObjectList(kind={self.kind!r}, items=<{len(self.items)} objects>, "
            f"resource_version={self.resource_version!r})"
        )
