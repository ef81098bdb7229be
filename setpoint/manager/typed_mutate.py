"""``create_or_update`` / ``create_or_patch`` with a model: ``mutate`` edits a model, and its
edits are carried back into the dict that those functions compare and write.

They tell a field ``mutate`` edited in place from one it replaced (see
:func:`setpoint.controller.create_or_update.differs`): a key deleted from an edited mapping is
a change, while what the server defaulted inside a replaced one is not. The same holds here by
identity of the model's parts: a part still the object decoded from the current dict is synced
into that dict (deleted fields deleted); a part ``mutate`` assigned anew becomes a new dict.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

__all__ = ["model_mutate"]


def _ids(value: Any, found: set[int]) -> None:
    """The ids of every model, list and dict inside ``value``."""
    if isinstance(value, BaseModel):
        found.add(id(value))
        for name in type(value).model_fields:
            _ids(getattr(value, name), found)
        for extra in (value.__pydantic_extra__ or {}).values():
            _ids(extra, found)
    elif isinstance(value, list | dict):
        found.add(id(value))
        for item in value.values() if isinstance(value, dict) else value:
            _ids(item, found)


def _fresh(value: Any) -> Any:
    if isinstance(value, BaseModel):  # serialized as the client sends models
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [_fresh(item) for item in value]
    if isinstance(value, dict):
        return {key: _fresh(item) for key, item in value.items()}
    return to_jsonable_python(value, by_alias=True)


def _fields(model: BaseModel) -> dict[str, Any]:
    """The JSON keys of ``model`` and their values: the fields read or set, and those whose
    default was edited in place (an item appended to a default empty list)."""
    out: dict[str, Any] = {}
    fields_set = model.model_fields_set
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        if name in fields_set or value != field.get_default(call_default_factory=True):
            out[field.alias or name] = value
    out.update(model.__pydantic_extra__ or {})
    return out


def _convert(value: Any, target: Any, originals: set[int]) -> Any:
    if id(value) not in originals:
        return _fresh(value)
    if isinstance(value, BaseModel) and isinstance(target, dict):
        _sync(target, _fields(value), originals)
        return target
    if isinstance(value, dict) and isinstance(target, dict):
        _sync(target, value, originals)
        return target
    if isinstance(value, list) and isinstance(target, list) and len(value) == len(target):
        for index, item in enumerate(value):
            target[index] = _convert(item, target[index], originals)
        return target
    return _fresh(value)


def _sync(target: dict[str, Any], values: dict[str, Any], originals: set[int]) -> None:
    for key in [key for key in target if key not in values]:
        del target[key]
    for key, value in values.items():
        target[key] = _convert(value, target.get(key), originals)


def model_mutate(
    model: type[BaseModel], mutate: Callable[[Any], Awaitable[None] | None]
) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """A ``mutate`` on dicts that runs ``mutate`` on ``model`` instances decoded from them."""

    async def on_dict(obj: dict[str, Any]) -> None:
        typed = model.model_validate(obj)
        originals: set[int] = set()
        _ids(typed, originals)
        outcome = mutate(typed)
        if inspect.isawaitable(outcome):
            await outcome
        _sync(obj, _fields(typed), originals)

    return on_dict
