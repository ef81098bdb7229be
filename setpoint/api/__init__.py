"""Objects and types shared by the runtime and the local cluster: pure data helpers, no I/O.

Everything here works on plain JSON-like values (dicts as the API sends them) and small frozen
dataclasses: names of types and objects (:mod:`~setpoint.api.gvk`), metadata accessors
(:mod:`~setpoint.api.meta`), owner references, conditions, label and field selectors, merge and
JSON patches, timestamps, resource versions, name validation, and the ``Status`` error object.
Both sides of the wire import it, so it behaves exactly like apimachinery where users can see it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from setpoint.api.lazy_exports import load_lazy_export

if TYPE_CHECKING:
    from setpoint.api import meta
    from setpoint.api.conditions import (
        CONDITION_FALSE,
        CONDITION_TRUE,
        CONDITION_UNKNOWN,
        find_condition,
        find_status_condition,
        is_condition_false,
        is_condition_true,
        remove_condition,
        remove_status_condition,
        set_condition,
        set_status_condition,
        status_condition_met,
    )
    from setpoint.api.field_errors import FieldError, aggregate_messages
    from setpoint.api.gvk import (
        GroupVersion,
        GroupVersionKind,
        GroupVersionResource,
        ObjectKey,
        ResourceInfo,
        parse_api_version,
    )
    from setpoint.api.meta import (
        add_finalizer,
        has_finalizer,
        is_being_deleted,
        remove_finalizer,
    )
    from setpoint.api.names import (
        validate_dns1035_label,
        validate_dns1123_label,
        validate_dns1123_subdomain,
        validate_label_value,
        validate_qualified_name,
    )
    from setpoint.api.owners import (
        AlreadyOwnedError,
        CrossNamespaceOwnerError,
        controller_of,
        controller_reference,
        is_controlled_by,
        owner_reference,
        set_controller_reference,
        set_owner_reference,
        validate_owner_references,
    )
    from setpoint.api.patch import (
        PatchError,
        PatchTestFailed,
        apply_json_patch,
        apply_merge_patch,
        create_json_patch,
        create_merge_patch,
    )
    from setpoint.api.resource_versions import format_resource_version, parse_resource_version
    from setpoint.api.selectors import FieldSelector, LabelSelector, Requirement, SelectorError
    from setpoint.api.status import (
        CauseType,
        StatusReason,
        failure_status,
        is_status,
        success_status,
    )
    from setpoint.api.times import (
        format_micro_time,
        format_time,
        normalize_micro_time,
        normalize_time,
        now_micro_time,
        now_time,
        parse_micro_time,
        parse_time,
    )

# Public name -> the module that defines it, imported on first use: a program pays only for the
# helpers it uses (setpoint run's start-up).
_LAZY_EXPORTS: dict[str, str] = {
    "meta": "setpoint.api.meta",
    "CONDITION_FALSE": "setpoint.api.conditions",
    "CONDITION_TRUE": "setpoint.api.conditions",
    "CONDITION_UNKNOWN": "setpoint.api.conditions",
    "find_condition": "setpoint.api.conditions",
    "find_status_condition": "setpoint.api.conditions",
    "is_condition_false": "setpoint.api.conditions",
    "is_condition_true": "setpoint.api.conditions",
    "remove_condition": "setpoint.api.conditions",
    "remove_status_condition": "setpoint.api.conditions",
    "set_condition": "setpoint.api.conditions",
    "set_status_condition": "setpoint.api.conditions",
    "status_condition_met": "setpoint.api.conditions",
    "FieldError": "setpoint.api.field_errors",
    "aggregate_messages": "setpoint.api.field_errors",
    "GroupVersion": "setpoint.api.gvk",
    "GroupVersionKind": "setpoint.api.gvk",
    "GroupVersionResource": "setpoint.api.gvk",
    "ObjectKey": "setpoint.api.gvk",
    "ResourceInfo": "setpoint.api.gvk",
    "parse_api_version": "setpoint.api.gvk",
    "add_finalizer": "setpoint.api.meta",
    "has_finalizer": "setpoint.api.meta",
    "is_being_deleted": "setpoint.api.meta",
    "remove_finalizer": "setpoint.api.meta",
    "validate_dns1035_label": "setpoint.api.names",
    "validate_dns1123_label": "setpoint.api.names",
    "validate_dns1123_subdomain": "setpoint.api.names",
    "validate_label_value": "setpoint.api.names",
    "validate_qualified_name": "setpoint.api.names",
    "AlreadyOwnedError": "setpoint.api.owners",
    "CrossNamespaceOwnerError": "setpoint.api.owners",
    "controller_of": "setpoint.api.owners",
    "controller_reference": "setpoint.api.owners",
    "is_controlled_by": "setpoint.api.owners",
    "owner_reference": "setpoint.api.owners",
    "set_controller_reference": "setpoint.api.owners",
    "set_owner_reference": "setpoint.api.owners",
    "validate_owner_references": "setpoint.api.owners",
    "PatchError": "setpoint.api.patch",
    "PatchTestFailed": "setpoint.api.patch",
    "apply_json_patch": "setpoint.api.patch",
    "apply_merge_patch": "setpoint.api.patch",
    "create_json_patch": "setpoint.api.patch",
    "create_merge_patch": "setpoint.api.patch",
    "format_resource_version": "setpoint.api.resource_versions",
    "parse_resource_version": "setpoint.api.resource_versions",
    "FieldSelector": "setpoint.api.selectors",
    "LabelSelector": "setpoint.api.selectors",
    "Requirement": "setpoint.api.selectors",
    "SelectorError": "setpoint.api.selectors",
    "CauseType": "setpoint.api.status",
    "StatusReason": "setpoint.api.status",
    "failure_status": "setpoint.api.status",
    "is_status": "setpoint.api.status",
    "success_status": "setpoint.api.status",
    "format_micro_time": "setpoint.api.times",
    "format_time": "setpoint.api.times",
    "normalize_micro_time": "setpoint.api.times",
    "normalize_time": "setpoint.api.times",
    "now_micro_time": "setpoint.api.times",
    "now_time": "setpoint.api.times",
    "parse_micro_time": "setpoint.api.times",
    "parse_time": "setpoint.api.times",
}

__all__ = [
    "CONDITION_FALSE",
    "CONDITION_TRUE",
    "CONDITION_UNKNOWN",
    "AlreadyOwnedError",
    "CauseType",
    "CrossNamespaceOwnerError",
    "FieldError",
    "FieldSelector",
    "GroupVersion",
    "GroupVersionKind",
    "GroupVersionResource",
    "LabelSelector",
    "ObjectKey",
    "PatchError",
    "PatchTestFailed",
    "Requirement",
    "ResourceInfo",
    "SelectorError",
    "StatusReason",
    "add_finalizer",
    "aggregate_messages",
    "apply_json_patch",
    "apply_merge_patch",
    "controller_of",
    "controller_reference",
    "create_json_patch",
    "create_merge_patch",
    "failure_status",
    "find_condition",
    "find_status_condition",
    "format_micro_time",
    "format_resource_version",
    "format_time",
    "has_finalizer",
    "is_being_deleted",
    "is_condition_false",
    "is_condition_true",
    "is_controlled_by",
    "is_status",
    "meta",
    "normalize_micro_time",
    "normalize_time",
    "now_micro_time",
    "now_time",
    "owner_reference",
    "parse_api_version",
    "parse_micro_time",
    "parse_resource_version",
    "parse_time",
    "remove_condition",
    "remove_finalizer",
    "remove_status_condition",
    "set_condition",
    "set_controller_reference",
    "set_owner_reference",
    "set_status_condition",
    "status_condition_met",
    "success_status",
    "validate_dns1035_label",
    "validate_dns1123_label",
    "validate_dns1123_subdomain",
    "validate_label_value",
    "validate_owner_references",
    "validate_qualified_name",
]


def __getattr__(name: str) -> Any:
    return load_lazy_export(__name__, _LAZY_EXPORTS, globals(), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_EXPORTS})
