"""Validation of ``metadata`` common to every object (apimachinery ``ValidateObjectMeta``).

Names follow the resource's rule (DNS-1123 subdomain, label, or path segment); labels,
annotations and finalizers are checked as upstream does, with the same messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.names import (
    is_dns1123_subdomain,
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_label_value,
    validate_qualified_name,
)
from setpoint.api.owners import owner_reference_errors
from setpoint.cluster.apiserver.registry.served_resources import NameRule

#: Upstream limit on the summed size of all annotation keys and values (256 KiB).
TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024
#: Strings remembered as valid per check: label keys and values, namespaces and finalizers
#: repeat on almost every write; a full memo is dropped (cheap to rebuild, bounded memory).
VALID_MEMO_SIZE: Final = 4096


class ValidMemo:
    """A string check that remembers which strings passed (the checks are pure)."""

    def __init__(self, check: Callable[[str], list[str]]) -> None:
        self._check = check
        self._valid: set[str] = set()

    def all_valid(self, texts: Iterable[Any]) -> bool:
        """Whether every one of ``texts`` is a string known to pass (one set check, in C)."""
        try:
            return self._valid.issuperset(texts)
        except TypeError:  # an unhashable value (a list, an object): certainly not
            return False

    def __call__(self, text: str) -> list[str]:
        if text in self._valid:
            return []
        problems = self._check(text)
        if not problems:
            if len(self._valid) >= VALID_MEMO_SIZE:
                self._valid.clear()
            self._valid.add(text)
        return problems


_qualified_name_problems: Final = ValidMemo(validate_qualified_name)
_label_value_problems: Final = ValidMemo(validate_label_value)
_namespace_problems: Final = ValidMemo(validate_dns1123_label)
#: The memoized checks, shared with the per-kind rules (label keys and values repeat).
qualified_name_problems: Final = _qualified_name_problems
label_value_problems: Final = _label_value_problems
dns1123_label_problems: Final = _namespace_problems


def validate_path_segment_name(name: str) -> list[str]:
    """Problems with a name used as one URL path segment (RBAC objects, events)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{char}'" for char in ("/", "%") if char in name]


def name_problems(rule: NameRule, name: str) -> list[str]:
    """Problems with ``name`` under the resource's naming rule; empty if valid."""
    if rule == "label":
        return validate_dns1123_label(name)
    if rule == "path_segment":
        return validate_path_segment_name(name)
    if is_dns1123_subdomain(name):  # most names: no messages to build
        return []
    return validate_dns1123_subdomain(name)


def _string_map(
    metadata: dict[str, Any], field: str, errors: list[FieldError]
) -> dict[str, Any] | None:
    value = metadata.get(field)
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.append(fe.invalid(f"metadata.{field}", value, "must be a map of strings"))
        return None
    for key, item in value.items():
        if not isinstance(item, str):
            errors.append(fe.invalid(f"metadata.{field}.{key}", item, "must be a string"))
    return value


def validate_object_meta(
    metadata: dict[str, Any], *, namespaced: bool, name_rule: NameRule
) -> list[FieldError]:
    """Every problem with ``metadata`` of an object about to be stored."""
    errors: list[FieldError] = []
    name = metadata.get("name")
    generate_name = metadata.get("generateName")
    if name is not None and not isinstance(name, str):
        errors.append(fe.invalid("metadata.name", name, "must be a string"))
        name = None
    if generate_name is not None and not isinstance(generate_name, str):
        errors.append(fe.invalid("metadata.generateName", generate_name, "must be a string"))
        generate_name = None
    if generate_name:
        # A generated name ends in random characters, so a trailing "-" is fine here.
        for problem in name_problems(name_rule, generate_name.rstrip("-") or generate_name):
            errors.append(fe.invalid("metadata.generateName", generate_name, problem))
    if not name:
        if not generate_name:
            errors.append(fe.required("metadata.name", "name or generateName is required"))
    else:
        for problem in name_problems(name_rule, name):
            errors.append(fe.invalid("metadata.name", name, problem))
    namespace = metadata.get("namespace")
    if namespaced:
        if not namespace:
            errors.append(fe.required("metadata.namespace", ""))
        elif not isinstance(namespace, str):
            errors.append(fe.invalid("metadata.namespace", namespace, "must be a string"))
        else:
            for problem in _namespace_problems(namespace):
                errors.append(fe.invalid("metadata.namespace", namespace, problem))
    elif namespace:
        errors.append(fe.forbidden("metadata.namespace", "not allowed on this type"))
    labels = metadata.get("labels")
    if (
        labels.__class__ is dict
        and _qualified_name_problems.all_valid(labels)
        and _label_value_problems.all_valid(labels.values())
    ):
        labels = None  # every key and value a string that passed before: nothing to report
    else:
        labels = _string_map(metadata, "labels", errors)
    if labels:
        for key, value in labels.items():
            for problem in _qualified_name_problems(key):
                errors.append(fe.invalid("metadata.labels", key, problem))
            if isinstance(value, str):
                for problem in _label_value_problems(value):
                    errors.append(fe.invalid("metadata.labels", value, problem))
    annotations = _string_map(metadata, "annotations", errors)
    if annotations:
        total = 0
        for key, value in annotations.items():
            for problem in _qualified_name_problems(key.lower()):
                errors.append(fe.invalid("metadata.annotations", key, problem))
            total += len(key) + (len(value) if isinstance(value, str) else 0)
        if total > TOTAL_ANNOTATION_SIZE_LIMIT:
            errors.append(fe.too_long("metadata.annotations", TOTAL_ANNOTATION_SIZE_LIMIT))
    finalizers = metadata.get("finalizers")
    if finalizers is not None:
        if not isinstance(finalizers, list):
            errors.append(fe.invalid("metadata.finalizers", finalizers, "must be a list"))
        else:
            for index, finalizer in enumerate(finalizers):
                path = f"metadata.finalizers[{index}]"
                if not isinstance(finalizer, str):
                    errors.append(fe.invalid(path, finalizer, "must be a string"))
                    continue
                for problem in _qualified_name_problems(finalizer):
                    errors.append(fe.invalid(path, finalizer, problem))
    references = metadata.get("ownerReferences")
    if references is not None:
        if not isinstance(references, list) or not all(isinstance(r, dict) for r in references):
            errors.append(fe.invalid("metadata.ownerReferences", references, "must be a list"))
        else:
            errors.extend(owner_reference_errors(references))
    generation = metadata.get("generation")
    if isinstance(generation, int) and generation < 0:
        errors.append(
            fe.invalid("metadata.generation", generation, "must be greater than or equal to 0")
        )
    return errors
