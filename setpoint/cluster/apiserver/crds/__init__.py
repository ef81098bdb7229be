"""CustomResourceDefinitions (``apiextensions.k8s.io/v1``) as kube-apiserver 1.32 handles them.

The API server calls, for a CRD write::

    crd = default_crd(body)                       # singular, listKind, conversion, storedVersions
    errors = validate_crd(crd, old=stored_or_None) # 422 Invalid if any
    accepted, conditions = accept_names(crd, other_crds, now=timestamp)

and then serves each of :func:`resource_infos` (one per served version) at once. For custom
resources it uses :func:`version_schema` / :func:`compiled_schema` (whose ``normalize``,
``validate`` and ``validate_status`` do the schema work), :func:`storage_version`,
:func:`scale_subresource` with :func:`read_path` / :func:`write_path`, :func:`scale_of` and
:func:`validate_scale_paths`, :func:`printer_columns`, :func:`selectable_fields`,
:func:`deprecation_warning` and :func:`versions_by_priority` (discovery order).

Paths and messages mirror ``apiextensions-apiserver`` (``apis/apiextensions/validation``,
``v1/defaults.go``, ``controller/status/naming_controller.go``,
``controller/establish``, ``registry/customresource/validator.go``), including its habit of
reporting a schema shared by all versions under ``spec.validation`` (the internal version hoists
identical per-version schemas there before validating).

The package has one module per concern: :mod:`.definition` (constants and field readers),
:mod:`.defaulting`, :mod:`.versions`, :mod:`.discovery`, :mod:`.naming`, :mod:`.validation`
(with :mod:`.selectable_fields` and :mod:`.api_approval`) and :mod:`.scale`; everything the
server uses is importable from here.
"""

from setpoint.cluster.apiserver.crds.api_approval import API_APPROVAL_ANNOTATION
from setpoint.cluster.apiserver.crds.defaulting import default_crd, record_storage_version
from setpoint.cluster.apiserver.crds.definition import CLEANUP_FINALIZER, GROUP, KIND
from setpoint.cluster.apiserver.crds.discovery import (
    DEFAULT_PRINTER_COLUMNS,
    printer_columns,
    resource_infos,
)
from setpoint.cluster.apiserver.crds.naming import (
    ESTABLISHED,
    NAMES_ACCEPTED,
    TERMINATING,
    accept_names,
    find_condition,
    set_condition,
    terminating_condition,
)
from setpoint.cluster.apiserver.crds.scale import (
    MAX_INT32,
    read_path,
    scale_of,
    validate_scale_paths,
    write_path,
)
from setpoint.cluster.apiserver.crds.selectable_fields import (
    MAX_SELECTABLE_FIELDS,
    selectable_fields,
)
from setpoint.cluster.apiserver.crds.validation import (
    CONVERSION_REVIEW_VERSIONS,
    CONVERSION_STRATEGIES,
    MAX_DEPRECATION_WARNING_LENGTH,
    PRINTER_COLUMN_FORMATS,
    PRINTER_COLUMN_TYPES,
    SCOPES,
    validate_crd,
    validate_names,
)
from setpoint.cluster.apiserver.crds.versions import (
    compare_kube_versions,
    compiled_schema,
    deprecation_warning,
    find_version,
    has_status_subresource,
    is_namespaced,
    scale_subresource,
    served_versions,
    storage_version,
    version_schema,
    version_subresources,
    versions_by_priority,
)

__all__ = [
    "API_APPROVAL_ANNOTATION",
    "CLEANUP_FINALIZER",
    "CONVERSION_REVIEW_VERSIONS",
    "CONVERSION_STRATEGIES",
    "DEFAULT_PRINTER_COLUMNS",
    "ESTABLISHED",
    "GROUP",
    "KIND",
    "MAX_DEPRECATION_WARNING_LENGTH",
    "MAX_INT32",
    "MAX_SELECTABLE_FIELDS",
    "NAMES_ACCEPTED",
    "PRINTER_COLUMN_FORMATS",
    "PRINTER_COLUMN_TYPES",
    "SCOPES",
    "TERMINATING",
    "accept_names",
    "compare_kube_versions",
    "compiled_schema",
    "default_crd",
    "deprecation_warning",
    "find_condition",
    "find_version",
    "has_status_subresource",
    "is_namespaced",
    "printer_columns",
    "read_path",
    "record_storage_version",
    "resource_infos",
    "scale_of",
    "scale_subresource",
    "selectable_fields",
    "served_versions",
    "set_condition",
    "storage_version",
    "terminating_condition",
    "validate_crd",
    "validate_names",
    "validate_scale_paths",
    "version_schema",
    "version_subresources",
    "versions_by_priority",
    "write_path",
]
