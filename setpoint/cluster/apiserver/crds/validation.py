"""``ValidateCustomResourceDefinition``: every check a CRD write must pass, with upstream's paths
and messages (``apis/apiextensions/validation``).

A schema shared by all versions is reported under ``spec.validation``, as upstream's internal
version hoists identical per-version schemas there before validating.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError, GoValue
from setpoint.api.names import validate_dns1035_label, validate_dns1123_subdomain
from setpoint.cluster.apiserver.crds.api_approval import api_approval_errors
from setpoint.cluster.apiserver.crds.definition import (
    as_list,
    as_mapping,
    as_text,
    has_openapi_schema,
    names_of,
    spec_of,
    versions_of,
)
from setpoint.cluster.apiserver.crds.selectable_fields import selectable_field_errors
from setpoint.cluster.apiserver.schema.definition_checks import validate_crd_schema
from setpoint.cluster.apiserver.schema.value_validation import strict_equal
from setpoint.cluster.apiserver.validation.webhook_client import client_config_errors

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


def _go_versions(versions: Sequence[Mapping[str, Any]]) -> GoValue:
    # Upstream prints the internal Go structs with %#v; name/served/storage are what matter.
    items = ", ".join(
        "apiextensions.CustomResourceDefinitionVersion{"
        f"Name:{fe.go_quote(as_text(v.get('name')))}, "
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
    errors.extend(api_approval_errors(crd, old))
    spec = spec_of(crd)
    if spec.get("preserveUnknownFields") is True and not (
        old is not None and spec_of(old).get("preserveUnknownFields") is True
    ):
        detail = (
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
            "spec.versions[*].schema instead"
        )
        errors.append(fe.invalid("spec.preserveUnknownFields", True, detail))
    if old is not None:
        for field, new_value, old_value in (
            ("spec.group", spec.get("group"), spec_of(old).get("group")),
            ("spec.names.plural", names_of(crd).get("plural"), names_of(old).get("plural")),
        ):
            if new_value != old_value:
                errors.append(fe.invalid(field, new_value, "field is immutable"))
    return errors


def _name_errors(crd: Mapping[str, Any]) -> list[FieldError]:
    metadata = as_mapping(crd.get("metadata"))
    name = as_text(metadata.get("name")) if isinstance(metadata, Mapping) else ""
    if not name:
        return []  # a missing name is reported by the generic object-meta validation
    problems = validate_dns1123_subdomain(name)
    spec = spec_of(crd)
    if name != f"{names_of(crd).get('plural') or ''}.{spec.get('group') or ''}":
        problems.append('must be spec.names.plural+"."+spec.group')
    return [fe.invalid("metadata.name", name, problem) for problem in problems]


def _spec_errors(crd: Mapping[str, Any]) -> list[FieldError]:
    spec = spec_of(crd)
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

    versions = versions_of(crd)
    hoist_schema = _identical(versions, "schema")
    hoist_subresources = _identical(versions, "subresources")
    hoist_columns = _identical(versions, "additionalPrinterColumns")
    hoist_selectable = _identical(versions, "selectableFields")
    shared_schema = versions[0].get("schema") if versions and hoist_schema else None
    if not has_openapi_schema(shared_schema):
        for index, version in enumerate(versions):
            if not has_openapi_schema(version.get("schema")):
                path = f"spec.versions[{index}].schema.openAPIV3Schema"
                errors.append(fe.required(path, "schemas are required"))

    any_status = any(_subresource(v, "status") for v in versions)
    storage_count = 0
    seen: set[str] = set()
    unique = True
    for index, version in enumerate(versions):
        path = f"spec.versions[{index}]"
        name = as_text(version.get("name"))
        storage_count += bool(version.get("storage"))
        if name in seen:
            unique = False
        seen.add(name)
        if problems := validate_dns1035_label(name):
            errors.append(fe.invalid(f"{path}.name", name, ",".join(problems)))
        errors.extend(_deprecation_errors(version, path))
        if not hoist_schema and has_openapi_schema(version.get("schema")):
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
            for i, column in enumerate(as_list(version.get("additionalPrinterColumns"))):
                errors.extend(_column_errors(column, f"{path}.additionalPrinterColumns[{i}]"))
        if not hoist_selectable and as_list(version.get("selectableFields")):
            # After hoisting, a version whose schema moved to spec.validation has none left,
            # which upstream reports with this (oddly worded) message.
            own_schema = None if hoist_schema else version.get("schema")
            errors.extend(
                selectable_field_errors(
                    as_list(version.get("selectableFields")),
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

    names = names_of(crd)
    for field in ("plural", "singular", "kind", "listKind"):
        if not names.get(field):
            errors.append(fe.required(f"spec.names.{field}", ""))
    errors.extend(validate_names(names, "spec.names"))
    if hoist_schema and has_openapi_schema(shared_schema):
        assert isinstance(shared_schema, Mapping)
        errors.extend(
            validate_crd_schema(
                shared_schema["openAPIV3Schema"], "spec.validation", status_enabled=any_status
            )
        )
    if hoist_subresources and versions:
        errors.extend(_subresource_errors(versions[0].get("subresources"), "spec.subresources"))
    if hoist_columns and versions:
        for i, column in enumerate(as_list(versions[0].get("additionalPrinterColumns"))):
            errors.extend(_column_errors(column, f"spec.additionalPrinterColumns[{i}]"))
    if hoist_selectable and versions and as_list(versions[0].get("selectableFields")):
        errors.extend(
            selectable_field_errors(
                as_list(versions[0].get("selectableFields")),
                shared_schema,
                "spec.selectableFields",
                "selectableFields may only be set when validations.schema is included",
            )
        )
    errors.extend(_conversion_errors(spec.get("conversion")))
    return errors


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
        value = as_text(names.get(field))
        if value and (problems := validate_dns1035_label(value)):
            errors.append(fe.invalid(f"{path}.{field}", value, ",".join(problems)))
    for field in ("kind", "listKind"):
        value = as_text(names.get(field))
        if value and (problems := validate_dns1035_label(value.lower())):
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            errors.append(fe.invalid(f"{path}.{field}", value, detail))
    for index, short in enumerate(as_list(names.get("shortNames"))):
        if problems := validate_dns1035_label(str(short)):
            errors.append(fe.invalid(f"{path}.shortNames[{index}]", short, ",".join(problems)))
    kind = names.get("kind") or ""
    if kind and kind == names.get("listKind"):
        errors.append(fe.invalid(f"{path}.listKind", kind, "kind and listKind may not be the same"))
    for index, category in enumerate(as_list(names.get("categories"))):
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
        value = as_text(scale.get(field))
        field_path = f"{path}.scale.{field}"
        if not value:
            errors.append(fe.required(field_path, ""))
        elif problems := _simple_json_path_errors(value, field_path):
            errors.extend(problems)
        elif not value.startswith(prefixes):
            errors.append(fe.invalid(field_path, value, detail))
    selector = as_text(scale.get("labelSelectorPath"))
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
    json_path = as_text(column.get("jsonPath"))
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
    review_versions = as_list(webhook.get("conversionReviewVersions"))
    if strategy == "Webhook":
        config_path = f"{path}.webhookClientConfig"
        if not isinstance(client_config, Mapping):
            errors.append(fe.required(config_path, "required when strategy is set to Webhook"))
        else:
            errors.extend(client_config_errors(config_path, dict(client_config)))
        errors.extend(_review_versions_errors(f"{path}.conversionReviewVersions", review_versions))
    else:
        if client_config is not None:
            detail = "should not be set when strategy is not set to Webhook"
            errors.append(fe.forbidden(f"{path}.webhookClientConfig", detail))
        if review_versions:
            detail = "should not be set when strategy is not set to Webhook"
            errors.append(fe.forbidden(f"{path}.conversionReviewVersions", detail))
    return errors


def _review_versions_errors(path: str, versions: list[Any]) -> list[FieldError]:
    """``validateConversionReviewVersions``: some, no duplicates, DNS-1035 labels, one known."""
    if not versions:
        return [fe.required(path, "must specify at least one version")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, version in enumerate(versions):
        text = as_text(version)
        if text in seen:
            errors.append(fe.invalid(f"{path}[{index}]", text, "duplicate version"))
            continue
        seen.add(text)
        errors.extend(
            fe.invalid(f"{path}[{index}]", text, problem)
            for problem in validate_dns1035_label(text)
        )
    if not any(v in CONVERSION_REVIEW_VERSIONS for v in versions):
        detail = "must include at least one of " + ", ".join(CONVERSION_REVIEW_VERSIONS)
        errors.append(fe.invalid(path, fe.go_string_slice(versions), detail))
    return errors


def _status_errors(crd: Mapping[str, Any]) -> list[FieldError]:
    status = crd.get("status")
    if not isinstance(status, Mapping):
        status = {}
    errors: list[FieldError] = []
    accepted = status.get("acceptedNames")
    if isinstance(accepted, Mapping):
        errors.extend(validate_names(accepted, "status.acceptedNames"))
    stored = [str(v) for v in as_list(status.get("storedVersions"))]
    path = "status.storedVersions"
    if not stored:
        errors.append(
            fe.invalid(path, fe.go_string_slice(None), "must have at least one stored version")
        )
        return errors
    remaining = {name: index for index, name in enumerate(stored)}
    for version in versions_of(crd):
        name = as_text(version.get("name"))
        if version.get("storage") and name not in remaining and name not in stored:
            errors.append(
                fe.invalid(
                    path, fe.go_string_slice(stored), "must have the storage version " + name
                )
            )
        remaining.pop(name, None)
    for name, index in remaining.items():
        errors.append(fe.invalid(f"{path}[{index}]", name, "must appear in spec.versions"))
    return errors
