"""Validators: functions that accept or refuse a create, an update or a delete of a typed
object (controller-runtime's ``CustomValidator``).

Each returns warnings (None, a string or strings) or raises :class:`~.review.Denied`. An
operation without a function is allowed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from setpoint.webhook.handlers import as_warnings, call_maybe_async, decode_typed
from setpoint.webhook.review import AdmissionRequest, AdmissionResponse


class Validator:
    """``create(obj)``, ``update(old, new)``, ``delete(obj)`` for objects of ``model``."""

    def __init__(
        self,
        model: type[BaseModel],
        *,
        create: Callable[[Any], Any] | None = None,
        update: Callable[[Any, Any], Any] | None = None,
        delete: Callable[[Any], Any] | None = None,
    ) -> None:
        self.model = model
        self.create = create
        self.update = update
        self.delete = delete

    async def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        """Validate the request; a :class:`Denied` raised by a function propagates."""
        operation = request.operation
        if operation == "CREATE" and self.create is not None:
            obj = decode_typed(self.model, request.object, "object")
            warnings = await call_maybe_async(self.create, obj)
        elif operation == "UPDATE" and self.update is not None:
            old = decode_typed(self.model, request.old_object, "oldObject")
            new = decode_typed(self.model, request.object, "object")
            warnings = await call_maybe_async(self.update, old, new)
        elif operation == "DELETE" and self.delete is not None:
            obj = decode_typed(self.model, request.old_object, "oldObject")
            warnings = await call_maybe_async(self.delete, obj)
        else:
            warnings = None
        return AdmissionResponse(warnings=as_warnings(warnings))
