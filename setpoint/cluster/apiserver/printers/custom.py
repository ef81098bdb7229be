"""Tables of custom resources: a Name column, then the CRD version's ``additionalPrinterColumns``
(or the default Age column), each cell found by the column's JSONPath and typed as
apiextensions-apiserver's ``tableconvertor`` types it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from setpoint.api.times import parse_time
from setpoint.cluster.apiserver.printers import json_path
from setpoint.cluster.apiserver.printers.columns import (
    NAME_COLUMN,
    Column,
    Printer,
    human_duration,
    meta,
    text,
)


def _cell(kind: str, value: Any, now: datetime) -> Any:
    if value is None:
        return None
    if kind == "string":
        return json_path.print_value(value)
    if kind == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        return int(value) if isinstance(value, float) else None
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        if not isinstance(value, str):
            return None
        try:
            moment = parse_time(value)
        except ValueError:
            return "<invalid>"
        return human_duration((now - moment).total_seconds())
    return None


def custom_printer(columns: Sequence[Mapping[str, Any]]) -> Printer:
    """The printer of a custom resource version with these printer columns."""
    definitions = [NAME_COLUMN]
    paths: list[tuple[str, str]] = []
    for column in columns:
        path = text(column.get("jsonPath"))
        description = text(column.get("description")) or (
            f"Custom resource definition column (in JSONPath format): {path}"
        )
        definitions.append(
            Column(
                text(column.get("name")),
                type=text(column.get("type")),
                format=text(column.get("format")),
                description=description,
                priority=int(column.get("priority") or 0),
            )
        )
        paths.append((path, text(column.get("type"))))

    def cells(obj: dict[str, Any], now: datetime) -> list[Any]:
        row: list[Any] = [text(meta(obj).get("name"))]
        for path, kind in paths:
            try:
                found = json_path.find(obj, path)
            except json_path.JSONPathError:
                found = []
            row.append(_cell(kind, found[0], now) if found else None)
        return row

    return Printer(tuple(definitions), cells)
