"""Mapping of HTTP answers to typed errors."""

from __future__ import annotations

import json

import pytest

from setpoint.client import errors
from setpoint.client.errors import error_from_response, error_from_status


def _status(code: int, reason: str, message: str = "m", **details: object) -> bytes:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (400, "BadRequest", errors.BadRequest),
        (401, "Unauthorized", errors.Unauthorized),
        (403, "Forbidden", errors.Forbidden),
        (404, "NotFound", errors.NotFound),
        (405, "MethodNotAllowed", errors.MethodNotAllowed),
        (409, "Conflict", errors.Conflict),
        (409, "AlreadyExists", errors.AlreadyExists),
        (410, "Expired", errors.Gone),
        (413, "RequestEntityTooLarge", errors.RequestEntityTooLarge),
        (415, "UnsupportedMediaType", errors.UnsupportedMediaType),
        (422, "Invalid", errors.Invalid),
        (429, "TooManyRequests", errors.TooManyRequests),
        (500, "InternalError", errors.ServerError),
        (503, "ServiceUnavailable", errors.ServiceUnavailable),
        (504, "Timeout", errors.ServerError),
    ],
)
def test_status_bodies_map_to_typed_errors(code: int, reason: str, cls: type) -> None:
    error = error_from_response(code, _status(code, reason, "the message"))
    assert type(error) is cls
    assert error.code == code
    assert error.reason == reason
    assert error.message == "the message"
    assert error.status["kind"] == "Status"


def test_already_exists_is_a_conflict() -> None:
    error = error_from_response(409, _status(409, "AlreadyExists", 'configmaps "x" already exists'))
    assert isinstance(error, errors.Conflict)
    assert str(error) == 'AlreadyExists (409): configmaps "x" already exists'


def test_invalid_carries_causes() -> None:
    causes = [{"reason": "FieldValueInvalid", "message": "bad", "field": "spec.size"}]
    error = error_from_response(
        422, _status(422, "Invalid", "w is invalid", name="w", kind="widgets", causes=causes)
    )
    assert isinstance(error, errors.Invalid)
    assert error.causes == causes
    assert error.details["name"] == "w"


def test_non_status_body_gets_a_synthetic_status() -> None:
    error = error_from_response(502, b"<html>Bad Gateway</html>", method="GET", url="http://h/x")
    assert isinstance(error, errors.ServerError)
    assert error.code == 502
    assert error.reason == "InternalError"
    assert "<html>Bad Gateway</html>" in error.message
    assert error.url == "http://h/x"


def test_empty_body_uses_the_reason_of_the_code() -> None:
    error = error_from_response(404, b"")
    assert isinstance(error, errors.NotFound)
    assert error.reason == "NotFound"
    assert error.message == "the server could not find the requested resource"


def test_long_non_status_body_is_truncated() -> None:
    error = error_from_response(400, b"x" * 10_000)
    assert len(error.message) < 1000
    assert error.message.endswith("...)")


def test_status_without_code_takes_the_http_code() -> None:
    body = json.dumps(
        {"kind": "Status", "status": "Failure", "reason": "Forbidden", "message": "no"}
    ).encode()
    error = error_from_response(403, body)
    assert isinstance(error, errors.Forbidden)
    assert error.code == 403


def test_watch_error_event_status_becomes_gone() -> None:
    status = json.loads(_status(410, "Expired", "too old resource version: 1 (5)"))
    error = error_from_status(status)
    assert isinstance(error, errors.Gone)
    assert "too old" in str(error)


def test_all_client_errors_share_a_base() -> None:
    assert issubclass(errors.ApiError, errors.ClientError)
    assert issubclass(errors.ConnectionFailed, errors.ClientError)
    assert issubclass(errors.ConfigError, errors.ClientError)
    assert issubclass(errors.NoKindMatch, errors.ClientError)


def test_undecodable_bodies_are_client_errors() -> None:
    from setpoint.client import json_codec

    with pytest.raises(errors.InvalidResponse, match="<html>"):
        json_codec.decode(b"<html>proxy error</html>")
    assert issubclass(errors.InvalidResponse, errors.ClientError)
