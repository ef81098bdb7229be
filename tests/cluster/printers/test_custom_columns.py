"""CRD printer columns: JSONPath lookup and typed cells (apiextensions ``tableconvertor``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from setpoint.cluster.apiserver.printers import table_version
from setpoint.cluster.apiserver.printers.custom import custom_printer
from setpoint.cluster.apiserver.printers.json_path import find, print_value

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
OBJ: dict[str, Any] = {
    "metadata": {
        "name": "w1",
        "creationTimestamp": "2026-01-01T11:00:00Z",
        "labels": {"app.kubernetes.io/name": "shop"},
    },
    "spec": {
        "size": 3,
        "ratio": 0.5,
        "big": 1e6,
        "on": True,
        "tags": ["a", "b"],
        "map": {"b": 1, "a": "<x>"},
    },
    "status": {
        "conditions": [
            {"type": "Synced", "status": "False"},
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T11:58:00Z"},
        ]
    },
}


@pytest.mark.parametrize(
    ("path", "found"),
    [
        (".spec.size", [3]),
        ("{.spec.size}", [3]),
        (".spec.missing", []),
        (".spec.size.deeper", []),
        (".spec.tags[1]", ["b"]),
        (".spec.tags[-1]", ["b"]),
        (".spec.tags[5]", []),
        (".spec.tags[*]", ["a", "b"]),
        (".metadata.labels['app.kubernetes.io/name']", ["shop"]),
        (".metadata.labels.app\\.kubernetes\\.io/name", ["shop"]),
        ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
        (".status.conditions[?(@.type!='Ready')].type", ["Synced"]),
        (".status.conditions[?(@.lastTransitionTime)].type", ["Ready"]),
    ],
)
def test_json_paths(path: str, found: list[Any]) -> None:
    assert find(OBJ, path) == found


@pytest.mark.parametrize(
    ("value", "printed"),
    [("x", "x"), (3, "3"), (0.5, "0.5"), (1e6, "1e+06"), (True, "true"), (None, "null"),
     (["a", "b"], '["a","b"]'), ({"b": 1, "a": "<x>"}, '{"a":"\\u003cx\\u003e","b":1}')],
)  # fmt: skip
def test_values_print_as_jsonpath_prints_them(value: Any, printed: str) -> None:
    assert print_value(value) == printed


def test_typed_cells_and_column_definitions() -> None:
    columns = [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio", "priority": 1},
        {"name": "SizeText", "type": "string", "jsonPath": ".spec.size"},
        {"name": "Tags", "type": "string", "jsonPath": ".spec.tags"},
        {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
        {"name": "NotBool", "type": "boolean", "jsonPath": ".spec.size"},
        {"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"},
        {
            "name": "Ready",
            "type": "string",
            "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
            "description": "Whether it is ready",
        },
        {"name": "Since", "type": "date", "jsonPath": ".status.conditions[1].lastTransitionTime"},
        {"name": "BadDate", "type": "date", "jsonPath": ".metadata.name"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    printer = custom_printer(columns)
    assert printer.cells(OBJ, NOW) == [
        "w1", 3, 0.5, "3", '["a","b"]', True, None, None, "True", "2m", "<invalid>", "60m",
    ]  # fmt: skip
    definitions = [column.definition() for column in printer.columns]
    assert definitions[0]["name"] == "Name" and definitions[0]["format"] == "name"
    assert definitions[2] == {
        "name": "Ratio",
        "type": "number",
        "format": "",
        "description": "Custom resource definition column (in JSONPath format): .spec.ratio",
        "priority": 1,
    }
    assert definitions[8]["description"] == "Whether it is ready"


@pytest.mark.parametrize(
    ("accept", "version"),
    [
        (
            "application/json;as=Table;v=v1;g=meta.k8s.io,"
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
            "v1",
        ),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io", "v1beta1"),
        ("application/json; as=Table; v=v1; g=meta.k8s.io", "v1"),
        ("application/json;as=Table;v=v2;g=meta.k8s.io, application/json", None),
        ("application/json", None),
        ("application/json, application/json;as=Table;v=v1;g=meta.k8s.io", None),
        (None, None),
    ],
)
def test_table_version_from_accept(accept: str | None, version: str | None) -> None:
    assert table_version(accept) == version
