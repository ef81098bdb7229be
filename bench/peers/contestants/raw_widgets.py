"""The floor: the fewest requests that converge the Widgets, with no framework and no watch.

    KUBECONFIG=F BENCH_NAMESPACE=NS python -m bench.peers.contestants.raw_widgets

One list of the Widgets; then, for every Widget whose ``status.observedGeneration`` is not its
generation, the child is written (created when the Widget has no status yet, else merge-patched)
and the status merge-patched, all at once (one connection pool, no limit but aiohttp's 100
connections). Exits when done: it never sees later changes.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Final

import aiohttp
import yaml

from bench.peers.widget_logic import API_VERSION, PLURAL, child_data, child_name, ready_status

USER_AGENT: Final = "bench-raw/1.0"
MERGE_PATCH: Final = "application/merge-patch+json"


class Raw:
    """Requests to the API server with the kubeconfig's token."""

    def __init__(self, session: aiohttp.ClientSession, server: str, namespace: str) -> None:
        self.session = session
        self.server = server
        self.namespace = namespace

    async def send(self, method: str, path: str, body: Any = None, patch: bool = False) -> int:
        headers = {"Content-Type": MERGE_PATCH if patch else "application/json"}
        data = None if body is None else json.dumps(body)
        async with self.session.request(
            method, self.server + path, data=data, headers=headers
        ) as response:
            await response.read()
            return response.status

    async def converge(self, widget: dict[str, Any]) -> None:
        metadata = widget["metadata"]
        name, generation = metadata["name"], metadata["generation"]
        status = widget.get("status") or {}
        if status.get("observedGeneration") == generation:
            return
        data = child_data(widget.get("spec") or {})
        children = f"/api/v1/namespaces/{self.namespace}/configmaps"
        if not status:
            owner = {
                "apiVersion": API_VERSION,
                "kind": widget["kind"],
                "name": name,
                "uid": metadata["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
            child = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": child_name(name), "ownerReferences": [owner]},
                "data": data,
            }
            code = await self.send("POST", children, child)
        else:
            code = await self.send("PATCH", f"{children}/{child_name(name)}", {"data": data}, True)
        if code >= 300:
            raise RuntimeError(f"writing the child of {name}: HTTP {code}")
        widgets = f"/apis/{API_VERSION}/namespaces/{self.namespace}/{PLURAL}"
        code = await self.send(
            "PATCH", f"{widgets}/{name}/status", {"status": ready_status(generation)}, True
        )
        if code >= 300:
            raise RuntimeError(f"patching the status of {name}: HTTP {code}")


async def main() -> None:
    """List once, converge every Widget concurrently, exit."""
    config = yaml.safe_load(open(os.environ["KUBECONFIG"]))  # noqa: SIM115, ASYNC230
    server = config["clusters"][0]["cluster"]["server"]
    token = config["users"][0]["user"]["token"]
    namespace = os.environ["BENCH_NAMESPACE"]
    headers = {"Authorization": f"Bearer {token}", "User-Agent": USER_AGENT}
    async with aiohttp.ClientSession(headers=headers) as session:
        raw = Raw(session, server, namespace)
        path = f"/apis/{API_VERSION}/namespaces/{namespace}/{PLURAL}"
        async with session.get(server + path) as response:
            listed = await response.json()
        await asyncio.gather(*(raw.converge(widget) for widget in listed["items"]))


if __name__ == "__main__":
    asyncio.run(main())
