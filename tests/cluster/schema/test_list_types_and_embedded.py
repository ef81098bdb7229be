"""x-kubernetes-list-type invariants and embedded-resource checks of custom resources."""

from __future__ import annotations

from typing import Any

import pytest

from setpoint.cluster.apiserver.schema import validate

LISTS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                    },
                },
                "routes": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["host", "path"],
                    "items": {
                        "type": "object",
                        "properties": {"host": {"type": "string"}, "path": {"type": "string"}},
                    },
                },
                "groups": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "integer"},
                    },
                },
                "atomic": {"type": "array", "items": {"type": "string"}},
            },
        }
    },
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"tags": ["a", "b"]}, []),
        ({"tags": ["a", "a", "b", "a"]}, ['spec.tags[1]: Duplicate value: "a"']),
        (
            {"tags": ["a", "b", "b", "a"]},
            ['spec.tags[2]: Duplicate value: "b"', 'spec.tags[3]: Duplicate value: "a"'],
        ),
        (
            {"ports": [{"name": "http", "port": 1}, {"name": "http", "port": 2}]},
            ['spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}'],
        ),
        (
            {"ports": [{"port": 1}, {"port": 2}]},
            ["spec.ports[1]: Duplicate value: map[string]interface {}{}"],
        ),
        (
            {"ports": [{"name": "a"}, "oops"]},
            [
                'spec.ports[1]: Invalid value: "string": spec.ports[1] in body must be of type '
                'object: "string"',
                'spec.ports[1]: Invalid value: "oops": must be an object for an array of '
                "list-type map",
            ],
        ),
        (
            {"routes": [{"host": "h", "path": "/"}, {"host": "h", "path": "/x"}]},
            [],
        ),
        (
            {"routes": [{"host": "h", "path": "/"}, {"host": "h", "path": "/"}]},
            ['spec.routes[1]: Duplicate value: map[string]interface {}{"host":"h", "path":"/"}'],
        ),
        ({"groups": {"g": [1, 1]}}, ["spec.groups[g][1]: Duplicate value: 1"]),
        ({"atomic": ["a", "a"]}, []),
    ],
)
def test_list_types(spec: dict[str, Any], expected: list[str]) -> None:
    assert [error.message for error in validate(LISTS, {"spec": spec})] == expected


def test_duplicates_are_field_value_duplicate() -> None:
    errors = validate(LISTS, {"spec": {"tags": ["x", "x"]}})
    assert [(e.type, e.field, e.bad_value) for e in errors] == [
        ("FieldValueDuplicate", "spec.tags[1]", "x")
    ]


EMBEDDED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "children": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                },
            },
        }
    },
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, []),
        (
            {},
            [
                "spec.template.apiVersion: Required value: must not be empty",
                "spec.template.kind: Required value: must not be empty",
            ],
        ),
        (
            {"apiVersion": "", "kind": ""},
            [
                'spec.template.apiVersion: Invalid value: "": must not be empty',
                'spec.template.kind: Invalid value: "": must not be empty',
            ],
        ),
        (
            {"apiVersion": 1, "kind": "Pod"},
            ["spec.template.apiVersion: Invalid value: 1: must be a string"],
        ),
        (
            {"apiVersion": "a/b/c", "kind": "Pod"},
            [
                'spec.template.apiVersion: Invalid value: "a/b/c": '
                "unexpected GroupVersion string: a/b/c"
            ],
        ),
        (
            {"apiVersion": "v1", "kind": "Not_A_Kind"},
            [
                'spec.template.kind: Invalid value: "Not_A_Kind": may have mixed case, but should '
                "otherwise match: a DNS-1035 label must consist of lower case alphanumeric "
                "characters or '-', start with an alphabetic character, and end with an "
                "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ],
        ),
        (
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a/b"}},
            ["spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'"],
        ),
        (
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "Bad_NS"}},
            [
                'spec.template.metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 '
                "label must consist of lower case alphanumeric characters or '-', and must start "
                "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
                "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ],
        ),
        (
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"ok": "-bad-"}}},
            [
                'spec.template.metadata.labels: Invalid value: "-bad-": a valid label must be an '
                "empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
                "or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ],
        ),
        (
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 5}},
            [
                'spec.template.metadata: Invalid value: map[string]interface {}{"name":5}: '
                "json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"
            ],
        ),
    ],
)
def test_embedded_resource(template: dict[str, Any], expected: list[str]) -> None:
    messages = [error.message for error in validate(EMBEDDED, {"spec": {"template": template}})]
    assert messages == expected


def test_embedded_resources_in_lists() -> None:
    obj = {"spec": {"children": [{"apiVersion": "v1", "kind": "A"}, {"kind": "B"}]}}
    assert [e.message for e in validate(EMBEDDED, obj)] == [
        "spec.children[1].apiVersion: Required value: must not be empty"
    ]


def test_the_resource_itself_is_not_an_embedded_check() -> None:
    assert validate(EMBEDDED, {"spec": {}}) == []
