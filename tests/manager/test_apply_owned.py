"""Context.apply_owned over a cache and a recording transport (no cluster): the body it sends
carries exactly the controller reference ``set_controller_reference`` gives, whichever path
builds it, and the ownership checks still refuse what they refuse."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from setpoint.api.gvk import ResourceInfo
from setpoint.api.owners import CrossNamespaceOwnerError, set_controller_reference
from setpoint.cache import Cache, CacheOptions
from setpoint.client.client import Client
from setpoint.client.config import ClientConfig
from setpoint.client.transport import RawResponse
from setpoint.controller.reconcile import Request
from setpoint.manager.context import Context

CONFIG_MAPS = ResourceInfo(
    group="", version="v1", kind="ConfigMap", resource="configmaps", namespaced=True,
    list_kind="ConfigMapList",
)  # fmt: skip
NODES = ResourceInfo(
    group="", version="v1", kind="Node", resource="nodes", namespaced=False, list_kind="NodeList"
)
SECRETS = ResourceInfo(
    group="", version="v1", kind="Secret", resource="secrets", namespaced=True,
    list_kind="SecretList",
)  # fmt: skip
PRIMARY = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "p", "namespace": "ns", "uid": "uid-p", "resourceVersion": "5"},
    "data": {"a": "1"},
}
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "uid": "uid-n1", "resourceVersion": "6"},
}


class _Resources:
    generation = 1

    def cached_resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        return {"ConfigMap": CONFIG_MAPS, "Node": NODES, "Secret": SECRETS}[kind]

    async def resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        return self.cached_resource_for(api_version, kind)


class _ListWatch:
    """Lists the primary objects from memory; watches stay silent."""

    mapper = _Resources()

    async def list_raw(
        self, resource: ResourceInfo, namespace: str | None = None, **_: Any
    ) -> bytes:
        items = {"configmaps": [PRIMARY], "nodes": [NODE]}.get(resource.resource, [])
        return msgspec.json.encode({"metadata": {"resourceVersion": "10"}, "items": items})

    async def watch_raw(
        self, resource: ResourceInfo, namespace: str | None = None, **_: Any
    ) -> AsyncIterator[bytes]:
        yield b""
        await asyncio.Event().wait()


class _Transport:
    """Answers each write with its own body plus a uid and a resourceVersion; keeps the bodies."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any]] = []
        self.headers = CIMultiDictProxy(CIMultiDict({"Content-Type": "application/json"}))

    async def request(self, method: str, path: str, **kwargs: Any) -> RawResponse:
        self.sent.append((method, path, msgspec.json.decode(kwargs["body"])))
        body = msgspec.json.decode(kwargs["body"])
        body["metadata"].update(uid="uid-child", resourceVersion="11")
        return RawResponse(200, self.headers, msgspec.json.encode(body))


class _Manager:
    def __init__(self, client: Client, cache: Cache) -> None:
        self.client = client
        self.cache = cache
        self.clock = None


@pytest.fixture
async def wired() -> AsyncIterator[tuple[_Transport, _Manager]]:
    transport = _Transport()
    client = Client(ClientConfig(server="http://127.0.0.1:1"), transport)  # type: ignore[arg-type]
    client.mapper = _Resources()  # type: ignore[assignment]
    cache = Cache(_ListWatch(), CacheOptions())  # type: ignore[arg-type]
    await cache.start()
    try:
        yield transport, _Manager(client, cache)
    finally:
        await cache.stop()


def _context(manager: _Manager, kind: str = "ConfigMap", request: Request | None = None) -> Context:
    return Context(
        manager,  # type: ignore[arg-type]
        "c",
        request or Request("ns", "p"),
        api_version="v1",
        kind=kind,
        field_manager="m",
    )


def _expected(owner: dict[str, Any], child: dict[str, Any], namespace: str | None) -> Any:
    expected = copy.deepcopy(child)
    if namespace and not expected["metadata"].get("namespace"):
        expected["metadata"]["namespace"] = namespace
    set_controller_reference(owner, expected)
    return expected


CHILDREN = {
    "plain": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}, "data": {}},
    "own namespace": {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c", "namespace": "ns"},
    },
    "other owners": {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "c",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}],
        },
    },
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CHILDREN))
async def test_the_applied_child_carries_the_controller_reference_to_the_primary(
    wired: tuple[_Transport, _Manager], case: str
) -> None:
    transport, manager = wired
    child = CHILDREN[case]
    given = copy.deepcopy(child)
    applied = await _context(manager).apply_owned(child)
    ((method, path, body),) = transport.sent
    assert (method, path) == ("PATCH", "/api/v1/namespaces/ns/secrets/c")
    assert body == _expected(PRIMARY, child, "ns")
    assert body["metadata"]["ownerReferences"][-1] == {
        "apiVersion": "v1", "kind": "ConfigMap", "name": "p", "uid": "uid-p",
        "controller": True, "blockOwnerDeletion": True,
    }  # fmt: skip
    assert applied["metadata"]["uid"] == "uid-child"
    assert child == given  # the caller's object is left as it was


async def test_a_cluster_scoped_primary_owns_a_namespaced_child(
    wired: tuple[_Transport, _Manager],
) -> None:
    transport, manager = wired
    context = _context(manager, kind="Node", request=Request(None, "n1"))
    child = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c", "namespace": "ns"}}
    await context.apply_owned(child)
    ((_, path, body),) = transport.sent
    assert path == "/api/v1/namespaces/ns/secrets/c"
    assert body == _expected(NODE, child, None)


async def test_a_child_in_another_namespace_is_refused(
    wired: tuple[_Transport, _Manager],
) -> None:
    transport, manager = wired
    child = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c", "namespace": "x"}}
    with pytest.raises(CrossNamespaceOwnerError, match="cross-namespace owner references"):
        await _context(manager).apply_owned(child)
    assert transport.sent == []


async def test_a_primary_gone_from_the_cache_is_named(wired: tuple[_Transport, _Manager]) -> None:
    transport, manager = wired
    child = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}}
    with pytest.raises(LookupError, match="ConfigMap ns/gone is not in the cache"):
        await _context(manager, request=Request("ns", "gone")).apply_owned(child)
    assert transport.sent == []
