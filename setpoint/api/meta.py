"""Accessors for ``metadata`` of objects held as plain dicts (the JSON as the API sends it),
or as pydantic models (the user's CRD models, ``setpoint.kinds`` models): readers accept both
(:func:`as_mapping` turns a model into its JSON form); writers change dicts in place and models
through their ``metadata`` attribute.

Readers never fail on a missing ``metadata`` or field: they return ``None`` or an empty value,
because objects in flight (a new object before create, a watch bookmark) often lack fields.
Readers of mappings and lists return the stored object, not a copy; writers (``add_finalizer``,
``remove_finalizer``, ``set_label``...) change the dict in place and create ``metadata`` and the
field as needed.
"""

import sys
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel
    from typing_extensions import TypeIs

__all__ = [
    "add_finalizer",
    "annotations",
    "as_mapping",
    "creation_timestamp",
    "deletion_timestamp",
    "finalizers",
    "generation",
    "has_finalizer",
    "is_being_deleted",
    "is_model",
    "is_model_class",
    "labels",
    "metadata",
    "name",
    "namespace",
    "owner_references",
    "remove_finalizer",
    "resource_version",
    "set_annotation",
    "set_label",
    "uid",
]


def is_model(obj: object) -> "TypeIs[BaseModel]":
    """Whether ``obj`` is a pydantic model instance (without importing pydantic: the local
    cluster uses these helpers and must not pay for it)."""
    if type(obj) is dict:  # the common case, without pydantic's ABC instance check
        return False
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(obj, pydantic.BaseModel)


def is_model_class(obj: object) -> "TypeIs[type[BaseModel]]":
    """Whether ``obj`` is a pydantic model class (without importing pydantic, as
    :func:`is_model`)."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(obj, type) and issubclass(obj, pydantic.BaseModel)


def _type_constant(model: "BaseModel", names: tuple[str, ...]) -> str | None:
    for name in names:
        value = getattr(model, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def as_mapping(obj: "Mapping[str, Any] | BaseModel | Any") -> Mapping[str, Any]:
    """``obj`` as a JSON-shaped mapping: a mapping as is, a pydantic model dumped by alias
    (with apiVersion/kind from its class when they are class constants). Raises TypeError for
    anything else."""
    if type(obj) is dict or isinstance(obj, Mapping):
        return obj
    if is_model(obj):
        dumped: dict[str, Any] = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
        if "apiVersion" not in dumped:
            api_version = _type_constant(obj, ("api_version", "apiVersion", "__api_version__"))
            if api_version:
                dumped["apiVersion"] = api_version
        if "kind" not in dumped:
            kind = _type_constant(obj, ("kind", "__kind__"))
            if kind:
                dumped["kind"] = kind
        return dumped
    if hasattr(obj, "to_dict") and hasattr(obj, "metadata"):  # a cached object
        result: Mapping[str, Any] = obj.to_dict()
        return result
    raise TypeError(
        f"expected a Kubernetes object (a dict or a pydantic model), got {type(obj).__name__}"
    )


def metadata(obj: "Mapping[str, Any] | BaseModel") -> Mapping[str, Any]:
    """``obj["metadata"]`` (or a model's metadata as a mapping), or an empty mapping when absent
    or not an object."""
    if type(obj) is not dict and is_model(obj):  # a dict needs no call to tell
        value = getattr(obj, "metadata", None)
        if is_model(value):
            return value.model_dump(mode="json", by_alias=True, exclude_none=True)
        return value if isinstance(value, Mapping) else {}
    meta = obj.get("metadata")
    # type() first: isinstance of the Mapping ABC is a Python-level call per object read.
    return meta if type(meta) is dict or isinstance(meta, Mapping) else {}


def write_back_metadata(model: "BaseModel", new_metadata: Mapping[str, Any]) -> None:
    """Set a model's ``metadata`` from a JSON-shaped mapping (keeping the field's type)."""
    current = getattr(model, "metadata", None)
    if is_model(current):
        setattr(model, "metadata", type(current).model_validate(dict(new_metadata)))  # noqa: B010
    else:
        setattr(model, "metadata", dict(new_metadata))  # noqa: B010


def _mutable_metadata(obj: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, MutableMapping):
        raise ValueError(f"metadata must be an object, not {type(meta).__name__}")
    return meta


def _string(obj: Mapping[str, Any], field: str) -> str | None:
    value = metadata(obj).get(field)
    return value if isinstance(value, str) and value else None


def name(obj: Mapping[str, Any]) -> str | None:
    """``metadata.name``, or None when unset or empty."""
    return _string(obj, "name")


def namespace(obj: Mapping[str, Any]) -> str | None:
    """``metadata.namespace``, or None when unset or empty (cluster-scoped objects)."""
    return _string(obj, "namespace")


def uid(obj: Mapping[str, Any]) -> str | None:
    """``metadata.uid``, or None when unset."""
    return _string(obj, "uid")


def resource_version(obj: Mapping[str, Any]) -> str | None:
    """``metadata.resourceVersion`` (an opaque string), or None when unset."""
    return _string(obj, "resourceVersion")


def generation(obj: Mapping[str, Any]) -> int | None:
    """``metadata.generation``, or None when unset."""
    value = metadata(obj).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def creation_timestamp(obj: Mapping[str, Any]) -> str | None:
    """``metadata.creationTimestamp`` as sent (RFC 3339), or None."""
    return _string(obj, "creationTimestamp")


def deletion_timestamp(obj: Mapping[str, Any]) -> str | None:
    """``metadata.deletionTimestamp`` as sent (RFC 3339), or None when not being deleted."""
    return _string(obj, "deletionTimestamp")


def is_being_deleted(obj: Mapping[str, Any]) -> bool:
    """True once deletion was requested (``deletionTimestamp`` set) and finalizers hold it."""
    return deletion_timestamp(obj) is not None


def labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.labels``, or an empty mapping."""
    value = metadata(obj).get("labels")
    return value if isinstance(value, Mapping) else {}


def annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.annotations``, or an empty mapping."""
    value = metadata(obj).get("annotations")
    return value if isinstance(value, Mapping) else {}


def finalizers(obj: Mapping[str, Any]) -> list[str]:
    """``metadata.finalizers`` (a new list), or an empty list."""
    value = metadata(obj).get("finalizers")
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


def owner_references(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``metadata.ownerReferences`` (a new list of the stored dicts), or an empty list."""
    value = metadata(obj).get("ownerReferences")
    return [ref for ref in value if isinstance(ref, dict)] if isinstance(value, list) else []


def has_finalizer(obj: Mapping[str, Any], finalizer: str) -> bool:
    """Whether ``finalizer`` is in ``metadata.finalizers``."""
    return finalizer in finalizers(obj)


def add_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Append ``finalizer`` unless present; returns True when the object changed."""
    if not finalizer:
        raise ValueError("finalizer must be a non-empty string")
    meta = _mutable_metadata(obj)
    current = meta.get("finalizers")
    if current is None:
        current = meta["finalizers"] = []
    if not isinstance(current, list):
        raise ValueError("metadata.finalizers must be a list")
    if finalizer in current:
        return False
    current.append(finalizer)
    return True


def remove_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Remove every occurrence of ``finalizer``; returns True when the object changed."""
    meta = obj.get("metadata")
    if not isinstance(meta, MutableMapping):
        return False
    current = meta.get("finalizers")
    if not isinstance(current, list) or finalizer not in current:
        return False
    current[:] = [f for f in current if f != finalizer]
    return True


def _set_in(obj: MutableMapping[str, Any], field: str, key: str, value: str | None) -> bool:
    meta = _mutable_metadata(obj)
    current = meta.get(field)
    if value is None:
        if isinstance(current, MutableMapping) and key in current:
            del current[key]
            return True
        return False
    if current is None:
        current = meta[field] = {}
    if not isinstance(current, MutableMapping):
        raise ValueError(f"metadata.{field} must be an object")
    if current.get(key) == value:
        return False
    current[key] = value
    return True


def set_label(obj: MutableMapping[str, Any], key: str, value: str | None) -> bool:
    """Set (or with ``None`` remove) one label; returns True when the object changed."""
    return _set_in(obj, "labels", key, value)


def set_annotation(obj: MutableMapping[str, Any], key: str, value: str | None) -> bool:
    """Set (or with ``None`` remove) one annotation; returns True when the object changed."""
    return _set_in(obj, "annotations", key, value)
