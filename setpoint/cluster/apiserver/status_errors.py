"""API errors as kube-apiserver reports them: a ``Status`` body with a code, reason and message.

Handlers raise :class:`APIError`; the HTTP layer turns it into the response. The constructors
mirror ``k8s.io/apimachinery/pkg/api/errors`` so that clients which match on reasons or on
message text (kubectl, Kopf, the Python clients) behave as against a real cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from setpoint.api import status as api_status
from setpoint.api.field_errors import FieldError, go_quote
from setpoint.api.status import StatusReason

#: The cause a write into a terminating namespace is refused with.
CAUSE_NAMESPACE_TERMINATING = "NamespaceTerminating"


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

    @classmethod
    def from_status(cls, status: dict[str, Any]) -> APIError:
        """The error of a failure ``Status`` built by :mod:`setpoint.api.status`."""
        return cls(
            status["code"], status["reason"], status["message"], details=status.get("details")
        )

    def to_status(self) -> dict[str, Any]:
        """The ``Status`` object, ready to encode."""
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
        }
        # Both are ``omitempty`` in metav1.Status: an empty one is left out, not written "".
        if self.message:
            status["message"] = self.message
        if self.reason:
            status["reason"] = self.reason
        if self.details is not None:
            status["details"] = self.details
        status["code"] = self.code
        return status


def not_found(group: str, plural: str, name: str) -> APIError:
    """404 NotFound: ``configmaps "x" not found``."""
    return APIError.from_status(api_status.not_found(plural, name, group=group))


def already_exists(group: str, plural: str, name: str) -> APIError:
    """409 AlreadyExists: ``configmaps "x" already exists``."""
    return APIError.from_status(api_status.already_exists(plural, name, group=group))


def conflict(group: str, plural: str, name: str, why: str) -> APIError:
    """409 Conflict: ``Operation cannot be fulfilled on configmaps "x": <why>``."""
    return APIError.from_status(api_status.conflict(plural, name, why, group=group))


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def stale_resource_version(group: str, plural: str, name: str) -> APIError:
    """The 409 an update with an old ``resourceVersion`` gets."""
    return conflict(group, plural, name, OBJECT_MODIFIED)


def invalid(group: str, kind: str, name: str, errors: Sequence[FieldError]) -> APIError:
    """422 Invalid with one cause per field: ``ConfigMap "x" is invalid: <errors>``.

    Empty ``name`` and ``group`` are left out of the details (Go's omitempty), as upstream.
    """
    return APIError.from_status(api_status.invalid(kind, name, errors, group=group))


def bad_request(message: str) -> APIError:
    """400 BadRequest with a free-form message."""
    return APIError(400, StatusReason.BAD_REQUEST, message)


def forbidden(
    group: str,
    plural: str,
    name: str,
    why: str,
    causes: Sequence[dict[str, str]] | None = None,
) -> APIError:
    """403 Forbidden: ``configmaps "x" is forbidden: <why>``."""
    resource = api_status.qualified_resource(plural, group)
    subject = f"{resource} {go_quote(name)}" if name else resource
    status = api_status.failure_status(
        403,
        StatusReason.FORBIDDEN,
        f"{subject} is forbidden: {why}",
        name=name,
        group=group,
        kind=plural,
        causes=causes,
    )
    return APIError.from_status(status)


def method_not_allowed(group: str, plural: str, verb: str) -> APIError:
    """405 MethodNotAllowed: ``<verb> is not supported on resources of kind "x"``."""
    return APIError.from_status(api_status.method_not_supported(plural, verb, group=group))


def unsupported_media_type(content_type: str, accepted: Sequence[str]) -> APIError:
    """415: the body's media type is not one this endpoint decodes."""
    return APIError(
        415,
        StatusReason.UNSUPPORTED_MEDIA_TYPE,
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
        details={"causes": [{"reason": "UnexpectedServerResponse", "message": content_type}]}
        if content_type
        else None,
    )


def not_acceptable(accepted: Sequence[str]) -> APIError:
    """406: none of the client's Accept types can be produced."""
    return APIError.from_status(api_status.not_acceptable(accepted))


def expired(message: str) -> APIError:
    """410 Expired (an old resourceVersion or continue token)."""
    return APIError.from_status(api_status.resource_expired(message))


def too_old_resource_version(requested: int, oldest: int) -> APIError:
    """410 Expired for a watch or list from a compacted revision."""
    return expired(f"too old resource version: {requested} ({oldest})")


def request_entity_too_large(limit: int) -> APIError:
    """413 for a body above the size limit."""
    return APIError.from_status(api_status.request_entity_too_large(f"limit is {limit}"))


def unauthorized() -> APIError:
    """401 for a request without a valid bearer token."""
    return APIError(401, StatusReason.UNAUTHORIZED, "Unauthorized")


def path_not_found() -> APIError:
    """404 for a path that names no endpoint."""
    return APIError(404, StatusReason.NOT_FOUND, "the server could not find the requested resource")


def internal_error(text: str) -> APIError:
    """500 InternalError: ``Internal error occurred: <text>``."""
    return APIError.from_status(api_status.internal_error(text))
