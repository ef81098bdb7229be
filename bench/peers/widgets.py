"""The Widget custom resource of the benchmark: its CRD, the objects, and the convergence check.

A Widget is converged when its status says ``Ready`` for its current generation and its child
ConfigMap exists, is controlled by it, and holds the data its spec asks for. The harness checks
that with two lists (Widgets and ConfigMaps), sent with its own user agent so they are not
counted against any contestant.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any, Final

import aiohttp

from bench.peers.cluster import Cluster
from bench.peers.widget_logic import (
    API_VERSION,
    GROUP,
    KIND,
    PLURAL,
    READY,
    VERSION,
    child_data,
    child_name,
)  # fmt: skip

#: Requests in flight when the harness creates or patches Widgets.
WRITE_CONCURRENCY: Final = 32
MERGE_PATCH: Final = "application/merge-patch+json"


def crd() -> dict[str, Any]:
    """The Widget CRD: namespaced, one version, with the status subresource."""
    spec_schema = {
        "type": "object",
        "properties": {
            "size": {"type": "integer"},
            "color": {"type": "string"},
            "message": {"type": "string"},
        },
    }
    status_schema = {
        "type": "object",
        "properties": {"phase": {"type": "string"}, "observedGeneration": {"type": "integer"}},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "widget", "kind": KIND},
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": spec_schema, "status": status_schema},
                        }
                    },
                }
            ],
        },
    }


def widget(namespace: str, name: str, index: int) -> dict[str, Any]:
    """One Widget with a small spec."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"size": index, "color": "blue", "message": f"hello {index}"},
    }


async def _send(cluster: Cluster, method: str, path: str, body: Any, patch: bool = False) -> int:
    headers = {"Content-Type": MERGE_PATCH if patch else "application/json"}
    async with cluster.session.request(
        method, cluster.url + path, data=json.dumps(body), headers=headers
    ) as response:
        await response.read()
        return response.status


async def _all(calls: list[Any]) -> None:
    semaphore = asyncio.Semaphore(WRITE_CONCURRENCY)

    async def one(call: Any) -> None:
        async with semaphore:
            await call

    await asyncio.gather(*(one(call) for call in calls))


def widgets_path(namespace: str) -> str:
    return f"/apis/{API_VERSION}/namespaces/{namespace}/{PLURAL}"


async def install(cluster: Cluster) -> None:
    """Create the CRD (once per cluster) and wait until Widgets are served."""
    await _send(cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
    for _ in range(600):
        async with cluster.session.get(cluster.url + widgets_path("default")) as response:
            if response.status == 200:
                return
        await asyncio.sleep(0.1)
    raise RuntimeError("the Widget CRD was not served within 60 s")


async def create_namespace(cluster: Cluster, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    code = await _send(cluster, "POST", "/api/v1/namespaces", body)
    if code not in (201, 409):
        raise RuntimeError(f"creating namespace {namespace}: HTTP {code}")


async def create_widgets(
    cluster: Cluster, namespace: str, names: list[str], first: int = 0
) -> None:
    path = widgets_path(namespace)
    await _all(
        [
            _send(cluster, "POST", path, widget(namespace, name, first + i))
            for i, name in enumerate(names)
        ]
    )


async def change_all(cluster: Cluster, namespace: str, names: list[str], round_: int) -> None:
    """The storm: a new ``spec.message`` on every Widget."""
    path = widgets_path(namespace)
    await _all(
        [
            _send(
                cluster, "PATCH", f"{path}/{name}", {"spec": {"message": f"storm {round_}"}}, True
            )
            for name in names
        ]
    )


async def _list(cluster: Cluster, path: str) -> list[dict[str, Any]]:
    async with cluster.session.get(cluster.url + path) as response:
        response.raise_for_status()
        items: list[dict[str, Any]] = (await response.json())["items"]
        return items


@dataclass
class Convergence:
    """How many Widgets are converged, and how many children are missing or duplicated."""

    widgets: int
    converged: int
    children: int
    orphans: int

    @property
    def done(self) -> bool:
        return self.widgets > 0 and self.converged == self.widgets


async def convergence(cluster: Cluster, namespace: str) -> Convergence:
    """Check every Widget of ``namespace`` (two lists)."""
    widgets = await _list(cluster, widgets_path(namespace))
    maps = await _list(cluster, f"/api/v1/namespaces/{namespace}/configmaps")
    by_name = {cm["metadata"]["name"]: cm for cm in maps}
    uids = {w["metadata"]["uid"] for w in widgets}
    converged = 0
    for item in widgets:
        metadata = item["metadata"]
        status = item.get("status") or {}
        if (
            status.get("phase") != READY
            or status.get("observedGeneration") != metadata["generation"]
        ):
            continue
        child = by_name.get(child_name(metadata["name"]))
        if child is None or child.get("data") != child_data(item.get("spec") or {}):
            continue
        owners = child["metadata"].get("ownerReferences") or []
        if any(ref.get("controller") and ref.get("uid") == metadata["uid"] for ref in owners):
            converged += 1
    children = [cm for cm in maps if cm["metadata"]["name"].endswith("-data")]
    orphans = sum(
        1
        for cm in children
        if not any(ref.get("uid") in uids for ref in cm["metadata"].get("ownerReferences") or [])
    )
    return Convergence(len(widgets), converged, len(children), orphans)


async def child_exists(cluster: Cluster, namespace: str, widget_name: str) -> bool:
    path = f"/api/v1/namespaces/{namespace}/configmaps/{child_name(widget_name)}"
    try:
        async with cluster.session.get(cluster.url + path) as response:
            await response.read()
            return response.status == 200
    except aiohttp.ClientError:
        return False


class Tracker:
    """Follows one namespace's Widgets and ConfigMaps with two watches (list, then watch).

    Knowing which Widgets are converged costs the API server two watch streams instead of two
    full lists per check; each event re-checks only the Widget it concerns. After a dropped
    stream (the fault scenario kills the server) it lists and watches again.
    """

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.widgets: dict[str, dict[str, Any]] = {}
        self.children: dict[str, dict[str, Any]] = {}
        self.converged: set[str] = set()
        self.changed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._synced = [asyncio.Event(), asyncio.Event()]

    async def start(self) -> None:
        paths = (widgets_path(self.namespace), f"/api/v1/namespaces/{self.namespace}/configmaps")
        stores = (self.widgets, self.children)
        for index, (path, store) in enumerate(zip(paths, stores, strict=True)):
            self._tasks.append(asyncio.create_task(self._follow(path, store, index)))
        await asyncio.gather(*(event.wait() for event in self._synced))

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _check(self, name: str) -> None:
        item = self.widgets.get(name)
        ok = False
        if item is not None:
            metadata = item["metadata"]
            status = item.get("status") or {}
            child = self.children.get(child_name(name))
            ok = (
                status.get("phase") == READY
                and status.get("observedGeneration") == metadata["generation"]
                and child is not None
                and child.get("data") == child_data(item.get("spec") or {})
                and any(
                    ref.get("controller") and ref.get("uid") == metadata["uid"]
                    for ref in child["metadata"].get("ownerReferences") or []
                )
            )
        if ok:
            self.converged.add(name)
        else:
            self.converged.discard(name)

    def _apply(self, store: dict[str, dict[str, Any]], kind: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if kind == "DELETED":
            store.pop(name, None)
        else:
            store[name] = obj
        widget_name = name if store is self.widgets else name.removesuffix("-data")
        self._check(widget_name)
        self.changed.set()

    async def _follow(self, path: str, store: dict[str, dict[str, Any]], index: int) -> None:
        while True:
            try:
                async with self.cluster.session.get(self.cluster.url + path) as response:
                    response.raise_for_status()
                    listed = await response.json()
                store.clear()
                for obj in listed["items"]:
                    self._apply(store, "ADDED", obj)
                for name in list(self.converged):
                    self._check(name)
                self._synced[index].set()
                version = listed["metadata"]["resourceVersion"]
                query = f"?watch=1&resourceVersion={version}&timeoutSeconds=3600"
                async with self.cluster.session.get(
                    self.cluster.url + path + query, timeout=aiohttp.ClientTimeout(total=None)
                ) as response:
                    response.raise_for_status()
                    async for line in response.content:
                        if not line.strip():
                            continue
                        event = json.loads(line)
                        if event["type"] == "ERROR":
                            break
                        if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                            self._apply(store, event["type"], event["object"])
            except (aiohttp.ClientError, OSError, ValueError, KeyError):
                await asyncio.sleep(0.1)

    def state(self) -> Convergence:
        return Convergence(len(self.widgets), len(self.converged), 0, 0)
