"""Objects as plain dicts, or as pydantic models.

Reads return dicts unless a model is asked for: a dict carries every field the server sent,
including fields newer than any model, it decodes 20-50x faster with msgspec than the official
client's models (``shared/reference/python-clients.md``), and it works with any server version.
Models are for what the user wants typed: their own CRDs, and the built-in kinds of
``setpoint.models``, which keep unknown fields (``extra="allow"``) so a read-modify-write loses
nothing. Wherever the client takes an object it accepts a pydantic ``BaseModel`` (dumped with
``by_alias=True, exclude_none=True``); when it was given a model instance or class, it returns
instances of that model, decoded from the server's answer. pydantic is imported only by the
caller's models: an operator that uses dicts never loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from setpoint.api.meta import is_model

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ObjectLike", "as_dict", "model_type_of", "static_type_fields", "to_model"]

ObjectLike: TypeAlias = "Mapping[str, Any] | BaseModel"
ModelT = TypeVar("ModelT", bound="BaseModel")


def as_dict(obj: ObjectLike) -> dict[str, Any]:
    """A JSON-ready dict of ``obj``: a shallow copy of a mapping, or a dumped model."""
    if is_model(obj):
        dumped = dict(obj.model_dump(mode="json", by_alias=True, exclude_none=True))
        if "apiVersion" not in dumped or "kind" not in dumped:
            # Models may declare their type as class variables rather than fields.
            try:
                api_version, kind = static_type_fields(type(obj))
            except ValueError:
                return dumped
            dumped = {"apiVersion": api_version, "kind": kind, **dumped}
        return dumped
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(
        f"expected a Kubernetes object (a dict or a pydantic model), got {type(obj).__name__}"
    )


def model_type_of(obj: object) -> type[BaseModel] | None:
    """The model class to decode answers into: the class of a model instance, else None."""
    if is_model(obj):
        return type(obj)
    return None


def to_model(data: dict[str, Any], model: type[ModelT]) -> ModelT:
    """Decode a server answer into the user's model."""
    return model.model_validate(data)


def _field_default(model: type[BaseModel], names: tuple[str, ...]) -> str | None:
    for field_name, info in model.model_fields.items():
        if field_name in names or info.alias in names:
            default = info.default
            if isinstance(default, str) and default:
                return default
    return None


def _class_constant(model: type[BaseModel], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = getattr(model, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def static_type_fields(model: type[BaseModel]) -> tuple[str, str]:
    """``(apiVersion, kind)`` of a model class.

    Read from the defaults of its ``apiVersion``/``kind`` fields, else from class variables
    (``api_version``/``apiVersion``/``__api_version__`` and ``kind``/``__kind__``).
    Raises ``ValueError`` naming the model when it declares neither.
    """
    api_version = _field_default(model, ("apiVersion", "api_version")) or _class_constant(
        model, ("api_version", "apiVersion", "__api_version__")
    )
    kind = _field_default(model, ("kind",)) or _class_constant(model, ("kind", "__kind__"))
    if api_version is None or kind is None:
        raise ValueError(
            f"model {model.__name__} must give apiVersion and kind default values "
            "to be used without an object"
        )
    return api_version, kind
