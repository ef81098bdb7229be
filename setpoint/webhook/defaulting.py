"""Defaulters: a function that fills in a typed object, answered as a lossless JSON patch.

The defaulter mutates an instance of the model in place. The patch is computed from the
model's own view before and after (:func:`lossless_patch`) and applied to the object *as it was
sent*: a field the model does not know, or a field the user never set and the defaulter did
not touch, is never in the patch. controller-runtime diffs the sent object against the
re-serialised typed object instead, so a webhook built with an older type removes fields a
newer CRD added (controller-runtime #2931).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

import msgspec
from pydantic import BaseModel

from setpoint.api.patch import create_json_patch, json_copy, json_equal
from setpoint.webhook.handlers import call_maybe_async, decode_typed
from setpoint.webhook.review import AdmissionRequest, AdmissionResponse

ModelT = TypeVar("ModelT", bound=BaseModel)
_SORTED_ENCODE: Final = msgspec.json.Encoder(order="sorted").encode


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)


def lossless_patch(sent: dict[str, Any], before: Any, after: Any) -> list[dict[str, Any]]:
    """The JSON patch that carries the change ``before`` → ``after`` onto ``sent``.

    ``before``/``after``: the model's dump of ``sent`` before and after the defaulter ran.
    Only keys whose values differ between them are written; everything else in ``sent``
    stays as it was.
    """
    operations: list[dict[str, Any]] = []
    _carry(sent, before, after, "", operations)
    return operations


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``1 != 1.0``, ``True != 1``, key order aside), compared as encoded
    bytes: one C call instead of a walk in Python over the (mostly equal) dumps."""
    try:
        return _SORTED_ENCODE(a) == _SORTED_ENCODE(b)
    except (TypeError, msgspec.EncodeError):
        return json_equal(a, b)


def _carry(target: Any, before: Any, after: Any, path: str, out: list[dict[str, Any]]) -> None:
    """Append to ``out`` the operations that make the change ``before`` → ``after`` at
    ``path`` of ``target`` (the object as sent), leaving the rest of ``target`` alone."""
    if _same(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict) and isinstance(target, dict):
        for key, value in after.items():
            child = f"{path}/{_escape(key)}"
            if key in before and key in target:
                _carry(target[key], before[key], value, child, out)
            elif key not in before or not _same(before[key], value):
                if key in target:
                    out.extend(create_json_patch(target[key], value, child))
                else:
                    out.append({"op": "add", "path": child, "value": json_copy(value)})
        for key in before:
            if key not in after and key in target:
                out.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        return
    if (
        isinstance(before, list)
        and isinstance(after, list)
        and isinstance(target, list)
        and len(before) == len(after) == len(target)
    ):
        # Items changed in place (a defaulted container): carried item by item, so that
        # fields of the items the model does not know stay.
        for index, (item, old, new) in enumerate(zip(target, before, after, strict=True)):
            _carry(item, old, new, f"{path}/{index}", out)
        return
    out.extend(create_json_patch(target, after, path))


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class Defaulter:
    """Runs ``fn(obj)`` (sync or async) on creates and updates of ``model`` objects."""

    def __init__(self, model: type[ModelT], fn: Callable[[ModelT], Any]) -> None:
        self.model = model
        self.fn = fn

    async def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        """Default the request's object; the patch holds only the defaulter's changes."""
        if request.operation not in ("CREATE", "UPDATE") or request.object is None:
            return AdmissionResponse()
        typed = decode_typed(self.model, request.object, "object")
        before = _dump(typed)
        await call_maybe_async(self.fn, typed)
        return AdmissionResponse(patch=lossless_patch(request.object, before, _dump(typed)))
