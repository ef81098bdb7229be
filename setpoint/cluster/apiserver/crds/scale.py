"""The ``scale`` subresource of custom resources: reading and writing the replica paths, building
the ``autoscaling/v1`` Scale, and validating the values found there
(``registry/customresource/validator.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.crds.definition import as_mapping, as_text

# Scale replicas are int32 in autoscaling/v1.
MAX_INT32: Final = 2**31 - 1


def _path_parts(json_path: str) -> list[str]:
    """``.spec.replicas`` → ``["spec", "replicas"]`` (the leading period is optional)."""
    return [part for part in json_path.removeprefix(".").split(".") if part]


def read_path(obj: Mapping[str, Any], json_path: str) -> tuple[Any, bool]:
    """The value at a simple JSON path like ``.spec.replicas`` and whether it was found."""
    current: Any = obj
    for part in _path_parts(json_path):
        if not isinstance(current, Mapping) or part not in current:
            return None, False
        current = current[part]
    return current, True


def write_path(obj: dict[str, Any], json_path: str, value: Any) -> None:
    """Set the value at a simple JSON path, creating the objects on the way."""
    parts = _path_parts(json_path)
    current = obj
    for part in parts[:-1]:
        child = current.get(part)
        if not isinstance(child, dict):
            child = current[part] = {}
        current = child
    if parts:
        current[parts[-1]] = value


_GO_TYPE_NAMES: Final = {
    str: "string",
    float: "float64",
    bool: "bool",
    dict: "map[string]interface {}",
    list: "[]interface {}",
}


def _go_plain(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (strings bare)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return fe.go_float(value)
    return str(value)


def _nested_int(obj: Mapping[str, Any], json_path: str) -> tuple[int, str | None]:
    """``unstructured.NestedInt64``: the integer (0 if absent) and the type error, if any."""
    value, found = read_path(obj, json_path)
    if not found or value is None:
        return 0, None
    if isinstance(value, bool) or not isinstance(value, int):
        accessor = "." + ".".join(_path_parts(json_path))
        go_type = _GO_TYPE_NAMES.get(type(value), "interface {}")
        problem = (
            f"{accessor} accessor error: {_go_plain(value)} is of the type {go_type}, "
            "expected int64"
        )
        return 0, problem
    return value, None


def scale_of(obj: Mapping[str, Any], scale: Mapping[str, Any]) -> dict[str, Any]:
    """The ``autoscaling/v1`` Scale of a custom resource (``scaleFromCustomResource``)."""
    spec_replicas, _ = _nested_int(obj, as_text(scale.get("specReplicasPath")))
    status_replicas, _ = _nested_int(obj, as_text(scale.get("statusReplicasPath")))
    selector = ""
    selector_path = as_text(scale.get("labelSelectorPath"))
    if selector_path:
        value, found = read_path(obj, selector_path)
        selector = value if found and isinstance(value, str) else ""
    metadata = as_mapping(obj.get("metadata"))
    scale_meta = {
        key: metadata[key]
        for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if isinstance(metadata, Mapping) and metadata.get(key)
    }
    status: dict[str, Any] = {"replicas": status_replicas}
    if selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": {"replicas": spec_replicas} if spec_replicas else {},
        "status": status,
    }


def validate_scale_paths(
    obj: Mapping[str, Any], scale: Mapping[str, Any], *, spec: bool = True
) -> list[FieldError]:
    """Replica counts at the scale paths must be non-negative int32 (``ValidateScaleSpec`` and
    ``ValidateScaleStatus``); with ``spec=False`` only the status side is checked."""
    errors: list[FieldError] = []
    paths = [as_text(scale.get("statusReplicasPath"))]
    if spec:
        paths.insert(0, as_text(scale.get("specReplicasPath")))
    for json_path in paths:
        value, problem = _nested_int(obj, json_path)
        if problem is not None:
            errors.append(fe.invalid(json_path, value, problem))
        elif value < 0:
            errors.append(fe.invalid(json_path, value, "should be a non-negative integer"))
        elif value > MAX_INT32:
            errors.append(
                fe.invalid(json_path, value, f"should be less than or equal to {MAX_INT32}")
            )
    selector_path = as_text(scale.get("labelSelectorPath"))
    if selector_path:
        value, found = read_path(obj, selector_path)
        if found and value is not None and not isinstance(value, str):
            accessor = "." + ".".join(_path_parts(selector_path))
            go_type = _GO_TYPE_NAMES.get(type(value), "int64")
            detail = (
                f"{accessor} accessor error: {_go_plain(value)} is of the type {go_type}, "
                "expected string"
            )
            errors.append(fe.invalid(selector_path, "", detail))
    return errors
