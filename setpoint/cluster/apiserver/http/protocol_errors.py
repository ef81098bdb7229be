"""Requests the HTTP parser refuses, answered with a ``Status`` as kube-apiserver's are.

Go's server reads up to 1 MiB of request line and headers (``http.DefaultMaxHeaderBytes``),
so a long ``labelSelector`` works there; aiohttp stops at 8 KiB with a plain-text 400. Here the
limits are raised to 1 MiB, and what the parser still refuses gets a JSON ``Status``: 431 for
a line or header over the limit, 405 for an unknown method (Go accepts any method token and
the API server then refuses it), 400 for anything else malformed.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, LineTooLong
from aiohttp.web_protocol import RequestHandler

from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver.status_errors import APIError

#: Request line and each header field: Go's ``DefaultMaxHeaderBytes`` (1 MiB).
MAX_HEADER_BYTES: Final = 1 << 20

_ENCODER = msgspec.json.Encoder()


def protocol_error_status(status: int, exc: BaseException | None, message: str | None) -> APIError:
    """The Status for a request the HTTP parser could not read."""
    if isinstance(exc, BadHttpMethod):
        return APIError(
            405,
            StatusReason.METHOD_NOT_ALLOWED,
            "the server does not allow this method on the requested resource",
        )
    if isinstance(exc, LineTooLong):
        return APIError(
            431,
            StatusReason.BAD_REQUEST,
            f"request header fields too large: the request line and each header may hold at "
            f"most {MAX_HEADER_BYTES} bytes",
        )
    detail = getattr(exc, "message", None) or message or "malformed HTTP request"
    reason = StatusReason.BAD_REQUEST if status < 500 else StatusReason.INTERNAL_ERROR
    return APIError(status, reason, f"malformed HTTP request: {detail}")


class StatusRequestHandler(RequestHandler):
    """aiohttp's connection handler with parser errors answered as a JSON ``Status``."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status >= 500 or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        error = protocol_error_status(status, exc, message)
        response = web.Response(
            status=error.code,
            body=_ENCODER.encode(error.to_status()),
            content_type="application/json",
        )
        response.force_close()
        return response


class StatusServer(web.Server):
    """A low-level aiohttp server whose connections use :class:`StatusRequestHandler`."""

    def __init__(self, handler: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max_line_size", MAX_HEADER_BYTES)
        kwargs.setdefault("max_field_size", MAX_HEADER_BYTES)
        super().__init__(handler, **kwargs)

    def __call__(self) -> RequestHandler:
        return StatusRequestHandler(self, loop=self._loop, **self._kwargs)
