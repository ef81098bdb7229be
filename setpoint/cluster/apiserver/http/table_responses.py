"""Table responses: the bridge between a request that asks for a Table and the ``printers``.

A GET of a list, of one object, or a watch, whose ``Accept`` asks for a ``meta.k8s.io`` Table
gets its JSON body rewritten into one (see :mod:`setpoint.cluster.apiserver.printers`);
``includeObject`` comes from the query. Requests that do not ask for a Table are untouched.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from aiohttp import web

from setpoint.cluster.apiserver.printers import TableWriter, table_version
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

_DECODER = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()


class TableBodies:
    """JSON bodies of one Table request."""

    def __init__(self, writer: TableWriter) -> None:
        self._writer = writer

    def list_body(self, listed: bytes) -> bytes:
        """A list response as a Table."""
        return _ENCODER.encode(self._writer.of_list(_DECODER.decode(listed)))

    def object_body(self, found: bytes) -> bytes:
        """One object as a Table of one row."""
        return _ENCODER.encode(self._writer.of_object(_DECODER.decode(found)))

    def event_transform(self) -> Callable[[bytes], bytes]:
        """Each watch event's object as a Table (column definitions in the first only)."""

        def transform(value: bytes) -> bytes:
            return _ENCODER.encode(self._writer.of_event(_DECODER.decode(value)))

        return transform


def table_writer(
    request: web.BaseRequest, resource: ServedResource, subresource: str = ""
) -> TableBodies | None:
    """The Table bodies of ``request`` if it asks for a Table, else None."""
    version = table_version(request.headers.get("Accept"))
    if version is None:
        return None
    include = request.query.get("includeObject", "")
    return TableBodies(TableWriter(resource, version, include, subresource=subresource))
