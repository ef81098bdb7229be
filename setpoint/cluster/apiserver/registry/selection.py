"""Which stored objects a list or watch selects: label and field selectors on stored JSON.

Label selectors decode only ``metadata.labels`` (msgspec skips the rest), so selecting among
many stored objects stays cheap; field selectors read the few fields each resource supports.
"""

from __future__ import annotations

from typing import Any

import msgspec

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.list_options import ListOptions
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

_DECODER = msgspec.json.Decoder()


class _MetaOnly(msgspec.Struct):
    """The part of an object a label selector reads (decoding skips everything else)."""

    labels: dict[str, str] | None = None


class _LabelsView(msgspec.Struct):
    metadata: _MetaOnly = msgspec.field(default_factory=_MetaOnly)


_LABELS_DECODER = msgspec.json.Decoder(_LabelsView)


def decode(value: bytes) -> dict[str, Any]:
    """A stored object as a fresh dict."""
    obj: dict[str, Any] = _DECODER.decode(value)
    return obj


def labels_of(value: bytes) -> dict[str, str]:
    """Only the labels of a stored object (cheap: the rest is skipped)."""
    try:
        return _LABELS_DECODER.decode(value).metadata.labels or {}
    except msgspec.ValidationError:
        # Not a map of strings (never stored by this server, but be lenient on read).
        labels = (decode(value).get("metadata") or {}).get("labels")
        return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def object_fields(resource: ServedResource, obj: dict[str, Any], key: str) -> dict[str, str]:
    """The field-selector values of an object (metadata.name/namespace plus the kind's own)."""
    metadata = obj.get("metadata") or {}
    fields = {
        "metadata.name": str(metadata.get("name", "")),
        "metadata.namespace": str(metadata.get("namespace", "")) if resource.namespaced else "",
    }
    for name, getter in resource.field_selectors.items():
        fields[name] = getter(obj)
    return fields


def check_field_selector(resource: ServedResource, options: ListOptions) -> None:
    """400 for field-selector fields the resource does not support (upstream's wording)."""
    if options.field_selector is None:
        return
    for name, _operator, _value in options.field_selector.requirements:
        if name in ("metadata.name", "metadata.namespace") or name in resource.field_selectors:
            continue
        if resource.is_custom:
            raise status_errors.bad_request(
                f'"{name}" is not a known field selector: only "metadata.name", '
                '"metadata.namespace"'
            )
        raise status_errors.bad_request(f"field label not supported: {name}")


class Matcher:
    """Decides whether a stored object is selected by a list or watch's selectors."""

    def __init__(self, resource: ServedResource, options: ListOptions) -> None:
        self._resource = resource
        self._labels = options.label_selector
        self._fields = options.field_selector
        self.selects_all = self._labels is None and self._fields is None

    def matches(self, key: str, value: bytes, obj: dict[str, Any] | None = None) -> bool:
        """Whether the object (JSON ``value``; ``obj`` if already decoded) is selected."""
        if self.selects_all:
            return True
        if self._labels is not None:
            labels = (obj.get("metadata") or {}).get("labels") if obj is not None else None
            if obj is None:
                labels = labels_of(value)
            if not self._labels.matches(labels or {}):
                return False
        if self._fields is not None:
            if obj is None:
                obj = decode(value)
            if not self._fields.matches(object_fields(self._resource, obj, key)):
                return False
        return True
