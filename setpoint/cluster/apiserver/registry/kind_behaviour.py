"""Per-kind rules layered on the generic object semantics (upstream: a registry's strategy).

The generic operations call a :class:`KindBehaviour` at fixed points: before a create or an
update is stored, to validate, to decide whether the spec changed, to convert between the
served and the stored shape, and after a write is durable. The default behaviour suits plain
built-ins (validated against their schema, then by their kind's rules from
``validation.builtin_rules``); kinds with extra rules (namespaces, pods, events, CRDs, custom
resources) subclass it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.registry.builtin_defaults import label_job
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.validation.builtin_rules import builtin_kind_errors

#: Validates a built-in object of a given kind against its upstream schema: returns field
#: errors and the paths of fields the schema does not know.
BuiltinValidator = Callable[[ServedResource, dict[str, Any]], tuple[list[FieldError], list[str]]]

_NON_SPEC_TOP_LEVEL = frozenset({"apiVersion", "kind", "metadata", "status"})


def add_new_errors(errors: list[FieldError], extra: list[FieldError]) -> list[FieldError]:
    """``errors`` followed by those of ``extra`` it does not hold yet.

    The schema check and a kind's own rules overlap (both require ``eventTime`` of an
    events.k8s.io Event, or a container's ``name``); upstream runs one validation, so reports
    each problem once.
    """
    return errors + [error for error in extra if error not in errors]


class KindBehaviour:
    """The rules of a plain built-in kind; subclasses override what differs."""

    #: Whether :meth:`after_write` does anything (it then runs even if the client hangs up).
    reacts_to_writes: bool = False

    def __init__(self, validator: BuiltinValidator | None = None) -> None:
        self._validator = validator

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        """Adjust a new object before validation (defaults, status reset)."""
        if resource.has_status:
            obj.pop("status", None)

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        """Adjust an updated object before validation (the old status is already kept)."""

    def validate(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str = "",
    ) -> tuple[list[FieldError], list[str]]:
        """Field errors of ``obj`` and the unknown fields it carries (``old`` on update;
        ``subresource`` is ``"status"`` for a ``/status`` write)."""
        if self._validator is None:
            errors: list[FieldError] = []
            unknown: list[str] = []
        else:
            errors, unknown = self._validator(resource, obj)
        extra = self.kind_errors(resource, obj, old, subresource)
        if not resource.is_custom:
            extra = extra + builtin_kind_errors(
                resource.group, resource.kind, obj, old, subresource
            )
        return (add_new_errors(errors, extra) if extra else errors), unknown

    def kind_errors(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str,
    ) -> list[FieldError]:
        """The kind's own checks beyond its schema (none by default); reported after the
        schema's, each problem once."""
        return []

    def spec_changed(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> bool:
        """Whether a change warrants a new ``metadata.generation``: anything but metadata/status."""
        keys = (set(new) | set(old)) - _NON_SPEC_TOP_LEVEL
        return any(new.get(key) != old.get(key) for key in keys)

    def prepare_deletion(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        """Adjust an object that is about to be marked deleting (deletionTimestamp set)."""

    def holds_deletion(self, obj: dict[str, Any]) -> bool:
        """Whether something still holds a deleting object (by default: its finalizers)."""
        return bool((obj.get("metadata") or {}).get("finalizers"))

    def to_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        """The stored shape of an object written through ``resource`` (identity by default)."""
        return obj

    def from_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        """The served shape of a stored object read through ``resource`` (identity by default)."""
        return obj

    def delete_grace_seconds(
        self, resource: ServedResource, obj: dict[str, Any], requested: int | None
    ) -> int:
        """Seconds a delete waits before the object goes (0: now). Only pods wait."""
        return 0

    async def after_write(
        self,
        resource: ServedResource,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> None:
        """React to a durable write: ``obj`` is None after a delete, ``old`` None after a create."""


class JobBehaviour(KindBehaviour):
    """Jobs: the selector and pod labels generated from the Job's uid on create."""

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        super().prepare_create(resource, obj)
        label_job(obj)
