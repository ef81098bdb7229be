"""A create's FieldsV1 trie, remembered by the shape of the object created.

Every create records one managedFields entry owning every field of the new object
(:func:`~.field_paths.created_fields`, a walk of the object against its merge schema). What that
trie holds depends on the merge schema and on the object's *shape* only: the keys at every level
and which values are non-empty objects. A scalar's value never matters, and a scalar, an empty
object and an empty list all make the same leaf. Objects made from one template (a controller's
children, a client's ConfigMaps) share their shape, so the trie of the first is the trie of the
rest.

:class:`CreatedFieldsMemo` keys the trie by the merge schema (the node itself, so a CRD's newer
schema is another key), the two options, and the shape: every key in order, with markers where
a non-empty object opens and closes. An object holding a non-empty list anywhere is not
remembered (a keyed list's element keys come from its items' values), nor is one with more than
:data:`MAX_SHAPE_ITEMS` keys; those take the walk every time. A remembered trie is kept as JSON
and decoded for each create, so no two objects share a dict.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from setpoint.cluster.apiserver.patch.field_paths import created_fields
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode

__all__ = ["MAX_SHAPE_ITEMS", "MEMO_SIZE", "CreatedFieldsMemo", "remembered_created_fields"]

#: Shapes remembered; the memo starts over when full (a cluster creates few shapes).
MEMO_SIZE: Final = 1024
#: Objects with more keys than this (at all levels) are not remembered: the key would be large.
MAX_SHAPE_ITEMS: Final = 256

# Not strings, so they can never be taken for a key.
_OPEN: Final = 0
_CLOSE: Final = 1

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def _shape(value: dict[str, Any], out: list[Any]) -> bool:
    """Append ``value``'s shape to ``out``; False if it holds a non-empty list or is too big."""
    append = out.append
    for key, child in value.items():
        append(key)
        if child.__class__ is str or not child:  # a leaf (strings first: most values are)
            continue
        if isinstance(child, dict):
            append(_OPEN)
            if not _shape(child, out):
                return False
            append(_CLOSE)
        elif isinstance(child, list):
            return False
    return len(out) <= MAX_SHAPE_ITEMS


class CreatedFieldsMemo:
    """:func:`~.field_paths.created_fields`, remembered by the object's shape."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self._size = size
        self._tries: dict[tuple[Any, ...], bytes] = {}

    def __call__(
        self, root: MergeNode, obj: dict[str, Any], *, value_structs: bool, drop_status: bool
    ) -> dict[str, Any]:
        """What ``created_fields(root, obj, ...)`` returns, a fresh trie each time."""
        shape: list[Any] = [root, value_structs, drop_status]
        if not _shape(obj, shape):
            return created_fields(root, obj, value_structs=value_structs, drop_status=drop_status)
        key = tuple(shape)
        known = self._tries.get(key)
        if known is not None:
            trie: dict[str, Any] = _decode(known)
            return trie
        trie = created_fields(root, obj, value_structs=value_structs, drop_status=drop_status)
        if len(self._tries) >= self._size:
            self._tries.clear()
        self._tries[key] = _encode(trie)
        return trie


#: The memo every create uses.
remembered_created_fields: Final = CreatedFieldsMemo()
