"""JSON merge patch (RFC 7386) applied in place, for objects the server has just decoded.

:func:`setpoint.api.patch.apply_merge_patch` copies its input; the API server's current object
is a fresh decode of the stored bytes, owned by the request, so copying it again (with its
``managedFields``) would only cost time on the hottest write path.
"""

from __future__ import annotations

import copy
from typing import Any


def merge_patch_in_place(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` merged in (``target`` is modified; the patch is not)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            target[key] = merge_patch_in_place(target.get(key), value)
        else:
            target[key] = copy.deepcopy(value) if isinstance(value, list) else value
    return target
