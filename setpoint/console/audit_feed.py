"""The local cluster's audit feed (``/debug/setpoint/audit``): who wrote what, with diffs.

Only setpoint's local cluster serves it; on another cluster the answer is 404 and the timeline
says so (and falls back to the object's watch). Reading it is a ``get`` on that non-resource
URL, so a user without that right sees "forbidden", not an error page.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from setpoint.client import ApiError, Client, ConnectionFailed, Forbidden, NotFound
from setpoint.console.event_stream import read_events

__all__ = ["AUDIT_PATH", "AuditAnswer", "audit_records", "audit_stream"]

AUDIT_PATH = "/debug/setpoint/audit"
#: Why a cluster has no feed (a real cluster, or a local cluster from before the feed).
NO_FEED = "this cluster serves no audit feed (setpoint's local cluster does)"


@dataclass
class AuditAnswer:
    """Records read from the feed, or why there are none (``state`` other than ``"ok"``)."""

    state: str  # ok | unavailable | forbidden | error
    message: str = ""
    last_seq: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)


def _filters(namespace: str | None) -> dict[str, str]:
    return {"namespace": namespace} if namespace else {}


async def audit_records(client: Client, *, namespace: str | None, since: int = 0) -> AuditAnswer:
    """The ring's records after ``since`` (of ``namespace`` when given), oldest first."""
    try:
        answer = await client.request_json(
            "GET", AUDIT_PATH, params={"since": str(since), **_filters(namespace)}
        )
    except NotFound:
        return AuditAnswer("unavailable", NO_FEED)
    except Forbidden as refused:
        return AuditAnswer("forbidden", refused.message)
    except (ApiError, ConnectionFailed) as failed:
        return AuditAnswer("error", str(failed))
    if not isinstance(answer, dict):
        return AuditAnswer("error", "the audit feed answered something other than an object")
    records = [r for r in answer.get("records") or [] if isinstance(r, dict)]
    return AuditAnswer("ok", last_seq=int(answer.get("lastSeq") or 0), records=records)


async def audit_stream(
    client: Client, *, namespace: str | None, since: int
) -> AsyncIterator[dict[str, Any]]:
    """The records written after ``since``, as they come (``watch=1``)."""
    response = await client.transport.open_stream(
        "GET",
        AUDIT_PATH,
        params={"watch": "1", "since": str(since), **_filters(namespace)},
        accept="text/event-stream",
    )
    try:
        async for name, data in read_events(response):
            if name == "audit":
                record = json.loads(data)
                if isinstance(record, dict):
                    yield record
    finally:
        response.close()
