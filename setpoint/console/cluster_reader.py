"""What the Resources and Cluster views read from the API server, as the page's JSON.

Lists come one page at a time (``limit`` + ``continue``, so 10,000 objects cost one page to
show); a watch started at the page's resourceVersion keeps it live. An object comes with its
YAML, its owner chain (followed up through ``ownerReferences``), its children (objects of its
namespace whose ``ownerReferences`` name its uid) and its Events. A 403 is an answer, not a
failure: the page shows what is forbidden.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import yaml

from setpoint.client import ApiError, Client, Forbidden, Gone, NotFound
from setpoint.console.catalog import ServedKind
from setpoint.console.summary import object_row

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "children_of",
    "cluster_overview",
    "events_of",
    "list_page",
    "object_detail",
    "owner_chain",
    "watch_rows",
]

#: Rows per page of the Resources view: enough to scroll, small enough to paint at once.
DEFAULT_PAGE_SIZE = 100
#: Owner chains longer than this are cut (a loop of ownerReferences must not hang the page).
MAX_OWNER_DEPTH = 8
#: Kinds searched for children at once.
CHILD_SEARCH_CONCURRENCY = 8


def forbidden_answer(error: ApiError) -> dict[str, Any]:
    """The page's JSON for a refused read: ``{"forbidden": message}``."""
    return {"forbidden": error.message, "code": error.code}


async def list_page(
    client: Client,
    api_version: str,
    kind: str,
    *,
    namespace: str | None,
    limit: int = DEFAULT_PAGE_SIZE,
    continue_token: str | None = None,
) -> dict[str, Any]:
    """One page of rows, with the list's resourceVersion (to watch from) and continue token."""
    try:
        page = await client.list(
            api_version, kind, namespace=namespace, limit=limit, continue_token=continue_token
        )
    except Forbidden as refused:
        return forbidden_answer(refused)
    remaining = page.metadata.get("remainingItemCount")
    return {
        "items": [object_row(item) for item in page.items],
        "resourceVersion": page.resource_version,
        "continue": page.continue_token,
        "remaining": remaining if isinstance(remaining, int) else None,
    }


async def watch_rows(
    client: Client, api_version: str, kind: str, *, namespace: str | None, resource_version: str
) -> AsyncIterator[dict[str, Any]]:
    """The changes after ``resource_version`` as ``{"type", "row"}``; one ``{"type":
    "RELIST"}`` and the end when the server has compacted past it (410)."""
    try:
        async for event in client.watch(
            api_version, kind, namespace=namespace, resource_version=resource_version
        ):
            yield {"type": str(event.type), "row": object_row(event.object)}
    except Gone:
        yield {"type": "RELIST"}


def _without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    shown = dict(obj)
    metadata = dict(shown.get("metadata") or {})
    metadata.pop("managedFields", None)
    shown["metadata"] = metadata
    return shown


async def owner_chain(client: Client, obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The controller owner (else the first owner) of ``obj``, its owner, and so on up."""
    chain: list[dict[str, Any]] = []
    current: Mapping[str, Any] = obj
    seen = {(obj.get("metadata") or {}).get("uid")}
    while len(chain) < MAX_OWNER_DEPTH:
        metadata = current.get("metadata") or {}
        references = [r for r in metadata.get("ownerReferences") or [] if isinstance(r, Mapping)]
        if not references:
            break
        reference = next((r for r in references if r.get("controller")), references[0])
        link: dict[str, Any] = {
            "apiVersion": reference.get("apiVersion"),
            "kind": reference.get("kind"),
            "name": reference.get("name"),
            "namespace": metadata.get("namespace"),
            "uid": reference.get("uid"),
        }
        chain.append(link)
        if reference.get("uid") in seen:
            break
        seen.add(reference.get("uid"))
        try:
            current = await client.get(
                str(reference.get("apiVersion")),
                str(reference.get("kind")),
                str(reference.get("name")),
                namespace=metadata.get("namespace"),
            )
        except NotFound:
            link["missing"] = True
            break
        except ApiError as refused:
            link["forbidden"] = refused.message
            break
        except LookupError:  # a kind the server does not serve (NoKindMatch)
            link["missing"] = True
            break
        link["namespace"] = (current.get("metadata") or {}).get("namespace")
    return chain


async def children_of(
    client: Client, kinds: list[ServedKind], namespace: str | None, uid: str
) -> dict[str, Any]:
    """Objects whose ``ownerReferences`` name ``uid``: in ``namespace`` for namespaced kinds
    (an owner in a namespace owns only objects of that namespace), else cluster-wide."""
    limit = asyncio.Semaphore(CHILD_SEARCH_CONCURRENCY)
    forbidden: list[str] = []

    async def search(served: ServedKind) -> list[dict[str, Any]]:
        if served.namespaced and namespace is None:
            return []
        async with limit:
            try:
                found = await client.list(
                    served.apiVersion,
                    served.kind,
                    namespace=namespace if served.namespaced else None,
                )
            except Forbidden:
                forbidden.append(served.kind)
                return []
            except ApiError:
                return []
        rows = []
        for item in found.items:
            references = (item.get("metadata") or {}).get("ownerReferences") or []
            if any(isinstance(r, Mapping) and r.get("uid") == uid for r in references):
                rows.append(
                    {"apiVersion": served.apiVersion, "kind": served.kind, **object_row(item)}
                )
        return rows

    candidates = [k for k in kinds if k.kind not in ("Event", "Lease")]
    results = await asyncio.gather(*(search(served) for served in candidates))
    return {"children": [row for rows in results for row in rows], "forbiddenKinds": forbidden}


async def events_of(client: Client, namespace: str | None, uid: str) -> dict[str, Any]:
    """The core/v1 Events whose ``involvedObject.uid`` is ``uid``, oldest first."""
    try:
        found = await client.list(
            "v1", "Event", namespace=namespace, field_selector=f"involvedObject.uid={uid}"
        )
    except Forbidden as refused:
        return forbidden_answer(refused)
    events = []
    for event in found.items:
        events.append(
            {
                "type": event.get("type"),
                "reason": event.get("reason"),
                "message": event.get("message"),
                "count": event.get("count") or 1,
                "source": (event.get("source") or {}).get("component")
                or event.get("reportingComponent"),
                "firstTime": event.get("firstTimestamp") or event.get("eventTime"),
                "lastTime": event.get("lastTimestamp") or event.get("eventTime"),
            }
        )
    events.sort(key=lambda e: str(e["lastTime"] or ""))
    return {"events": events, "resourceVersion": found.resource_version}


async def object_detail(
    client: Client, api_version: str, kind: str, name: str, namespace: str | None
) -> dict[str, Any]:
    """The object as YAML (managedFields left out), its row and its owner chain."""
    try:
        obj = await client.get(api_version, kind, name, namespace=namespace)
    except Forbidden as refused:
        return forbidden_answer(refused)
    except NotFound as missing:
        return {"notFound": missing.message}
    shown = _without_managed_fields(obj)
    return {
        "row": object_row(obj),
        "yaml": yaml.safe_dump(shown, sort_keys=False, default_flow_style=False),
        "owners": await owner_chain(client, obj),
    }


def _pod_row(pod: Mapping[str, Any]) -> dict[str, Any]:
    row = object_row(pod)
    spec = pod.get("spec") or {}
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    row["node"] = spec.get("nodeName")
    ready = sum(1 for s in statuses if s.get("ready"))
    row["ready"] = f"{ready}/{len(spec.get('containers') or [])}"
    row["restarts"] = sum(int(s.get("restartCount") or 0) for s in statuses)
    return row


async def cluster_overview(client: Client) -> dict[str, Any]:
    """Nodes, pods with their phases (and counts per phase), and the built-in controllers'
    recent Events (the Events their components reported)."""
    answer: dict[str, Any] = {}
    try:
        nodes = await client.list("v1", "Node")
        answer["nodes"] = [object_row(node) for node in nodes.items]
    except Forbidden as refused:
        answer["nodes"] = forbidden_answer(refused)
    try:
        pods = await client.list("v1", "Pod")
        rows = [_pod_row(pod) for pod in pods.items]
        phases: dict[str, int] = {}
        for row in rows:
            phases[row["phase"] or "Unknown"] = phases.get(row["phase"] or "Unknown", 0) + 1
        answer["pods"] = rows
        answer["phases"] = phases
    except Forbidden as refused:
        answer["pods"] = forbidden_answer(refused)
    try:
        events = await client.list("v1", "Event")
        recent = sorted(
            events.items,
            key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""),
        )[-50:]
        answer["controllerEvents"] = [
            {
                "component": (e.get("source") or {}).get("component")
                or e.get("reportingComponent"),
                "type": e.get("type"),
                "reason": e.get("reason"),
                "object": f"{(e.get('involvedObject') or {}).get('kind')}/"
                f"{(e.get('involvedObject') or {}).get('name')}",
                "namespace": (e.get("involvedObject") or {}).get("namespace"),
                "message": e.get("message"),
                "time": e.get("lastTimestamp") or e.get("eventTime"),
            }
            for e in reversed(recent)
        ]
    except Forbidden as refused:
        answer["controllerEvents"] = forbidden_answer(refused)
    return answer
