"""Typed errors of the API client, each carrying the server's ``Status``.

Every non-2xx answer from the API server becomes an :class:`ApiError` subclass chosen by HTTP code
and ``reason`` (the same mapping as apimachinery's ``api/errors``), so callers write
``except NotFound:`` instead of comparing numbers. ``.status`` is the server's ``Status`` object as
a dict; when the body is not a ``Status`` (a proxy's HTML page, an empty body) a synthetic one is
built from the code, so ``.status``, ``.reason`` and ``.message`` are always filled.

Transport problems (refused connections, resets, TLS failures, timeouts) are
:class:`ConnectionFailed`; configuration problems are :class:`ConfigError`. All of them derive
from :class:`ClientError`.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "ClientError",
    "ConfigError",
    "Conflict",
    "ConnectionFailed",
    "Forbidden",
    "Gone",
    "Invalid",
    "InvalidResponse",
    "MethodNotAllowed",
    "NoKindMatch",
    "NotAcceptable",
    "NotFound",
    "RequestEntityTooLarge",
    "ServerError",
    "ServiceUnavailable",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "error_from_response",
    "error_from_status",
]

# kube-apiserver's RBAC refusal: User "u" cannot VERB resource "R[/SUB]" in API group "G" ...
# (A pattern string: re compiles and caches it at the first refusal, not at import.)
_RBAC_REFUSAL = r'cannot (\S+) resource "([^"]*)" in API group "([^"]*)"'

# Longest piece of a non-Status body quoted in a synthetic message: enough to recognise an HTML
# error page or a proxy's text without flooding logs.
MAX_QUOTED_BODY_CHARS = 512

# Reason and message apimachinery uses when a response carries no Status (errors.go,
# NewGenericServerResponse).
_REASON_BY_CODE: dict[int, tuple[str, str]] = {
    400: ("BadRequest", "the server rejected our request for an unknown reason"),
    401: ("Unauthorized", "the server has asked for the client to provide credentials"),
    403: ("Forbidden", "the server does not allow access to the requested resource"),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    406: (
        "NotAcceptable",
        "the server was unable to respond with a content type that the client supports",
    ),
    409: ("Conflict", "the server reported a conflict"),
    410: ("Gone", "the server has asked for the client to delete the requested resource"),
    413: ("RequestEntityTooLarge", "the server has rejected the request because it is too large"),
    415: (
        "UnsupportedMediaType",
        "the server was unable to respond with a content type that the client supports",
    ),
    422: ("Invalid", "the server rejected our request due to an error in our request"),
    429: (
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
    ),
    500: ("InternalError", "an error on the server has prevented the request from succeeding"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: (
        "Timeout",
        "the server was unable to return a response in the time allotted, but may "
        "still be processing the request",
    ),
}


class ClientError(Exception):
    """Base of every error raised by ``setpoint.client``."""


class ConfigError(ClientError):
    """The client configuration (kubeconfig, in-cluster files, credentials) is unusable."""


class ConnectionFailed(ClientError):
    """The request never got an HTTP answer: connection refused or reset, TLS error, timeout."""

    def __init__(self, message: str, *, method: str = "", url: str = "") -> None:
        super().__init__(message)
        self.method = method
        self.url = url


class InvalidResponse(ClientError):
    """A 2xx answer whose body is not the JSON expected (not JSON at all, or not an object)."""


class NoKindMatch(ClientError, LookupError):
    """Discovery has no resource for the requested kind (or plural) in that API version."""

    def __init__(
        self, api_version: str, kind: str, *, known_versions: tuple[str, ...] = ()
    ) -> None:
        message = f'no matches for kind "{kind}" in version "{api_version}"'
        if known_versions:
            message += f" (the server serves this kind in: {', '.join(known_versions)})"
        super().__init__(message)
        self.api_version = api_version
        self.kind = kind


class ApiError(ClientError):
    """The API server answered with a non-success HTTP code.

    ``status`` is the server's ``Status`` object (dict); ``code``, ``reason`` and ``message`` are
    read from it; ``details`` is ``status["details"]`` (``{}`` when absent).
    """

    def __init__(self, status: dict[str, Any], *, method: str = "", url: str = "") -> None:
        self.status = status
        self.method = method
        self.url = url
        super().__init__(self.message)

    @property
    def code(self) -> int:
        """The HTTP status code."""
        code = self.status.get("code")
        return code if isinstance(code, int) else 0

    @property
    def reason(self) -> str:
        """The machine-readable reason, e.g. ``NotFound``, ``AlreadyExists``, ``Expired``."""
        reason = self.status.get("reason")
        return reason if isinstance(reason, str) else ""

    @property
    def message(self) -> str:
        """The server's human-readable message."""
        message = self.status.get("message")
        return message if isinstance(message, str) else f"HTTP {self.code}"

    @property
    def details(self) -> dict[str, Any]:
        """``status.details``: name, group, kind, uid, causes, retryAfterSeconds."""
        details = self.status.get("details")
        return details if isinstance(details, dict) else {}

    @property
    def causes(self) -> list[dict[str, Any]]:
        """``status.details.causes``: ``[{"reason", "message", "field"}]`` (may be empty)."""
        causes = self.details.get("causes")
        return [c for c in causes if isinstance(c, dict)] if isinstance(causes, list) else []

    def __str__(self) -> str:
        prefix = f"{self.reason or 'Error'} ({self.code})"
        return f"{prefix}: {self.message}"


class BadRequest(ApiError):
    """400: the request is malformed (bad selector, namespace mismatch, strict decoding error)."""


class Unauthorized(ApiError):
    """401: the credentials are missing, wrong or expired."""


class Forbidden(ApiError):
    """403: RBAC or an admission plugin denies the request."""

    @property
    def missing_permission(self) -> str:
        """The RBAC rule the refusal names, as setpoint declares one
        (``Permission("apps", "deployments", ["create"])``), or '' when the message names none.
        """
        found = re.search(_RBAC_REFUSAL, self.message)
        if found is None:
            return ""
        verb, resource, group = found.groups()
        return f'Permission("{group}", "{resource}", ["{verb}"])'


class NotFound(ApiError):
    """404: the object, namespace or resource does not exist."""


class MethodNotAllowed(ApiError):
    """405: the resource does not support this verb."""


class NotAcceptable(ApiError):
    """406: the server cannot answer in the requested content type."""


class Conflict(ApiError):
    """409: a conflict: stale resourceVersion, failed precondition, or apply conflict."""


class AlreadyExists(Conflict):
    """409 with reason ``AlreadyExists``: create of an object whose name is taken."""


class Gone(ApiError):
    """410: resourceVersion or continue token too old (reason ``Expired``); relist."""


class RequestEntityTooLarge(ApiError):
    """413: the request body is too large."""


class UnsupportedMediaType(ApiError):
    """415: the patch type is not supported (e.g. strategic merge on a custom resource)."""


class Invalid(ApiError):
    """422: the object failed validation; ``causes`` names each field and reason."""


class TooManyRequests(ApiError):
    """429: the server (API Priority and Fairness) asks the client to slow down."""


class ServerError(ApiError):
    """5xx: the server failed; the request may or may not have taken effect."""


class ServiceUnavailable(ServerError):
    """503: the server is temporarily unable to serve the request."""


_CLASS_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    406: NotAcceptable,
    409: Conflict,
    410: Gone,
    413: RequestEntityTooLarge,
    415: UnsupportedMediaType,
    422: Invalid,
    429: TooManyRequests,
    503: ServiceUnavailable,
}


def _error_class(code: int, reason: str) -> type[ApiError]:
    if code == 409 and reason == "AlreadyExists":
        return AlreadyExists
    cls = _CLASS_BY_CODE.get(code)
    if cls is not None:
        return cls
    if code >= 500:
        return ServerError
    return ApiError


def error_from_status(
    status: dict[str, Any], *, code: int | None = None, method: str = "", url: str = ""
) -> ApiError:
    """Build the right :class:`ApiError` subclass from a ``Status`` dict.

    ``code`` overrides ``status["code"]`` when the HTTP code is known and the Status lacks one.
    Used for responses and for ``ERROR`` watch events (a 410 event becomes :class:`Gone`).
    """
    if code is not None and not isinstance(status.get("code"), int):
        status = {**status, "code": code}
    raw_code = status.get("code")
    http_code = raw_code if isinstance(raw_code, int) else 0
    raw_reason = status.get("reason")
    reason = raw_reason if isinstance(raw_reason, str) else ""
    return _error_class(http_code, reason)(status, method=method, url=url)


def _synthetic_status(code: int, body: bytes) -> dict[str, Any]:
    reason, default_message = _REASON_BY_CODE.get(
        code,
        ("InternalError", "an error on the server has prevented the request from succeeding")
        if code >= 500
        else ("", f"unexpected HTTP status {code}"),
    )
    text = body.decode("utf-8", errors="replace").strip()
    if text:
        if len(text) > MAX_QUOTED_BODY_CHARS:
            text = text[:MAX_QUOTED_BODY_CHARS] + "..."
        message = f"{default_message} ({text})"
    else:
        message = default_message
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def error_from_response(code: int, body: bytes, *, method: str = "", url: str = "") -> ApiError:
    """Turn a non-2xx HTTP answer into a typed error.

    A JSON ``Status`` body is used as is (its own ``code`` wins if present, else the HTTP code);
    any other body yields a synthetic Status with apimachinery's reason for the code and the
    start of the body quoted in the message.
    """
    status: dict[str, Any] | None = None
    if body:
        try:
            decoded = msgspec.json.decode(body)
        except msgspec.DecodeError:
            decoded = None
        if isinstance(decoded, dict) and decoded.get("kind") == "Status":
            status = decoded
            if not isinstance(status.get("code"), int) or status.get("code") == 0:
                status["code"] = code
    if status is None:
        status = _synthetic_status(code, body)
    return error_from_status(status, method=method, url=url)
