"""Defaulters: a function that fills in a typed object, answered as a lossless JSON patch.

The defaulter mutates an instance of the model in place. The patch is computed from the
model's own view before and after (:func:`lossless_patch`) and applied to the object *as it was
sent*: a field the model does not know, or a field the user never set and the defaulter did
not touch, is never in the patch. controller-runtime diffs the sent object against the
re-serialised typed object instead, so a webhook built with an older type removes fields a
newer CRD added (controller-runtime #2931).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from setpoint.api.patch import create_json_patch, json_equal
from setpoint.webhook.handlers import call_maybe_async, decode_typed
from setpoint.webhook.review import AdmissionRequest, AdmissionResponse

ModelT = TypeVar("ModelT", bound=BaseModel)


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)


def lossless_patch(sent: dict[str, Any], before: Any, after: Any) -> list[dict[str, Any]]:
    """The JSON patch that carries the change ``before`` → ``after`` onto ``sent``.

    ``before``/``after``: the model's dump of ``sent`` before and after the defaulter ran.
    Only keys whose values differ between them are written; everything else in ``sent``
    stays as it was.
    """
    target = _carry(copy.deepcopy(sent), before, after)
    return create_json_patch(sent, target)


def _carry(target: Any, before: Any, after: Any) -> Any:
    if json_equal(before, after):
        return target
    if isinstance(before, dict) and isinstance(after, dict) and isinstance(target, dict):
        for key, value in after.items():
            if key in before and key in target:
                target[key] = _carry(target[key], before[key], value)
            elif key not in before or not json_equal(before[key], value):
                target[key] = copy.deepcopy(value)
        for key in before:
            if key not in after:
                target.pop(key, None)
        return target
    if (
        isinstance(before, list)
        and isinstance(after, list)
        and isinstance(target, list)
        and len(before) == len(after) == len(target)
    ):
        # Items changed in place (a defaulted container): carried item by item, so that
        # fields of the items the model does not know stay.
        return [_carry(t, b, a) for t, b, a in zip(target, before, after, strict=True)]
    return copy.deepcopy(after)


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
