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
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from setpoint.api.gvk import ResourceInfo
from setpoint.api.names import validate_dns1035_label, validate_dns1123_subdomain
from setpoint.cluster.apiserver import field_errors as fe
from setpoint.cluster.apiserver.field_errors import FieldError, GoValue
from setpoint.cluster.apiserver.schema.definition_checks import validate_crd_schema
from setpoint.cluster.apiserver.schema.structural import CompiledSchema, compile_schema
from setpoint.cluster.apiserver.schema.value_validation import strict_equal

GROUP: Final = "apiextensions.k8s.io"
KIND: Final = "CustomResourceDefinition"

# Verbs discovery lists for a custom resource, in upstream's order.
CUSTOM_RESOURCE_VERBS: Final = (
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
)
# While the CRD is being deleted its resources only support these.
TERMINATING_VERBS: Final = ("delete", "deletecollection", "get", "list", "watch")
# The finalizer that makes kube-apiserver delete all custom resources before the CRD.
CLEANUP_FINALIZER: Final = "customresourcecleanup.apiextensions.k8s.io"

SCOPES: Final = ("Cluster", "Namespaced")
CONVERSION_STRATEGIES: Final = ("None", "Webhook")
CONVERSION_REVIEW_VERSIONS: Final = ("v1", "v1beta1")
PRINTER_COLUMN_TYPES: Final = ("boolean", "date", "integer", "number", "string")
PRINTER_COLUMN_FORMATS: Final = (
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
)
# Upstream limit on a version's deprecationWarning.
MAX_DEPRECATION_WARNING_LENGTH: Final = 256
# Upstream limit on selectable fields per version (MaxSelectableFields).
MAX_SELECTABLE_FIELDS: Final = 8
# Scale replicas are int32 in autoscaling/v1.
MAX_INT32: Final = 2**31 - 1

API_APPROVAL_ANNOTATION: Final = "api-approved.kubernetes.io"
_PROTECTED_GROUP_SUFFIXES: Final = (".k8s.io", ".kubernetes.io")
_APPROVAL_DOC: Final = "https://github.com/kubernetes/enhancements/pull/1111"

# Condition types and reasons (apiextensions v1 and the naming/establishing controllers).
NAMES_ACCEPTED: Final = "NamesAccepted"
ESTABLISHED: Final = "Established"
TERMINATING: Final = "Terminating"


def _text(value: Any) -> str:
    """``value`` if it is a string, else ``""`` (malformed input is reported elsewhere)."""
    return value if isinstance(value, str) else ""


def _texts(value: Any) -> list[str]:
    """The strings of a JSON list (anything else is treated as empty)."""
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _list(value: Any) -> list[Any]:
    """``value`` if it is a JSON list, else an empty one."""
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else an empty one (tolerates malformed input)."""
    return value if isinstance(value, Mapping) else {}


def _spec(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = crd.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _versions(crd: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    versions = _spec(crd).get("versions")
    if not isinstance(versions, list):
        return []
    return [v for v in versions if isinstance(v, Mapping)]


def _names(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    names = _spec(crd).get("names")
    return names if isinstance(names, Mapping) else {}


# --- defaulting ---


def default_crd(crd: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``crd`` with the v1 defaults applied (``SetDefaults_CustomResourceDefinition``).

    ``names.singular`` = lower-cased kind, ``names.listKind`` = kind + ``List``,
    ``conversion.strategy: None``, a webhook service port of 443, and the storage version
    recorded in ``status.storedVersions`` if it is not there yet.
    """
    result: dict[str, Any] = copy.deepcopy(dict(crd))
    spec = result.setdefault("spec", {})
    if not isinstance(spec, dict):
        return result
    names = spec.setdefault("names", {})
    if isinstance(names, dict):
        kind = _text(names.get("kind"))
        if not names.get("singular"):
            names["singular"] = kind.lower()
        if not names.get("listKind") and kind:
            names["listKind"] = kind + "List"
    conversion = spec.get("conversion")
    if conversion is None:
        spec["conversion"] = {"strategy": "None"}
    elif isinstance(conversion, dict):
        client_config = _mapping(conversion.get("webhook")).get("clientConfig")
        if isinstance(client_config, dict):
            service = client_config.get("service")
            if isinstance(service, dict) and service.get("port") is None:
                service["port"] = 443
    record_storage_version(result)
    return result


def record_storage_version(crd: dict[str, Any]) -> None:
    """Add the storage version to ``status.storedVersions`` if missing (on create and update)."""
    storage = storage_version(crd)
    if storage is None:
        return
    status = crd.setdefault("status", {})
    if not isinstance(status, dict):
        return
    stored = status.get("storedVersions")
    if not isinstance(stored, list):
        stored = status["storedVersions"] = []
    if storage not in stored:
        stored.append(storage)


# --- versions and schemas ---


def storage_version(crd: Mapping[str, Any]) -> str | None:
    """The name of the version marked ``storage: true`` (the first one, if several)."""
    for version in _versions(crd):
        if version.get("storage"):
            name = version.get("name")
            return name if isinstance(name, str) else None
    return None


def served_versions(crd: Mapping[str, Any]) -> list[str]:
    """Names of the served versions, in spec order."""
    return [str(v.get("name")) for v in _versions(crd) if v.get("served")]


def find_version(crd: Mapping[str, Any], version: str) -> Mapping[str, Any] | None:
    """The ``spec.versions`` entry called ``version``."""
    for entry in _versions(crd):
        if entry.get("name") == version:
            return entry
    return None


def version_schema(crd: Mapping[str, Any], version: str) -> dict[str, Any] | None:
    """The ``openAPIV3Schema`` of ``version`` (None if the version or schema is missing)."""
    entry = find_version(crd, version)
    if entry is None:
        return None
    schema = entry.get("schema")
    if not isinstance(schema, Mapping):
        return None
    result = schema.get("openAPIV3Schema")
    return dict(result) if isinstance(result, Mapping) else None


def compiled_schema(crd: Mapping[str, Any], version: str) -> CompiledSchema:
    """The compiled schema of ``version``, cached across calls (compiled once per schema)."""
    return compile_schema(version_schema(crd, version))


def version_subresources(crd: Mapping[str, Any], version: str) -> Mapping[str, Any]:
    """``subresources`` of ``version`` (``{}`` if none)."""
    entry = find_version(crd, version)
    subresources = entry.get("subresources") if entry is not None else None
    return subresources if isinstance(subresources, Mapping) else {}


def has_status_subresource(crd: Mapping[str, Any], version: str) -> bool:
    """Whether ``version`` has the ``status`` subresource."""
    return version_subresources(crd, version).get("status") is not None


def scale_subresource(crd: Mapping[str, Any], version: str) -> Mapping[str, Any] | None:
    """The ``scale`` subresource spec (specReplicasPath, ...) of ``version``, if enabled."""
    scale = version_subresources(crd, version).get("scale")
    return scale if isinstance(scale, Mapping) else None


def is_namespaced(crd: Mapping[str, Any]) -> bool:
    """Whether the custom resources are namespaced."""
    return _spec(crd).get("scope") == "Namespaced"


# --- version priority and deprecation ---

_KUBE_VERSION: Final = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_VERSION_STABILITY: Final = {"alpha": 0, "beta": 1, None: 2}


def compare_kube_versions(a: str, b: str) -> int:
    """``version.CompareKubeAwareVersionStrings``: > 0 if ``a`` has the higher priority.

    ``v2`` > ``v1`` > ``v1beta2`` > ``v1beta1`` > ``v1alpha1`` > non-Kubernetes names, which
    compare among themselves in reverse alphabetical order (as upstream does).
    """
    if a == b:
        return 0
    match_a, match_b = _KUBE_VERSION.match(a), _KUBE_VERSION.match(b)
    if match_a is None and match_b is None:
        return (b > a) - (b < a)
    if match_a is None:
        return -1
    if match_b is None:
        return 1
    stability_a, stability_b = _VERSION_STABILITY[match_a[2]], _VERSION_STABILITY[match_b[2]]
    if stability_a != stability_b:
        return stability_a - stability_b
    if int(match_a[1]) != int(match_b[1]):
        return int(match_a[1]) - int(match_b[1])
    return int(match_a[3] or 0) - int(match_b[3] or 0)


def versions_by_priority(names: Iterable[str]) -> list[str]:
    """Version names, highest priority first (discovery lists the preferred version first)."""
    return sorted(names, key=functools.cmp_to_key(compare_kube_versions), reverse=True)


def deprecation_warning(crd: Mapping[str, Any], version: str) -> str | None:
    """The ``Warning`` header text for requests to a deprecated version, or None.

    The version's ``deprecationWarning`` if set, else upstream's default, e.g.
    ``example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget``.
    """
    entry = find_version(crd, version)
    if entry is None or not entry.get("deprecated"):
        return None
    custom = entry.get("deprecationWarning")
    if isinstance(custom, str):
        return custom
    group = _text(_spec(crd).get("group"))
    kind = _text(_names(crd).get("kind"))
    message = f"{group}/{version} {kind} is deprecated"
    newer = []
    for other in _versions(crd):
        name = _text(other.get("name"))
        newer_and_stable = not other.get("deprecated") and compare_kube_versions(version, name) < 0
        if other.get("served") and newer_and_stable:
            newer.append(name)
    if newer:
        message += f"; use {group}/{versions_by_priority(newer)[0]} {kind}"
    return message


# --- printer columns ---

# The column every custom resource table gets when its version declares none.
DEFAULT_PRINTER_COLUMNS: Final = (
    {
        "name": "Age",
        "type": "date",
        "description": "CreationTimestamp is a timestamp representing the server time when this "
        "object was created.",
        "jsonPath": ".metadata.creationTimestamp",
    },
)


def printer_columns(crd: Mapping[str, Any], version: str) -> list[dict[str, Any]]:
    """The ``additionalPrinterColumns`` of ``version``, or the default Age column if none.

    Tables start with a Name column before these (``tableconvertor``).
    """
    entry = find_version(crd, version)
    columns = [dict(c) for c in _list(entry.get("additionalPrinterColumns") if entry else None)]
    return columns or [dict(c) for c in DEFAULT_PRINTER_COLUMNS]


# --- discovery ---


def resource_infos(crd: Mapping[str, Any], *, terminating: bool = False) -> list[ResourceInfo]:
    """One :class:`ResourceInfo` per served version, as discovery shows the CRD's resources.

    Names come from ``status.acceptedNames`` once the CRD has them, else from the spec.
    """
    status = _mapping(crd.get("status"))
    accepted = status.get("acceptedNames") if isinstance(status, Mapping) else None
    names = accepted if isinstance(accepted, Mapping) and accepted.get("plural") else _names(crd)
    group = _text(_spec(crd).get("group"))
    kind = _text(names.get("kind"))
    infos = []
    for entry in _versions(crd):
        if not entry.get("served"):
            continue
        version = _text(entry.get("name"))
        subresources = version_subresources(crd, version)
        infos.append(
            ResourceInfo(
                group=group,
                version=version,
                kind=kind,
                resource=_text(names.get("plural")),
                namespaced=is_namespaced(crd),
                list_kind=str(names.get("listKind") or f"{kind}List"),
                singular=str(names.get("singular") or kind.lower()),
                verbs=TERMINATING_VERBS if terminating else CUSTOM_RESOURCE_VERBS,
                short_names=tuple(_texts(names.get("shortNames"))),
                categories=tuple(_texts(names.get("categories"))),
                subresources=tuple(
                    s for s in ("status", "scale") if subresources.get(s) is not None
                ),
            )
        )
    return infos


# --- naming: NamesAccepted and Established ---


def _condition(kind: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def find_condition(crd: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    """The status condition of type ``kind``, if any."""
    status = crd.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, Mapping) and condition.get("type") == kind:
            return condition
    return None


def set_condition(
    conditions: list[dict[str, Any]], condition: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``conditions`` with ``condition`` replacing the one of its type (``SetCRDCondition``).

    The old ``lastTransitionTime`` is kept when the status does not change.
    """
    result: list[dict[str, Any]] = []
    replaced = False
    for existing in conditions:
        if existing.get("type") == condition.get("type"):
            merged = dict(condition)
            if existing.get("status") == condition.get("status"):
                merged["lastTransitionTime"] = existing.get("lastTransitionTime")
            result.append(merged)
            replaced = True
        else:
            result.append(existing)
    if not replaced:
        result.append(dict(condition))
    return result


def _used_names(
    existing: Iterable[Mapping[str, Any]], group: str, own: str
) -> tuple[set[str], set[str]]:
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in existing:
        metadata = _mapping(other.get("metadata"))
        if metadata.get("name") == own or _spec(other).get("group") != group:
            continue
        status = _mapping(other.get("status"))
        accepted = status.get("acceptedNames") if isinstance(status, Mapping) else None
        if not isinstance(accepted, Mapping):
            continue
        resources.update(_text(accepted.get(k)) for k in ("plural", "singular"))
        resources.update(_texts(accepted.get("shortNames")))
        kinds.update(_text(accepted.get(k)) for k in ("kind", "listKind"))
    return resources, kinds


def _conflict(requested: str, accepted: str, used: set[str]) -> str | None:
    """``equalToAcceptedOrFresh``: the conflict message, or None if the name may be taken."""
    if requested == accepted or requested not in used:
        return None
    return f"{fe.go_quote(requested)} is already in use"


def accept_names(
    crd: Mapping[str, Any], existing_crds: Iterable[Mapping[str, Any]], *, now: str = ""
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Compute ``status.acceptedNames`` and the conditions after the naming controller ran.

    ``existing_crds`` are the other stored CRDs (the CRD itself is skipped by name). Names
    already accepted by another CRD of the same group conflict. Without conflicts the result is
    ``NamesAccepted=True/NoConflicts`` and ``Established=True/InitialNamesAccepted`` (the
    establishing controller's step, done synchronously); with one, ``NamesAccepted=False`` with
    the conflict reason and ``Established=False/NotAccepted`` unless it was established before.
    ``now`` is the RFC 3339 time for ``lastTransitionTime``.
    """
    metadata = _mapping(crd.get("metadata"))
    own = _text(metadata.get("name")) if isinstance(metadata, Mapping) else ""
    resources, kinds = _used_names(existing_crds, _text(_spec(crd).get("group")), own)
    requested = _names(crd)
    status = _mapping(crd.get("status"))
    previous = status.get("acceptedNames") if isinstance(status, Mapping) else None
    accepted_before: Mapping[str, Any] = previous if isinstance(previous, Mapping) else {}
    names: dict[str, Any] = dict(accepted_before)
    reason, message = "", ""

    def check(field: str, used: set[str], conflict_reason: str) -> None:
        nonlocal reason, message
        wanted = _text(requested.get(field))
        problem = _conflict(wanted, _text(accepted_before.get(field)), used)
        if problem is not None:
            reason, message = conflict_reason, problem
        elif wanted:
            names[field] = wanted

    check("plural", resources, "PluralConflict")
    check("singular", resources, "SingularConflict")
    wanted_short = _texts(requested.get("shortNames"))
    if wanted_short != _texts(accepted_before.get("shortNames")):
        known = set(_texts(accepted_before.get("shortNames")))
        problems = [
            problem
            for short in wanted_short
            if short not in known and (problem := _conflict(short, "", resources)) is not None
        ]
        if problems:
            reason = "ShortNamesConflict"
            message = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        elif wanted_short:
            names["shortNames"] = wanted_short
        else:
            names.pop("shortNames", None)
    check("kind", kinds, "KindConflict")
    check("listKind", kinds, "ListKindConflict")
    if _texts(requested.get("categories")):
        names["categories"] = _texts(requested.get("categories"))
    else:
        names.pop("categories", None)

    conditions = [dict(c) for c in _list(status.get("conditions")) if isinstance(c, Mapping)]
    if reason:
        accepted_condition = _condition(NAMES_ACCEPTED, "False", reason, message, now)
    else:
        accepted_condition = _condition(
            NAMES_ACCEPTED, "True", "NoConflicts", "no conflicts found", now
        )
    conditions = set_condition(conditions, accepted_condition)
    established_before = find_condition(crd, ESTABLISHED)
    if not reason:
        established = _condition(
            ESTABLISHED, "True", "InitialNamesAccepted", "the initial names have been accepted", now
        )
        if established_before is None or established_before.get("status") != "True":
            conditions = set_condition(conditions, established)
    elif established_before is None:
        conditions = set_condition(
            conditions,
            _condition(ESTABLISHED, "False", "NotAccepted", "not all names are accepted", now),
        )
    return names, conditions


def terminating_condition(now: str = "") -> dict[str, Any]:
    """The condition a CRD gets while its custom resources are being deleted."""
    return _condition(
        TERMINATING,
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
        now,
    )


# --- validation ---


def _go_versions(versions: Sequence[Mapping[str, Any]]) -> GoValue:
    # Upstream prints the internal Go structs with %#v; name/served/storage are what matter.
    items = ", ".join(
        "apiextensions.CustomResourceDefinitionVersion{"
        f"Name:{fe.go_quote(_text(v.get('name')))}, "
        f"Served:{str(bool(v.get('served'))).lower()}, "
        f"Storage:{str(bool(v.get('storage'))).lower()}, ...}}"
        for v in versions
    )
    return GoValue("[]apiextensions.CustomResourceDefinitionVersion{" + items + "}")


def _identical(versions: Sequence[Mapping[str, Any]], key: str) -> bool:
    """Whether every version has the same ``key`` (then upstream hoists it to the spec)."""
    if not versions:
        return False
    first = versions[0].get(key)
    return all(strict_equal(v.get(key), first) for v in versions)


def validate_crd(crd: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[FieldError]:
    """Every problem with a (defaulted) CRD, as kube-apiserver's CRD strategy reports it.

    Metadata other than the name (labels, annotations...) is the generic object-meta check's
    job. ``old`` is the stored CRD on update (immutable fields, stored versions).
    """
    errors = _name_errors(crd)
    errors.extend(_spec_errors(crd))
    errors.extend(_status_errors(crd))
    errors.extend(_api_approval_errors(crd, old))
    spec = _spec(crd)
    if spec.get("preserveUnknownFields") is True and not (
        old is not None and _spec(old).get("preserveUnknownFields") is True
    ):
        detail = (
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
            "spec.versions[*].schema instead"
        )
        errors.append(fe.invalid("spec.preserveUnknownFields", True, detail))
    if old is not None:
        for field, new_value, old_value in (
            ("spec.group", spec.get("group"), _spec(old).get("group")),
            ("spec.names.plural", _names(crd).get("plural"), _names(old).get("plural")),
        ):
            if new_value != old_value:
                errors.append(fe.invalid(field, new_value, "field is immutable"))
    return errors


def _name_errors(crd: Mapping[str, Any]) -> list[FieldError]:
    metadata = _mapping(crd.get("metadata"))
    name = _text(metadata.get("name")) if isinstance(metadata, Mapping) else ""
    if not name:
        return []  # a missing name is reported by the generic object-meta validation
    problems = validate_dns1123_subdomain(name)
    spec = _spec(crd)
    if name != f"{_names(crd).get('plural') or ''}.{spec.get('group') or ''}":
        problems.append('must be spec.names.plural+"."+spec.group')
    return [fe.invalid("metadata.name", name, problem) for problem in problems]


def _spec_errors(crd: Mapping[str, Any]) -> list[FieldError]:
    spec = _spec(crd)
    errors: list[FieldError] = []
    group = spec.get("group") or ""
    if not group:
        errors.append(fe.required("spec.group", ""))
    elif problems := validate_dns1123_subdomain(str(group)):
        errors.append(fe.invalid("spec.group", group, ",".join(problems)))
    elif len(str(group).split(".")) < 2:
        errors.append(fe.invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope") or ""
    if not scope:
        errors.append(fe.required("spec.scope", ""))
    elif scope not in SCOPES:
        errors.append(fe.not_supported("spec.scope", scope, SCOPES))

    versions = _versions(crd)
    hoist_schema = _identical(versions, "schema")
    hoist_subresources = _identical(versions, "subresources")
    hoist_columns = _identical(versions, "additionalPrinterColumns")
    hoist_selectable = _identical(versions, "selectableFields")
    shared_schema = versions[0].get("schema") if versions and hoist_schema else None
    if not _has_openapi_schema(shared_schema):
        for index, version in enumerate(versions):
            if not _has_openapi_schema(version.get("schema")):
                path = f"spec.versions[{index}].schema.openAPIV3Schema"
                errors.append(fe.required(path, "schemas are required"))

    any_status = any(_subresource(v, "status") for v in versions)
    storage_count = 0
    seen: set[str] = set()
    unique = True
    for index, version in enumerate(versions):
        path = f"spec.versions[{index}]"
        name = _text(version.get("name"))
        storage_count += bool(version.get("storage"))
        if name in seen:
            unique = False
        seen.add(name)
        if problems := validate_dns1035_label(name):
            errors.append(fe.invalid(f"{path}.name", name, ",".join(problems)))
        errors.extend(_deprecation_errors(version, path))
        if not hoist_schema and _has_openapi_schema(version.get("schema")):
            errors.extend(
                validate_crd_schema(
                    version["schema"]["openAPIV3Schema"],
                    f"{path}.schema",
                    status_enabled=_subresource(version, "status"),
                )
            )
        if not hoist_subresources:
            errors.extend(_subresource_errors(version.get("subresources"), f"{path}.subresources"))
        if not hoist_columns:
            for i, column in enumerate(_list(version.get("additionalPrinterColumns"))):
                errors.extend(_column_errors(column, f"{path}.additionalPrinterColumns[{i}]"))
        if not hoist_selectable and _list(version.get("selectableFields")):
            # After hoisting, a version whose schema moved to spec.validation has none left,
            # which upstream reports with this (oddly worded) message.
            own_schema = None if hoist_schema else version.get("schema")
            errors.extend(
                _selectable_errors(
                    _list(version.get("selectableFields")),
                    own_schema,
                    f"{path}.selectableFields",
                    "selectableFields may only be set when version.schema.openAPIV3Schema "
                    "is not included",
                )
            )
    if not unique:
        errors.append(
            fe.invalid("spec.versions", _go_versions(versions), "must contain unique version names")
        )
    if storage_count != 1:
        detail = "must have exactly one version marked as storage version"
        errors.append(fe.invalid("spec.versions", _go_versions(versions), detail))

    names = _names(crd)
    for field in ("plural", "singular", "kind", "listKind"):
        if not names.get(field):
            errors.append(fe.required(f"spec.names.{field}", ""))
    errors.extend(validate_names(names, "spec.names"))
    if hoist_schema and _has_openapi_schema(shared_schema):
        assert isinstance(shared_schema, Mapping)
        errors.extend(
            validate_crd_schema(
                shared_schema["openAPIV3Schema"], "spec.validation", status_enabled=any_status
            )
        )
    if hoist_subresources and versions:
        errors.extend(_subresource_errors(versions[0].get("subresources"), "spec.subresources"))
    if hoist_columns and versions:
        for i, column in enumerate(_list(versions[0].get("additionalPrinterColumns"))):
            errors.extend(_column_errors(column, f"spec.additionalPrinterColumns[{i}]"))
    if hoist_selectable and versions and _list(versions[0].get("selectableFields")):
        errors.extend(
            _selectable_errors(
                _list(versions[0].get("selectableFields")),
                shared_schema,
                "spec.selectableFields",
                "selectableFields may only be set when validations.schema is included",
            )
        )
    errors.extend(_conversion_errors(spec.get("conversion")))
    return errors


def _walk_json_path(schema: Mapping[str, Any], json_path: str) -> tuple[Any, str, str]:
    """Follow a selectable field's ``.a.b`` path (``cel.ValidFieldPath`` without arrays).

    Returns the schema found, the problem (empty if none) and the canonical field path.
    """
    tokens = [token for token in re.split(r"([.\[\]])", json_path) if token]
    current: Any = schema
    canonical = ""
    position = 0
    while position < len(tokens):
        token = tokens[position]
        if token == "[":
            return None, "array notation is not allowed", canonical
        if token != ".":
            return None, f"expected [ or . but got: {token}", canonical
        if position + 1 >= len(tokens):
            return None, "unexpected end of JSON path", canonical
        name = tokens[position + 1]
        position += 2
        properties = current.get("properties") if isinstance(current, Mapping) else None
        extra = current.get("additionalProperties") if isinstance(current, Mapping) else None
        if isinstance(properties, Mapping) and properties:
            if name not in properties:
                return None, "does not refer to a valid field", canonical
            current = properties[name]
            canonical = f"{canonical}.{name}" if canonical else name
        elif extra is not None:
            current = extra if isinstance(extra, Mapping) else None
            canonical = f"{canonical}[{name}]"
        else:
            return None, "does not refer to a valid field", canonical
    return current, "", canonical


def _selectable_errors(
    fields: list[Any], schema_holder: Any, path: str, missing_schema: str
) -> list[FieldError]:
    """``ValidateCustomResourceSelectableFields``: simple paths to scalar fields, at most 8."""
    if not _has_openapi_schema(schema_holder):
        return [fe.invalid(path, "", missing_schema)]
    schema = schema_holder["openAPIV3Schema"]
    if not isinstance(schema, Mapping):
        return []
    errors: list[FieldError] = []
    unique: list[str] = []
    for index, selectable in enumerate(fields):
        field_path = f"{path}[{index}].jsonPath"
        json_path = _text(_mapping(selectable).get("jsonPath"))
        if not json_path:
            errors.append(fe.required(field_path, ""))
            continue
        found, problem, canonical = _walk_json_path(schema, json_path)
        if problem:
            errors.append(fe.invalid(field_path, json_path, f"is an invalid path: {problem}"))
            continue
        if canonical.split(".")[0].split("[")[0] == "metadata":
            detail = "must not point to fields in metadata"
            errors.append(fe.invalid(field_path, json_path, detail))
        if _mapping(found).get("type") not in ("string", "boolean", "integer"):
            detail = (
                "must point to a field of type string, boolean or integer. Enum string fields "
                "and strings with formats are allowed."
            )
            errors.append(fe.invalid(field_path, json_path, detail))
        if canonical in unique:
            errors.append(fe.duplicate(field_path, json_path))
        else:
            unique.append(canonical)
    if len(unique) > MAX_SELECTABLE_FIELDS:
        errors.append(fe.too_many(path, len(unique), MAX_SELECTABLE_FIELDS))
    return errors


def selectable_fields(crd: Mapping[str, Any], version: str) -> list[str]:
    """The ``jsonPath``s of ``version``'s selectable fields (usable in field selectors)."""
    entry = find_version(crd, version)
    if entry is None:
        return []
    return [
        path
        for item in _list(entry.get("selectableFields"))
        if (path := _text(_mapping(item).get("jsonPath")))
    ]


def _has_openapi_schema(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("openAPIV3Schema") is not None


def _subresource(version: Mapping[str, Any], name: str) -> bool:
    subresources = version.get("subresources")
    return isinstance(subresources, Mapping) and subresources.get(name) is not None


def _deprecation_errors(version: Mapping[str, Any], path: str) -> list[FieldError]:
    warning = version.get("deprecationWarning")
    field = f"{path}.deprecationWarning"
    if not version.get("deprecated") and warning is not None:
        return [fe.invalid(field, warning, "can only be set for deprecated versions")]
    if warning is None:
        return []
    text = str(warning)
    errors = []
    if len(text.encode()) > MAX_DEPRECATION_WARNING_LENGTH:
        errors.append(fe.invalid(field, text, "must be <= 256 characters long"))
    if not text:
        errors.append(fe.invalid(field, text, "must not be an empty string"))
    for index, char in enumerate(text):
        if not char.isprintable():
            detail = (
                "must only contain printable UTF-8 characters; "
                f"non-printable character found at index {len(text[:index].encode())}"
            )
            errors.append(fe.invalid(field, text, detail))
            break
    return errors


def validate_names(names: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames`` for ``spec.names`` or ``status.acceptedNames``."""
    errors: list[FieldError] = []
    for field in ("plural", "singular"):
        value = _text(names.get(field))
        if value and (problems := validate_dns1035_label(value)):
            errors.append(fe.invalid(f"{path}.{field}", value, ",".join(problems)))
    for field in ("kind", "listKind"):
        value = _text(names.get(field))
        if value and (problems := validate_dns1035_label(value.lower())):
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            errors.append(fe.invalid(f"{path}.{field}", value, detail))
    for index, short in enumerate(_list(names.get("shortNames"))):
        if problems := validate_dns1035_label(str(short)):
            errors.append(fe.invalid(f"{path}.shortNames[{index}]", short, ",".join(problems)))
    kind = names.get("kind") or ""
    if kind and kind == names.get("listKind"):
        errors.append(fe.invalid(f"{path}.listKind", kind, "kind and listKind may not be the same"))
    for index, category in enumerate(_list(names.get("categories"))):
        if problems := validate_dns1035_label(str(category)):
            errors.append(fe.invalid(f"{path}.categories[{index}]", category, ",".join(problems)))
    return errors


def _simple_json_path_errors(text: str, path: str) -> list[FieldError]:
    if not text:
        return [fe.invalid(path, text, "must not be empty")]
    if not text.startswith("."):
        return [fe.invalid(path, text, "must be a simple json path starting with .")]
    return []


def _subresource_errors(subresources: Any, path: str) -> list[FieldError]:
    if not isinstance(subresources, Mapping):
        return []
    scale = subresources.get("scale")
    if not isinstance(scale, Mapping):
        return []
    errors: list[FieldError] = []
    for field, prefixes, detail in (
        ("specReplicasPath", (".spec.",), "should be a json path under .spec"),
        ("statusReplicasPath", (".status.",), "should be a json path under .status"),
    ):
        value = _text(scale.get(field))
        field_path = f"{path}.scale.{field}"
        if not value:
            errors.append(fe.required(field_path, ""))
        elif problems := _simple_json_path_errors(value, field_path):
            errors.extend(problems)
        elif not value.startswith(prefixes):
            errors.append(fe.invalid(field_path, value, detail))
    selector = _text(scale.get("labelSelectorPath"))
    if selector:
        field_path = f"{path}.scale.labelSelectorPath"
        if problems := _simple_json_path_errors(selector, field_path):
            errors.extend(problems)
        elif not selector.startswith((".spec.", ".status.")):
            detail = "should be a json path under either .spec or .status"
            errors.append(fe.invalid(field_path, selector, detail))
    return errors


def _column_errors(column: Any, path: str) -> list[FieldError]:
    if not isinstance(column, Mapping):
        return [fe.invalid(path, column, "must be an object")]
    errors: list[FieldError] = []
    if not column.get("name"):
        errors.append(fe.required(f"{path}.name", ""))
    kinds = "must be one of " + ",".join(PRINTER_COLUMN_TYPES)
    column_type = column.get("type") or ""
    if not column_type:
        errors.append(fe.required(f"{path}.type", kinds))
    elif column_type not in PRINTER_COLUMN_TYPES:
        errors.append(fe.invalid(f"{path}.type", column_type, kinds))
    column_format = column.get("format") or ""
    if column_format and column_format not in PRINTER_COLUMN_FORMATS:
        detail = "must be one of " + ",".join(PRINTER_COLUMN_FORMATS)
        errors.append(fe.invalid(f"{path}.format", column_format, detail))
    json_path = _text(column.get("jsonPath"))
    if not json_path:
        errors.append(fe.required(f"{path}.JSONPath", ""))
    else:
        errors.extend(_simple_json_path_errors(json_path, f"{path}.JSONPath"))
    return errors


def _conversion_errors(conversion: Any) -> list[FieldError]:
    if not isinstance(conversion, Mapping):
        return []
    path = "spec.conversion"
    errors: list[FieldError] = []
    strategy = conversion.get("strategy") or ""
    if not strategy:
        errors.append(fe.required(f"{path}.strategy", ""))
    elif strategy not in CONVERSION_STRATEGIES:
        errors.append(fe.not_supported(f"{path}.strategy", strategy, CONVERSION_STRATEGIES))
    webhook = conversion.get("webhook")
    webhook = webhook if isinstance(webhook, Mapping) else {}
    client_config = webhook.get("clientConfig")
    review_versions = _list(webhook.get("conversionReviewVersions"))
    if strategy == "Webhook":
        config_path = f"{path}.webhookClientConfig"
        if not isinstance(client_config, Mapping):
            errors.append(fe.required(config_path, "required when strategy is set to Webhook"))
        elif (client_config.get("url") is None) == (client_config.get("service") is None):
            errors.append(fe.required(config_path, "exactly one of url or service is required"))
        versions_path = f"{path}.conversionReviewVersions"
        if not review_versions:
            errors.append(fe.required(versions_path, "must specify at least one version"))
        elif not any(v in CONVERSION_REVIEW_VERSIONS for v in review_versions):
            detail = "must include at least one of " + ", ".join(CONVERSION_REVIEW_VERSIONS)
            errors.append(fe.invalid(versions_path, GoValue(_go_strings(review_versions)), detail))
    else:
        if client_config is not None:
            detail = "should not be set when strategy is not set to Webhook"
            errors.append(fe.forbidden(f"{path}.webhookClientConfig", detail))
        if review_versions:
            detail = "should not be set when strategy is not set to Webhook"
            errors.append(fe.forbidden(f"{path}.conversionReviewVersions", detail))
    return errors


def _go_strings(values: Iterable[Any]) -> str:
    return "[]string{" + ", ".join(fe.go_quote(str(v)) for v in values) + "}"


def _status_errors(crd: Mapping[str, Any]) -> list[FieldError]:
    status = crd.get("status")
    if not isinstance(status, Mapping):
        status = {}
    errors: list[FieldError] = []
    accepted = status.get("acceptedNames")
    if isinstance(accepted, Mapping):
        errors.extend(validate_names(accepted, "status.acceptedNames"))
    stored = [str(v) for v in _list(status.get("storedVersions"))]
    path = "status.storedVersions"
    if not stored:
        errors.append(
            fe.invalid(path, GoValue("[]string(nil)"), "must have at least one stored version")
        )
        return errors
    remaining = {name: index for index, name in enumerate(stored)}
    for version in _versions(crd):
        name = _text(version.get("name"))
        if version.get("storage") and name not in remaining and name not in stored:
            errors.append(
                fe.invalid(
                    path, GoValue(_go_strings(stored)), "must have the storage version " + name
                )
            )
        remaining.pop(name, None)
    for name, index in remaining.items():
        errors.append(fe.invalid(f"{path}[{index}]", name, "must appear in spec.versions"))
    return errors


def _is_protected_group(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith(_PROTECTED_GROUP_SUFFIXES)


def _approval_state(crd: Mapping[str, Any]) -> tuple[str, str]:
    metadata = _mapping(crd.get("metadata"))
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    value = annotations.get(API_APPROVAL_ANNOTATION) if isinstance(annotations, Mapping) else None
    if value is None:
        reason = (
            "protected groups must have approval annotation "
            f"{fe.go_quote(API_APPROVAL_ANNOTATION)}, see {_APPROVAL_DOC}"
        )
        return "missing", reason
    text = str(value)
    if text.startswith("unapproved"):
        return "bypassed", ""
    if text.startswith(("http://", "https://")):
        return "approved", ""
    reason = (
        f"protected groups must have approval annotation {fe.go_quote(API_APPROVAL_ANNOTATION)} "
        f'with either a URL or a reason starting with "unapproved", see {_APPROVAL_DOC}'
    )
    return "invalid", reason


def _api_approval_errors(crd: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    if not _is_protected_group(_text(_spec(crd).get("group"))):
        return []
    state, reason = _approval_state(crd)
    if old is not None and _approval_state(old)[0] == state:
        return []
    path = f"metadata.annotations[{API_APPROVAL_ANNOTATION}]"
    if state == "missing":
        return [fe.required(path, reason)]
    if state == "invalid":
        metadata = crd.get("metadata") or {}
        return [
            fe.invalid(
                path, str(metadata.get("annotations", {}).get(API_APPROVAL_ANNOTATION)), reason
            )
        ]
    return []


# --- the scale subresource ---


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
    spec_replicas, _ = _nested_int(obj, _text(scale.get("specReplicasPath")))
    status_replicas, _ = _nested_int(obj, _text(scale.get("statusReplicasPath")))
    selector = ""
    selector_path = _text(scale.get("labelSelectorPath"))
    if selector_path:
        value, found = read_path(obj, selector_path)
        selector = value if found and isinstance(value, str) else ""
    metadata = _mapping(obj.get("metadata"))
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
    paths = [_text(scale.get("statusReplicasPath"))]
    if spec:
        paths.insert(0, _text(scale.get("specReplicasPath")))
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
    selector_path = _text(scale.get("labelSelectorPath"))
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
