"""Objects and lists turned into ``meta.k8s.io`` Tables, as the API server's table handlers do.

:func:`table_version` reads the Table version a client asks for in ``Accept``
(``application/json;as=Table;v=v1;g=meta.k8s.io``, or ``v1beta1``); :func:`printer_for` picks
the printer of a served resource (its kind's columns, the CRD's printer columns, or the default
Name / Created At). :class:`TableWriter` builds the Table of a list (keeping ``resourceVersion``,
``continue`` and ``remainingItemCount``) or of one object, with each row's ``object`` as
``includeObject`` asks (``Metadata`` by default: a ``PartialObjectMetadata``; ``Object``: the
whole object; ``None``: nothing). Watch streams get one Table per event, the column definitions
only in the first (``handlers/response.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from setpoint.api.clock import SYSTEM_CLOCK, Clock
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.kinds.events import to_core
from setpoint.cluster.apiserver.printers.apps import APPS_PRINTERS
from setpoint.cluster.apiserver.printers.batch import BATCH_PRINTERS
from setpoint.cluster.apiserver.printers.columns import (
    CREATED_DESCRIPTION,
    NAME_COLUMN,
    Column,
    Printer,
    meta,
    text,
)
from setpoint.cluster.apiserver.printers.control_plane import CONTROL_PLANE_PRINTERS
from setpoint.cluster.apiserver.printers.core import CORE_PRINTERS, ENDPOINT_SLICES
from setpoint.cluster.apiserver.printers.custom import custom_printer
from setpoint.cluster.apiserver.printers.infrastructure import INFRASTRUCTURE_PRINTERS
from setpoint.cluster.apiserver.printers.platform import PLATFORM_PRINTERS, SCALE
from setpoint.cluster.apiserver.printers.rbac import RBAC_PRINTERS
from setpoint.cluster.apiserver.printers.resource_metrics import RESOURCE_METRICS_PRINTERS
from setpoint.cluster.apiserver.printers.storage import STORAGE_PRINTERS
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

TABLE_GROUP: Final = "meta.k8s.io"
TABLE_VERSIONS: Final = ("v1", "v1beta1")
INCLUDE_OBJECT_VALUES: Final = ("", "None", "Metadata", "Object")

_PRINTERS: Final[dict[tuple[str, str], Printer]] = {
    **{("", plural): printer for plural, printer in CORE_PRINTERS.items()},
    **{("apps", plural): printer for plural, printer in APPS_PRINTERS.items()},
    **{("batch", plural): printer for plural, printer in BATCH_PRINTERS.items()},
    **{("rbac.authorization.k8s.io", plural): printer for plural, printer in RBAC_PRINTERS.items()},
    **PLATFORM_PRINTERS,
    **STORAGE_PRINTERS,
    **CONTROL_PLANE_PRINTERS,
    **INFRASTRUCTURE_PRINTERS,
    **RESOURCE_METRICS_PRINTERS,
    ("events.k8s.io", "events"): CORE_PRINTERS["events"],
    ("discovery.k8s.io", "endpointslices"): ENDPOINT_SLICES,
}


#: Go's zero time in RFC 3339, what an unset creationTimestamp prints as.
_ZERO_TIME: Final = "0001-01-01T00:00:00Z"


def _created_at(obj: dict[str, Any], now: datetime) -> list[Any]:
    metadata = meta(obj)
    created = metadata.get("creationTimestamp")
    return [text(metadata.get("name")), created if isinstance(created, str) else _ZERO_TIME]


#: ``rest.NewDefaultTableConvertor``: kinds without a printer (roles, CRDs, ...).
DEFAULT_PRINTER: Final = Printer(
    (NAME_COLUMN, Column("Created At", type="date", description=CREATED_DESCRIPTION)),
    _created_at,
)
_CUSTOM_PRINTERS: dict[tuple[tuple[str, str, str, str, int], ...], Printer] = {}


def table_version(accept: str | None) -> str | None:
    """The Table version (``v1``/``v1beta1``) the ``Accept`` header asks for first, else None."""
    if not accept or "as=Table" not in accept:
        return None
    for item in accept.split(","):
        media, *raw = (part.strip() for part in item.split(";"))
        params = dict(p.replace(" ", "").partition("=")[::2] for p in raw)
        if params.get("as") != "Table":
            if media in ("application/json", "*/*", "application/*") and "as" not in params:
                return None  # the client prefers plain objects
            continue
        if params.get("g") == TABLE_GROUP and params.get("v") in TABLE_VERSIONS:
            return params["v"]
    return None


def printer_for(resource: ServedResource) -> Printer:
    """The printer of ``resource``'s objects."""
    if resource.is_custom:
        key = tuple(
            (
                text(c.get("name")),
                text(c.get("type")),
                text(c.get("format")),
                text(c.get("jsonPath")) + "\0" + text(c.get("description")),
                int(c.get("priority") or 0),
            )
            for c in resource.printer_columns
        )
        found = _CUSTOM_PRINTERS.get(key)
        if found is None:
            found = _CUSTOM_PRINTERS[key] = custom_printer(resource.printer_columns)
        return found
    return _PRINTERS.get((resource.group, resource.plural), DEFAULT_PRINTER)


def check_include_object(value: str) -> str:
    """``includeObject`` if valid, else the 400 upstream answers."""
    if value not in INCLUDE_OBJECT_VALUES:
        raise status_errors.bad_request(f'unrecognized includeObject value: "{value}"')
    return value


class TableWriter:
    """Builds the Tables of one request (one resource, one Table version, one includeObject)."""

    def __init__(
        self,
        resource: ServedResource,
        version: str,
        include_object: str = "",
        clock: Clock = SYSTEM_CLOCK,
        subresource: str = "",
    ) -> None:
        self.resource = resource
        self.version = version
        self.include_object = check_include_object(include_object)
        self.printer = SCALE if subresource == "scale" else printer_for(resource)
        self._subresource = subresource
        self._clock = clock
        self._events_api = resource.group == "events.k8s.io" and not subresource
        #: Watch streams send the column definitions only once.
        self.headers_sent = False

    def _row(self, obj: dict[str, Any], now: datetime) -> dict[str, Any]:
        printed = to_core(obj) if self._events_api else obj
        row: dict[str, Any] = {"cells": self.printer.cells(printed, now)}
        conditions = self.printer.conditions(printed)
        if conditions:
            row["conditions"] = conditions
        if self.include_object == "Object":
            full = dict(obj)
            if not self._subresource:
                full.setdefault("apiVersion", self.resource.api_version)
                full.setdefault("kind", self.resource.kind)
            row["object"] = full
        elif self.include_object != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": f"{TABLE_GROUP}/{self.version}",
                "metadata": meta(obj),
            }
        return row

    def _table(self, rows: list[dict[str, Any]], metadata: dict[str, Any]) -> dict[str, Any]:
        columns = None
        if not self.headers_sent:
            columns = [column.definition() for column in self.printer.columns]
        return {
            "kind": "Table",
            "apiVersion": f"{TABLE_GROUP}/{self.version}",
            "metadata": metadata,
            "columnDefinitions": columns,
            "rows": rows,
        }

    def of_list(self, listed: Mapping[str, Any]) -> dict[str, Any]:
        """The Table of a list response."""
        now = self._clock.now()
        found = listed.get("items")
        rows = [self._row(item, now) for item in found if isinstance(item, dict)] if found else []
        list_meta = listed.get("metadata")
        metadata = {
            key: value
            for key, value in (list_meta.items() if isinstance(list_meta, Mapping) else ())
            if key in ("resourceVersion", "continue", "remainingItemCount")
        }
        return self._table(rows, metadata)

    def of_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The Table of one object (a get, or one watch event)."""
        version = meta(obj).get("resourceVersion")
        table = self._table(
            [self._row(obj, self._clock.now())],
            {"resourceVersion": version} if version else {},
        )
        return table

    def of_event(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The Table of one watch event: headers in the first only."""
        table = self.of_object(obj)
        self.headers_sent = True
        return table
