"""Objects and types shared by the runtime and the local cluster: pure data helpers, no I/O.

Everything here works on plain JSON-like values (dicts as the API sends them) and small frozen
dataclasses: names of types and objects (:mod:`~setpoint.api.gvk`), metadata accessors
(:mod:`~setpoint.api.meta`), owner references, conditions, label and field selectors, merge and
JSON patches, timestamps, resource versions, name validation, and the ``Status`` error object.
Both sides of the wire import it, so it behaves exactly like apimachinery where users can see it.
"""

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
from setpoint.api.status import CauseType, StatusReason, failure_status, is_status, success_status
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
