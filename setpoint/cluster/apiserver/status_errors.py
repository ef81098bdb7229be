"""API errors as kube-apiserver reports them: a ``Status`` body with a code, reason and message.

Handlers raise :class:`APIError`; the HTTP layer turns it into the response. The constructors
mirror ``k8s.io/apimachinery/pkg/api/errors`` so that clients which match on reasons or on
message text (kubectl, Kopf, the Python clients) behave as against a real cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from setpoint.api.field_errors import FieldError, go_quote
from setpoint.api.field_errors import aggregate_messages as aggregate_message

REASON_BAD_REQUEST = "BadRequest"
REASON_UNAUTHORIZED = "Unauthorized"
REASON_FORBIDDEN = "Forbidden"
REASON_NOT_FOUND = "NotFound"
REASON_METHOD_NOT_ALLOWED = "MethodNotAllowed"
REASON_NOT_ACCEPTABLE = "NotAcceptable"
REASON_ALREADY_EXISTS = "AlreadyExists"
REASON_CONFLICT = "Conflict"
REASON_EXPIRED = "Expired"
REASON_GONE = "Gone"
REASON_REQUEST_ENTITY_TOO_LARGE = "RequestEntityTooLarge"
REASON_UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType"
REASON_INVALID = "Invalid"
REASON_INTERNAL_ERROR = "InternalError"
REASON_TIMEOUT = "Timeout"

CAUSE_NAMESPACE_TERMINATING = "NamespaceTerminating"
CAUSE_FIELD_VALUE_INVALID = "FieldValueInvalid"
CAUSE_FIELD_VALUE_REQUIRED = "FieldValueRequired"
CAUSE_FIELD_VALUE_FORBIDDEN = "FieldValueForbidden"
CAUSE_FIELD_VALUE_NOT_SUPPORTED = "FieldValueNotSupported"
CAUSE_UNEXPECTED_SERVER_RESPONSE = "UnexpectedServerResponse"


class APIError(Exception):
    """A failure answered with a ``Status`` body (``status: Failure``)."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def to_status(self) -> dict[str, Any]:
        """The ``Status`` object, ready to encode."""
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            status["details"] = self.details
        status["code"] = self.code
        return status


def _details(
    name: str, group: str, kind: str, causes: Sequence[dict[str, str]] | None = None
) -> dict[str, Any]:
    """``StatusDetails`` with empty fields left out, as Go's omitempty does."""
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    if causes:
        details["causes"] = list(causes)
    return details


def qualified_resource(group: str, plural: str) -> str:
    """``configmaps`` or ``widgets.example.com``: a GroupResource as Go prints it."""
    return f"{plural}.{group}" if group else plural


def qualified_kind(group: str, kind: str) -> str:
    """``ConfigMap`` or ``Widget.example.com``: a GroupKind as Go prints it."""
    return f"{kind}.{group}" if group else kind


def not_found(group: str, plural: str, name: str) -> APIError:
    """404 NotFound: ``configmaps "x" not found``."""
    return APIError(
        404,
        REASON_NOT_FOUND,
        f"{qualified_resource(group, plural)} {go_quote(name)} not found",
        details=_details(name, group, plural),
    )


def already_exists(group: str, plural: str, name: str) -> APIError:
    """409 AlreadyExists: ``configmaps "x" already exists``."""
    return APIError(
        409,
        REASON_ALREADY_EXISTS,
        f"{qualified_resource(group, plural)} {go_quote(name)} already exists",
        details=_details(name, group, plural),
    )


def conflict(group: str, plural: str, name: str, why: str) -> APIError:
    """409 Conflict: ``Operation cannot be fulfilled on configmaps "x": <why>``."""
    return APIError(
        409,
        REASON_CONFLICT,
        f"Operation cannot be fulfilled on {qualified_resource(group, plural)} "
        f"{go_quote(name)}: {why}",
        details=_details(name, group, plural),
    )


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def stale_resource_version(group: str, plural: str, name: str) -> APIError:
    """The 409 an update with an old ``resourceVersion`` gets."""
    return conflict(group, plural, name, OBJECT_MODIFIED)


def invalid(group: str, kind: str, name: str, errors: Sequence[FieldError]) -> APIError:
    """422 Invalid with one cause per field: ``ConfigMap "x" is invalid: <errors>``."""
    message = f"{qualified_kind(group, kind)} {go_quote(name)} is invalid"
    if errors:
        message += f": {aggregate_message(errors)}"
    details: dict[str, Any] = {"name": name, "group": group, "kind": kind}
    details["causes"] = [error.cause() for error in errors]
    return APIError(422, REASON_INVALID, message, details=details)


def bad_request(message: str) -> APIError:
    """400 BadRequest with a free-form message."""
    return APIError(400, REASON_BAD_REQUEST, message)


def forbidden(
    group: str,
    plural: str,
    name: str,
    why: str,
    causes: Sequence[dict[str, str]] | None = None,
) -> APIError:
    """403 Forbidden: ``configmaps "x" is forbidden: <why>``."""
    resource = qualified_resource(group, plural)
    subject = f"{resource} {go_quote(name)}" if name else resource
    return APIError(
        403,
        REASON_FORBIDDEN,
        f"{subject} is forbidden: {why}",
        details=_details(name, group, plural, causes),
    )


def method_not_allowed(group: str, plural: str, verb: str) -> APIError:
    """405 MethodNotAllowed: ``<verb> is not supported on resources of kind "x"``."""
    return APIError(
        405,
        REASON_METHOD_NOT_ALLOWED,
        f"{verb} is not supported on resources of kind "
        f"{go_quote(qualified_resource(group, plural))}",
        details=_details("", group, plural),
    )


def unsupported_media_type(content_type: str, accepted: Sequence[str]) -> APIError:
    """415: the body's media type is not one this endpoint decodes."""
    return APIError(
        415,
        REASON_UNSUPPORTED_MEDIA_TYPE,
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
        details={"causes": [{"reason": "UnexpectedServerResponse", "message": content_type}]}
        if content_type
        else None,
    )


def not_acceptable(accepted: Sequence[str]) -> APIError:
    """406: none of the client's Accept types can be produced."""
    return APIError(
        406,
        REASON_NOT_ACCEPTABLE,
        f"only the following media types are accepted: {', '.join(accepted)}",
    )


def expired(message: str) -> APIError:
    """410 Expired (an old resourceVersion or continue token)."""
    return APIError(410, REASON_EXPIRED, message)


def too_old_resource_version(requested: int, oldest: int) -> APIError:
    """410 Expired for a watch or list from a compacted revision."""
    return expired(f"too old resource version: {requested} ({oldest})")


def request_entity_too_large(limit: int) -> APIError:
    """413 for a body above the size limit."""
    return APIError(
        413,
        REASON_REQUEST_ENTITY_TOO_LARGE,
        f"Request entity too large: limit is {limit}",
    )


def unauthorized() -> APIError:
    """401 for a request without a valid bearer token."""
    return APIError(401, REASON_UNAUTHORIZED, "Unauthorized")


def path_not_found() -> APIError:
    """404 for a path that names no endpoint."""
    return APIError(404, REASON_NOT_FOUND, "the server could not find the requested resource")


def internal_error(text: str) -> APIError:
    """500 InternalError: ``Internal error occurred: <text>``."""
    return APIError(
        500,
        REASON_INTERNAL_ERROR,
        f"Internal error occurred: {text}",
        details={"causes": [{"message": text}]},
    )
