"""The controller uid of an object, read without validation (hot loops over every pod)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["controller_uid"]


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid in the ``controller: true`` ownerReference, or None."""
    for reference in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if reference.get("controller") is True:
            uid = reference.get("uid")
            return str(uid) if uid is not None else None
    return None
