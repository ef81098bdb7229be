"""Algebraic properties of pruning and defaulting, and robustness against malformed input."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver import crds
from setpoint.cluster.apiserver.schema import SchemaError, compile_schema
from setpoint.cluster.apiserver.schema.definition_checks import validate_crd_schema

_KEYS = ["spec", "status", "size", "items", "name", "labels", "free", "metadata", "x", "template"]
_SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3)
JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)
    ),
    max_leaves=15,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "default": {},
            "properties": {
                "size": {"type": "integer", "default": 1, "minimum": 0},
                "name": {"type": "string", "nullable": True, "default": "n"},
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string", "default": "a"}},
                    },
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
        }
    },
}
COMPILED = compile_schema(SCHEMA)
QUICK = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@QUICK
@given(st.dictionaries(st.sampled_from(_KEYS), JSON, max_size=4))
def test_prune_is_idempotent(obj: dict[str, Any]) -> None:
    COMPILED.prune(obj)
    snapshot = copy.deepcopy(obj)
    assert COMPILED.prune(obj) == []
    assert obj == snapshot


@QUICK
@given(st.dictionaries(st.sampled_from(_KEYS), JSON, max_size=4))
def test_normalize_is_idempotent_and_validation_never_raises(obj: dict[str, Any]) -> None:
    old = copy.deepcopy(obj)
    COMPILED.normalize(obj)
    once = copy.deepcopy(obj)
    assert COMPILED.normalize(obj) == []
    assert obj == once
    for error in COMPILED.validate(obj, old=old):
        assert error.message.startswith(error.field + ": ")


@QUICK
@given(st.dictionaries(st.sampled_from(_KEYS), JSON, max_size=4))
def test_defaults_never_overwrite_given_values(obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    before = dict(spec) if isinstance(spec, dict) else None
    COMPILED.apply_defaults(obj)
    if before is not None:
        for key, value in before.items():
            if value is not None or key == "name":  # "name" is nullable: null stays null
                assert obj["spec"][key] == value


_SCHEMA_KEYS = [
    "type",
    "properties",
    "items",
    "required",
    "default",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "anyOf",
    "not",
    "additionalProperties",
    "enum",
    "minimum",
    "pattern",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "metadata",
    "nullable",
]
_SCHEMA_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-2, 2)
    | st.sampled_from(["object", "array", "string", "integer", "set", "map", "(", "name"])
)
SCHEMAS = st.recursive(
    _SCHEMA_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(_SCHEMA_KEYS), inner, max_size=4)
    ),
    max_leaves=15,
)


@QUICK
@given(SCHEMAS, st.booleans())
def test_schema_checks_never_raise(schema: Any, status_enabled: bool) -> None:
    errors = validate_crd_schema(schema, "spec.validation", status_enabled=status_enabled)
    assert all(e.field.startswith("spec.validation") for e in errors)
    if isinstance(schema, dict) and not errors:
        compile_schema(schema)  # a schema that passes the checks always compiles


@QUICK
@given(
    st.sampled_from(["spec", "spec.names", "spec.versions", "status", "metadata"]),
    JSON,
)
def test_crd_functions_never_raise_on_malformed_crds(field: str, value: Any) -> None:
    crd: dict[str, Any] = {
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": True, "storage": True}],
        },
    }
    parent, _, last = field.rpartition(".")
    (crd[parent] if parent else crd)[last] = value
    defaulted = crds.default_crd(crd)
    crds.validate_crd(defaulted, defaulted)
    crds.accept_names(defaulted, [defaulted])
    crds.resource_infos(defaulted)


def test_malformed_schema_keywords_are_schema_errors() -> None:
    for schema in ({"minimum": "one"}, {"enum": "a"}, {"properties": []}, {"maxLength": 1.5}):
        try:
            compile_schema(schema)
        except SchemaError as error:
            assert str(error)
        else:
            raise AssertionError(f"{schema} compiled")
