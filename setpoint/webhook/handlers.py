"""What the server calls: an async function from :class:`AdmissionRequest` to
:class:`AdmissionResponse` — a raw handler, or a typed defaulter/validator."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from setpoint.webhook.review import AdmissionRequest, AdmissionResponse, Denied

#: A raw handler: the whole request in, the response out (sync or async).
AdmissionHandler = Callable[[AdmissionRequest], Awaitable[AdmissionResponse]]


async def call_maybe_async(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, awaited when it returns an awaitable."""
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def decode_typed(model: type[BaseModel], obj: dict[str, Any] | None, what: str) -> BaseModel:
    """``obj`` as an instance of ``model``; :class:`Denied` (400) when it does not fit."""
    if obj is None:
        raise Denied(f"the request has no {what}", reason="BadRequest", code=400)
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first.get("loc", ()))
        raise Denied(
            f"cannot decode the {what} as {model.__name__}: {location}: {first.get('msg')}",
            reason="BadRequest",
            code=400,
        ) from None


def as_warnings(value: Any) -> list[str]:
    """A handler's returned warnings: None, one string, or an iterable of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(item) for item in value]


def one_line(exc: BaseException) -> str:
    """``TypeError: x`` on one line: what the API server passes on to the client."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
