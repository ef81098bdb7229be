"""Events: validation (``pkg/apis/core/validation/events.go``), timestamps, and the two APIs.

core/v1 and events.k8s.io/v1 Events are one store, kept in the core/v1 shape; events.k8s.io
names some fields differently (``regarding``/``involvedObject``, ``note``/``message``, the
``deprecated*`` fields) and is converted on the way in and out. Timestamps sent in other
RFC 3339 spellings (Kopf sends ``+00:00``) are normalised to Time/MicroTime.
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.names import validate_dns1123_subdomain, validate_qualified_name
from setpoint.api.times import normalize_micro_time, normalize_time
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

REPORTING_INSTANCE_LENGTH_LIMIT: Final = 128
ACTION_LENGTH_LIMIT: Final = 128
REASON_LENGTH_LIMIT: Final = 128
NOTE_LENGTH_LIMIT: Final = 1024
EVENT_TYPES: Final = ("Normal", "Warning")

# events.k8s.io/v1 field -> core/v1 field.
_V1_TO_CORE: Final = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_CORE_TO_V1: Final = {core: v1 for v1, core in _V1_TO_CORE.items()}
_TIME_FIELDS: Final = ("firstTimestamp", "lastTimestamp")


def _rename(obj: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    return {names.get(key, key): value for key, value in obj.items()}


def to_core(obj: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in the stored core/v1 shape."""
    core = _rename(obj, _V1_TO_CORE)
    core["apiVersion"] = "v1"
    return core


def from_core(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 shows it."""
    event = _rename(obj, _CORE_TO_V1)
    event["apiVersion"] = "events.k8s.io/v1"
    return event


def _normalize_times(resource: ServedResource, obj: dict[str, Any]) -> None:
    try:
        for field in _TIME_FIELDS:
            if isinstance(obj.get(field), str):
                obj[field] = normalize_time(obj[field])
        if isinstance(obj.get("eventTime"), str):
            obj["eventTime"] = normalize_micro_time(obj["eventTime"])
        series = obj.get("series")
        if isinstance(series, dict) and isinstance(series.get("lastObservedTime"), str):
            series["lastObservedTime"] = normalize_micro_time(series["lastObservedTime"])
    except ValueError as exc:
        raise status_errors.bad_request(
            f'Event in version "{resource.version}" cannot be handled as a Event: {exc}'
        ) from exc


def _text(obj: dict[str, Any], field: str) -> str:
    value = obj.get(field)
    return value if isinstance(value, str) else ""


def validate_event(obj: dict[str, Any], *, events_api: bool) -> list[FieldError]:
    """Upstream's event validation for a create (``obj`` in the core/v1 shape)."""
    errors: list[FieldError] = []
    namespace = _text(obj.get("metadata") or {}, "namespace")
    involved = obj.get("involvedObject") if isinstance(obj.get("involvedObject"), dict) else {}
    involved_namespace = _text(involved or {}, "namespace")
    controller_field = "reportingController" if events_api else "reportingComponent"
    if not obj.get("eventTime"):
        if not involved_namespace:
            if namespace not in ("", "default"):
                errors.append(
                    fe.invalid(
                        "involvedObject.namespace",
                        involved_namespace,
                        "does not match event.namespace",
                    )
                )
        elif namespace != involved_namespace:
            errors.append(
                fe.invalid(
                    "involvedObject.namespace", involved_namespace, "does not match event.namespace"
                )
            )
    else:
        if not involved_namespace and namespace not in ("default", "kube-system"):
            errors.append(
                fe.invalid(
                    "involvedObject.namespace", involved_namespace, "does not match event.namespace"
                )
            )
        controller = _text(obj, "reportingComponent")
        if not controller:
            errors.append(fe.required(controller_field, ""))
        for problem in validate_qualified_name(controller):
            errors.append(fe.invalid(controller_field, controller, problem))
        for field, limit in (
            ("reportingInstance", REPORTING_INSTANCE_LENGTH_LIMIT),
            ("action", ACTION_LENGTH_LIMIT),
            ("reason", REASON_LENGTH_LIMIT),
        ):
            value = _text(obj, field)
            if not value:
                errors.append(fe.required(field, ""))
            if len(value) > limit:
                errors.append(fe.invalid(field, "", f"can have at most {limit} characters"))
        if len(_text(obj, "message")) > NOTE_LENGTH_LIMIT:
            note_field = "note" if events_api else "message"
            errors.append(
                fe.invalid(note_field, "", f"can have at most {NOTE_LENGTH_LIMIT} characters")
            )
    for problem in validate_dns1123_subdomain(namespace):
        errors.append(fe.invalid("namespace", namespace, problem))
    if events_api:
        errors.extend(_validate_events_api(obj))
    return errors


def _validate_events_api(obj: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    series = obj.get("series")
    if isinstance(series, dict):
        count = series.get("count")
        if not isinstance(count, int) or count < 2:
            errors.append(fe.invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errors.append(fe.required("series.lastObservedTime", ""))
    if not obj.get("eventTime"):
        errors.append(fe.required("eventTime", ""))
    event_type = _text(obj, "type")
    if event_type not in EVENT_TYPES:
        errors.append(fe.invalid("type", "", f"has invalid value: {event_type}"))
    if obj.get("firstTimestamp"):
        errors.append(fe.invalid("deprecatedFirstTimestamp", "", "needs to be unset"))
    if obj.get("lastTimestamp"):
        errors.append(fe.invalid("deprecatedLastTimestamp", "", "needs to be unset"))
    if obj.get("count"):
        errors.append(fe.invalid("deprecatedCount", "", "needs to be unset"))
    source = obj.get("source")
    if isinstance(source, dict) and (source.get("component") or source.get("host")):
        errors.append(fe.invalid("deprecatedSource", "", "needs to be unset"))
    return errors


class EventBehaviour(KindBehaviour):
    """Event rules for both event APIs (stored as core/v1)."""

    def __init__(self, validator: BuiltinValidator | None = None) -> None:
        super().__init__(validator)

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        _normalize_times(resource, obj)

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        _normalize_times(resource, new)

    def kind_errors(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str,
    ) -> list[FieldError]:
        if old is not None:
            return []
        events_api = resource.group == "events.k8s.io"
        return validate_event(to_core(obj) if events_api else obj, events_api=events_api)

    def to_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        return to_core(obj) if resource.group == "events.k8s.io" else obj

    def from_storage(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        return from_core(obj) if resource.group == "events.k8s.io" else obj
