"""Resource paths remembered per path give what working each path out afresh gives.

Served for real: a path asked again (remembered) still gets its deprecated version's warning
and its YAML, and stops being served when its resource goes.

Random runs of registry changes (resources served, replaced by a version with other rules,
withdrawn) and requests to paths built from the segments that matter (heads, versions,
``watch``, ``namespaces``, names, subresources): whatever the memo returns for a path must be
the target the path addresses in the registry as it is at that moment.
"""

from __future__ import annotations

import asyncio

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.http.resource_routes import (
    ResourceTarget,
    RouteMemo,
    group_version_path,
    resource_target,
)
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import APIError
from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.raw_api import RawAPI

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

_RESOURCES = [
    ServedResource("", "v1", "configmaps", "ConfigMap", namespaced=True),
    ServedResource("", "v1", "namespaces", "Namespace", False, subresources=("status", "finalize")),
    ServedResource("", "v1", "nodes", "Node", namespaced=False, subresources=("status",)),
    ServedResource(
        "apps", "v1", "deployments", "Deployment", True, subresources=("status", "scale")
    ),
    ServedResource("example.com", "v1", "widgets", "Widget", namespaced=True, is_custom=True),
    ServedResource(
        "example.com", "v1", "widgets", "Widget", False, subresources=("status",), is_custom=True
    ),
    ServedResource("example.com", "v2", "widgets", "Widget", namespaced=True, is_custom=True),
]


def _path(resource: ServedResource, *segments: str | None) -> str:
    head = f"/apis/{resource.group}" if resource.group else "/api"
    watch, namespace, name, subresource, end = segments
    parts = [head, resource.version, watch, namespace, resource.plural, name, subresource, end]
    return "/".join(part for part in parts if part is not None)


# Paths to the resources above, well formed or not.
_PATHS = st.builds(
    _path,
    st.sampled_from(_RESOURCES),
    st.sampled_from([None, None, None, "watch"]),
    st.sampled_from([None, "namespaces/default", "namespaces/default", "namespaces/status"]),
    st.sampled_from([None, "a"]),
    st.sampled_from([None, None, None, None, "status", "scale", "finalize", "x/y"]),
    st.sampled_from([None, None, ""]),
)
_CHANGES = st.tuples(st.sampled_from(["add", "remove"]), st.sampled_from(_RESOURCES))


def _addressed(registry: ResourceRegistry, path: str) -> ResourceTarget | None:
    """What the handler works out for ``path`` without the memo (None: not a resource)."""
    located = group_version_path([part for part in path.split("/") if part])
    if located is None:
        return None
    group, version, rest = located
    if not registry.has_group_version(group, version) or not rest:
        return None
    try:
        return resource_target(registry, group, version, rest)
    except APIError as error:
        assert error.code == 404
        return None


@settings(max_examples=100, deadline=None)
@given(st.lists(_PATHS, min_size=4, max_size=4), st.lists(_CHANGES, max_size=20))
def test_a_remembered_target_is_the_one_the_path_addresses_now(
    paths: list[str], changes: list[tuple[str, ServedResource]]
) -> None:
    """After every change of the registry, each of four paths is served again."""
    registry = ResourceRegistry()
    for resource in _RESOURCES[:4]:
        registry.add(resource)
    memo = RouteMemo(registry)
    for action, resource in [("", _RESOURCES[0]), *changes]:
        if action == "add":
            registry.add(resource)
        elif action == "remove":
            registry.remove(resource.group, resource.version, resource.plural)
        for path in paths:
            remembered = memo.get(path)
            addressed = _addressed(registry, path)
            if remembered is not None:
                assert remembered == addressed
                assert addressed is not None and remembered.resource is addressed.resource
            if addressed is not None:
                memo.put(path, addressed)


def test_the_memo_starts_over_when_full() -> None:
    registry = ResourceRegistry()
    registry.add(_RESOURCES[0])
    memo = RouteMemo(registry)
    target = resource_target(registry, "", "v1", ["namespaces", "default", "configmaps"])
    memo.put("/api/v1/namespaces/default/configmaps", target)
    assert memo.get("/api/v1/namespaces/default/configmaps") is target
    for number in range(5000):
        memo.put(f"/api/v1/namespaces/n{number}/configmaps", target)
    assert len(memo._targets) <= 4096


async def test_a_path_asked_again_is_answered_as_the_first_time(
    api: RawAPI, namespace: str
) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    crd["spec"]["versions"][0]["deprecated"] = True
    crd["spec"]["versions"][0]["deprecationWarning"] = "use v2 instead"
    assert (await api.request("POST", CRDS, crd)).status == 201
    widgets = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    assert (await api.request("POST", widgets, widget("w", group))).status == 201
    for _ in range(3):
        listed = await api.request("GET", widgets)
        assert listed.status == 200
        assert listed.headers.getall("Warning") == ['299 - "use v2 instead"']
    as_yaml = {"Accept": "application/yaml"}
    config_maps = f"/api/v1/namespaces/{namespace}/configmaps"
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    assert (await api.request("POST", config_maps, config_map)).status == 201
    for path in (f"{widgets}/w", f"{config_maps}/c"):  # deprecated, then not
        for _ in range(3):
            read = await api.request("GET", path, headers=as_yaml)
            assert (read.status, read.headers["Content-Type"]) == (200, "application/yaml")
            assert yaml.safe_load(read.raw)["metadata"]["name"] in ("w", "c")
            missing = await api.request("GET", f"{path}-missing", headers=as_yaml)
            assert (missing.status, yaml.safe_load(missing.raw)["reason"]) == (404, "NotFound")

    assert (await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")).status == 200
    for _ in range(300):  # the resource is withdrawn once the CRD's objects are gone
        reply = await api.request("GET", widgets)
        if reply.status == 404:
            break
        await asyncio.sleep(0.1)
    assert reply.status == 404
    assert reply.body["message"] == "the server could not find the requested resource"
