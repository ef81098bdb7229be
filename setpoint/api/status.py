"""The Kubernetes ``Status`` object: how the API reports errors (and some successes).

Every failed request answers with a ``Status`` body::

    {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
     "message": "configmaps \\"x\\" not found", "reason": "NotFound",
     "details": {"name": "x", "kind": "configmaps"}, "code": 404}

Clients decide what to do from ``reason`` and ``code`` (retry a ``Conflict``, relist after
``Expired``...), and show ``message`` to users. The local API server builds its errors with the
constructors below, which mirror apimachinery's ``api/errors`` (same codes, reasons, messages and
details); the runtime reads them back with :func:`is_status` and the same constants.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError, aggregate_messages
from setpoint.api.go_format import go_quote

__all__ = [
    "CauseType",
    "StatusReason",
    "already_exists",
    "apply_conflict",
    "bad_request",
    "conflict",
    "failure_status",
    "forbidden",
    "gone",
    "internal_error",
    "invalid",
    "is_status",
    "method_not_supported",
    "not_acceptable",
    "not_found",
    "qualified_kind",
    "qualified_resource",
    "reason_for_code",
    "request_entity_too_large",
    "resource_expired",
    "service_unavailable",
    "success_status",
    "timeout",
    "too_many_requests",
    "unauthorized",
    "unsupported_media_type",
]


class StatusReason:
    """``Status.reason`` values (``metav1.StatusReason``)."""

    UNKNOWN: Final = ""
    UNAUTHORIZED: Final = "Unauthorized"
    FORBIDDEN: Final = "Forbidden"
    NOT_FOUND: Final = "NotFound"
    ALREADY_EXISTS: Final = "AlreadyExists"
    CONFLICT: Final = "Conflict"
    GONE: Final = "Gone"
    INVALID: Final = "Invalid"
    SERVER_TIMEOUT: Final = "ServerTimeout"
    TIMEOUT: Final = "Timeout"
    TOO_MANY_REQUESTS: Final = "TooManyRequests"
    BAD_REQUEST: Final = "BadRequest"
    METHOD_NOT_ALLOWED: Final = "MethodNotAllowed"
    NOT_ACCEPTABLE: Final = "NotAcceptable"
    REQUEST_ENTITY_TOO_LARGE: Final = "RequestEntityTooLarge"
    UNSUPPORTED_MEDIA_TYPE: Final = "UnsupportedMediaType"
    INTERNAL_ERROR: Final = "InternalError"
    EXPIRED: Final = "Expired"
    SERVICE_UNAVAILABLE: Final = "ServiceUnavailable"


class CauseType:
    """``Status.details.causes[].reason`` values (``metav1.CauseType``)."""

    # The field-error types are defined once, beside FieldError.
    FIELD_VALUE_NOT_FOUND: Final = fe.FIELD_VALUE_NOT_FOUND
    FIELD_VALUE_REQUIRED: Final = fe.FIELD_VALUE_REQUIRED
    FIELD_VALUE_DUPLICATE: Final = fe.FIELD_VALUE_DUPLICATE
    FIELD_VALUE_INVALID: Final = fe.FIELD_VALUE_INVALID
    FIELD_VALUE_NOT_SUPPORTED: Final = fe.FIELD_VALUE_NOT_SUPPORTED
    FIELD_VALUE_FORBIDDEN: Final = fe.FIELD_VALUE_FORBIDDEN
    FIELD_VALUE_TOO_LONG: Final = fe.FIELD_VALUE_TOO_LONG
    FIELD_VALUE_TOO_MANY: Final = fe.FIELD_VALUE_TOO_MANY
    FIELD_VALUE_TYPE_INVALID: Final = fe.FIELD_VALUE_TYPE_INVALID
    INTERNAL_ERROR: Final = fe.INTERNAL_ERROR
    UNEXPECTED_SERVER_RESPONSE: Final = "UnexpectedServerResponse"
    FIELD_MANAGER_CONFLICT: Final = "FieldManagerConflict"
    RESOURCE_VERSION_TOO_LARGE: Final = "ResourceVersionTooLarge"


_REASON_BY_CODE: Final = {
    400: StatusReason.BAD_REQUEST,
    401: StatusReason.UNAUTHORIZED,
    403: StatusReason.FORBIDDEN,
    404: StatusReason.NOT_FOUND,
    405: StatusReason.METHOD_NOT_ALLOWED,
    406: StatusReason.NOT_ACCEPTABLE,
    409: StatusReason.CONFLICT,
    410: StatusReason.GONE,
    413: StatusReason.REQUEST_ENTITY_TOO_LARGE,
    415: StatusReason.UNSUPPORTED_MEDIA_TYPE,
    422: StatusReason.INVALID,
    429: StatusReason.TOO_MANY_REQUESTS,
    500: StatusReason.INTERNAL_ERROR,
    503: StatusReason.SERVICE_UNAVAILABLE,
    504: StatusReason.TIMEOUT,
}


def reason_for_code(code: int) -> str:
    """The reason a client assumes for an HTTP code when the body has none (``""`` if unknown)."""
    return _REASON_BY_CODE.get(code, StatusReason.UNKNOWN)


def qualified_resource(resource: str, group: str) -> str:
    """``deployments.apps``, or ``configmaps`` for the core group (``GroupResource.String()``)."""
    return f"{resource}.{group}" if group else resource


def qualified_kind(kind: str, group: str) -> str:
    """``Widget.example.com``, or ``ConfigMap`` for the core group (``GroupKind.String()``)."""
    return f"{kind}.{group}" if group else kind


def _status_object(outcome: str) -> dict[str, Any]:
    # kube-apiserver's key order: kind, apiVersion, metadata, status, then the rest.
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": outcome}


def failure_status(
    code: int,
    reason: str,
    message: str,
    *,
    name: str | None = None,
    group: str | None = None,
    kind: str | None = None,
    uid: str | None = None,
    causes: Iterable[Mapping[str, Any] | FieldError] | None = None,
    retry_after: int | None = None,
) -> dict[str, Any]:
    """A ``Status`` with ``status: "Failure"``, keys in kube-apiserver's order.

    ``details`` is present only when one of its fields is set; empty fields are left out, as Go's
    ``omitempty`` does. ``causes`` may hold dicts or :class:`FieldError` s.
    """
    status = _status_object("Failure")
    if message:
        status["message"] = message
    if reason:
        status["reason"] = reason
    details = _details(name, group, kind, uid, causes, retry_after)
    if details:
        status["details"] = details
    if code:
        status["code"] = code
    return status


def _details(
    name: str | None,
    group: str | None,
    kind: str | None,
    uid: str | None,
    causes: Iterable[Mapping[str, Any] | FieldError] | None,
    retry_after: int | None,
) -> dict[str, Any]:
    details: dict[str, Any] = {}
    for key, value in (("name", name), ("group", group), ("kind", kind), ("uid", uid)):
        if value:
            details[key] = value
    cause_list = [_cause(c) for c in causes or ()]
    if cause_list:
        details["causes"] = cause_list
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return details


def _cause(cause: Mapping[str, Any] | FieldError) -> dict[str, Any]:
    if isinstance(cause, FieldError):
        raw: Mapping[str, Any] = cause.cause()
    else:
        raw = cause
    return {k: raw[k] for k in ("reason", "message", "field") if raw.get(k)}


def success_status(details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ``Status`` with ``status: "Success"`` (e.g. the answer to a DELETE).

    For a delete, ``details`` is ``{"name", "group", "kind": <plural resource>, "uid"}``.
    """
    status = _status_object("Success")
    if details:
        status["details"] = {k: v for k, v in details.items() if v not in (None, "", [])}
    return status


def is_status(obj: Any) -> bool:
    """Whether ``obj`` is a ``Status`` object (e.g. in a watch ``ERROR`` event)."""
    return (
        isinstance(obj, Mapping)
        and obj.get("kind") == "Status"
        and (obj.get("apiVersion") in ("v1", "meta.k8s.io/v1", None))
    )


# --- constructors mirroring apimachinery's api/errors ------------------------------------------


def _object_failure(
    code: int, reason: str, message: str, resource: str, name: str, group: str
) -> dict[str, Any]:
    # Errors about one object carry its name, group and plural resource (as "kind") in details.
    return failure_status(code, reason, message, name=name, group=group, kind=resource)


def _object_name(resource: str, name: str, group: str) -> str:
    return f"{qualified_resource(resource, group)} {go_quote(name)}"


def not_found(resource: str, name: str, *, group: str = "") -> dict[str, Any]:
    """404 ``<resource>[.<group>] "<name>" not found``."""
    message = f"{_object_name(resource, name, group)} not found"
    return _object_failure(404, StatusReason.NOT_FOUND, message, resource, name, group)


def already_exists(resource: str, name: str, *, group: str = "") -> dict[str, Any]:
    """409 AlreadyExists ``<resource> "<name>" already exists``."""
    message = f"{_object_name(resource, name, group)} already exists"
    return _object_failure(409, StatusReason.ALREADY_EXISTS, message, resource, name, group)


def conflict(resource: str, name: str, detail: str, *, group: str = "") -> dict[str, Any]:
    """409 Conflict ``Operation cannot be fulfilled on <resource> "<name>": <detail>``.

    The usual detail is ``the object has been modified; please apply your changes to the latest
    version and try again``.
    """
    message = f"Operation cannot be fulfilled on {_object_name(resource, name, group)}: {detail}"
    return _object_failure(409, StatusReason.CONFLICT, message, resource, name, group)


def apply_conflict(
    message: str, causes: Iterable[Mapping[str, Any] | FieldError]
) -> dict[str, Any]:
    """409 Conflict for server-side apply (causes of type ``FieldManagerConflict``)."""
    return failure_status(409, StatusReason.CONFLICT, message, causes=causes)


def invalid(
    kind: str, name: str, errors: Sequence[FieldError], *, group: str = ""
) -> dict[str, Any]:
    """422 Invalid ``<Kind>[.<group>] "<name>" is invalid: <errors>``, one cause per error."""
    qualified = qualified_kind(kind, group)
    message = f"{qualified} {go_quote(name)} is invalid"
    if errors:
        message += f": {aggregate_messages(errors)}"
    return failure_status(
        422, StatusReason.INVALID, message, name=name, group=group, kind=kind, causes=errors
    )


def bad_request(message: str) -> dict[str, Any]:
    """400 BadRequest with ``message``."""
    return failure_status(400, StatusReason.BAD_REQUEST, message)


def unauthorized(message: str = "") -> dict[str, Any]:
    """401 Unauthorized (message defaults to ``not authorized``, as upstream)."""
    return failure_status(401, StatusReason.UNAUTHORIZED, message or "not authorized")


def forbidden(resource: str, name: str, detail: str, *, group: str = "") -> dict[str, Any]:
    """403 ``<resource> "<name>" is forbidden: <detail>``."""
    if not resource:
        message = f"forbidden: {detail}"
    elif not name:
        message = f"{qualified_resource(resource, group)} is forbidden: {detail}"
    else:
        message = f"{_object_name(resource, name, group)} is forbidden: {detail}"
    return _object_failure(403, StatusReason.FORBIDDEN, message, resource, name, group)


def method_not_supported(resource: str, action: str, *, group: str = "") -> dict[str, Any]:
    """405 ``<action> is not supported on resources of kind "<resource>"``."""
    qualified = qualified_resource(resource, group)
    return failure_status(
        405,
        StatusReason.METHOD_NOT_ALLOWED,
        f"{action} is not supported on resources of kind {go_quote(qualified)}",
        group=group,
        kind=resource,
    )


def not_acceptable(accepted: Sequence[str]) -> dict[str, Any]:
    """406 ``only the following media types are accepted: ...``."""
    return failure_status(
        406,
        StatusReason.NOT_ACCEPTABLE,
        f"only the following media types are accepted: {', '.join(accepted)}",
    )


def gone(message: str) -> dict[str, Any]:
    """410 Gone."""
    return failure_status(410, StatusReason.GONE, message)


def resource_expired(message: str) -> dict[str, Any]:
    """410 Expired, e.g. ``too old resource version: 5 (10)`` for a watch or continue token."""
    return failure_status(410, StatusReason.EXPIRED, message)


def request_entity_too_large(message: str) -> dict[str, Any]:
    """413 ``Request entity too large: <message>``."""
    return failure_status(
        413, StatusReason.REQUEST_ENTITY_TOO_LARGE, f"Request entity too large: {message}"
    )


def unsupported_media_type(accepted: Sequence[str]) -> dict[str, Any]:
    """415 ``the body of the request was in an unknown format - accepted media types ...``."""
    return failure_status(
        415,
        StatusReason.UNSUPPORTED_MEDIA_TYPE,
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


def too_many_requests(message: str, retry_after: int | None = None) -> dict[str, Any]:
    """429 ``Too many requests: <message>`` with an optional ``retryAfterSeconds``."""
    return failure_status(
        429,
        StatusReason.TOO_MANY_REQUESTS,
        f"Too many requests: {message}",
        retry_after=retry_after,
    )


def internal_error(message: str) -> dict[str, Any]:
    """500 ``Internal error occurred: <message>``, the message repeated as a cause."""
    return failure_status(
        500,
        StatusReason.INTERNAL_ERROR,
        f"Internal error occurred: {message}",
        causes=[{"message": message}],
    )


def service_unavailable(message: str) -> dict[str, Any]:
    """503 ServiceUnavailable."""
    return failure_status(503, StatusReason.SERVICE_UNAVAILABLE, message)


def timeout(message: str, retry_after: int | None = None) -> dict[str, Any]:
    """504 ``Timeout: <message>`` with an optional ``retryAfterSeconds``."""
    return failure_status(504, StatusReason.TIMEOUT, f"Timeout: {message}", retry_after=retry_after)
