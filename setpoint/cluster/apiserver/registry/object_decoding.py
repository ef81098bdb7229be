"""The checks kube-apiserver's decoding makes before any validation (400 BadRequest).

A body must be of the endpoint's type (``apiVersion``/``kind``, defaulted when absent), and its
``metadata`` must have the JSON types ObjectMeta decodes from; otherwise upstream answers with
encoding/json's complaint, and so does this.
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import APIError

_METADATA_STRING_FIELDS: Final = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
)
_METADATA_MAP_FIELDS: Final = ("labels", "annotations")
_METADATA_LIST_FIELDS: Final = {
    "finalizers": "[]string",
    "ownerReferences": "[]v1.OwnerReference",
    "managedFields": "[]v1.ManagedFieldsEntry",
}


#: The JSON type each checked ObjectMeta field decodes from (generation: an int, not a bool).
_METADATA_FIELD_TYPES: Final[dict[str, type]] = {
    **dict.fromkeys(_METADATA_STRING_FIELDS, str),
    **dict.fromkeys(_METADATA_MAP_FIELDS, dict),
    **dict.fromkeys(_METADATA_LIST_FIELDS, list),
    "generation": int,
}


def _json_type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _undecodable(resource: ServedResource, value: Any, key: str, go_type: str) -> APIError:
    # Upstream fails decoding into the Go type: 400 with encoding/json's complaint.
    return status_errors.bad_request(
        f'{resource.kind} in version "{resource.version}" cannot be handled as a '
        f"{resource.kind}: json: cannot unmarshal {_json_type_name(value)} into Go struct field "
        f"ObjectMeta.metadata.{key} of type {go_type}"
    )


def checked_metadata(obj: dict[str, Any], resource: ServedResource) -> dict[str, Any]:
    """``obj``'s metadata, checked to have the JSON types ObjectMeta decodes from."""
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = obj["metadata"] = {}
    if not isinstance(metadata, dict):
        raise status_errors.bad_request(
            f'{resource.kind} in version "{resource.version}" cannot be handled as a '
            f"{resource.kind}: json: cannot unmarshal {_json_type_name(metadata)} into Go "
            "struct field .metadata of type v1.ObjectMeta"
        )
    if _well_typed(metadata):
        return metadata
    for key in _METADATA_STRING_FIELDS:
        value = metadata.get(key)
        if value is not None and not isinstance(value, str):
            raise _undecodable(resource, value, key, "string")
    for key in _METADATA_MAP_FIELDS:
        value = metadata.get(key)
        if value is not None:
            if not isinstance(value, dict):
                raise _undecodable(resource, value, key, "map[string]string")
            for item in value.values():
                if not isinstance(item, str):
                    raise _undecodable(resource, item, key, "string")
    for key, go_type in _METADATA_LIST_FIELDS.items():
        value = metadata.get(key)
        if value is not None and not isinstance(value, list):
            raise _undecodable(resource, value, key, go_type)
    generation = metadata.get("generation")
    if generation is not None and (isinstance(generation, bool) or not isinstance(generation, int)):
        raise _undecodable(resource, generation, "generation", "int64")
    return metadata


def _well_typed(metadata: dict[str, Any]) -> bool:
    """One pass over the keys: whether every field :func:`checked_metadata` checks decodes.

    The common case; when it fails, the ordered checks run to name the first problem as
    upstream does.
    """
    for key, value in metadata.items():
        expected = _METADATA_FIELD_TYPES.get(key)
        if expected is None or value is None:
            continue
        if type(value) is not expected:
            return False
        if isinstance(value, dict):
            for item in value.values():
                if type(item) is not str:
                    return False
    return True


def check_type(resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
    """The body with apiVersion/kind defaulted (first, as upstream writes them); 400 when the
    body names another type."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if api_version and api_version != resource.api_version:
        raise status_errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({resource.api_version})"
        )
    if kind and kind != resource.kind:
        raise status_errors.bad_request(
            f'{kind} in version "{resource.version}" cannot be handled as a {resource.kind}: '
            f"the object provided is unrecognized (must be of type {resource.kind})"
        )
    if api_version and kind:
        return obj
    typed = {"apiVersion": resource.api_version, "kind": resource.kind}
    typed.update((key, value) for key, value in obj.items() if key not in typed)
    return typed
