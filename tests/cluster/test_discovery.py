"""Discovery documents: legacy (/api, /apis, group versions) and aggregated (apidiscovery v2)."""

from __future__ import annotations

import json

from tests.cluster.crd_manifests import widget_crd
from tests.cluster.raw_api import RawAPI

AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


async def test_legacy_core_discovery(api: RawAPI) -> None:
    versions = await api.request("GET", "/api/")
    assert versions.body["kind"] == "APIVersions"
    assert versions.body["versions"] == ["v1"]
    resources = await api.request("GET", "/api/v1")
    entries = {r["name"]: r for r in resources.body["resources"]}
    assert entries["pods"]["shortNames"] == ["po"]
    assert entries["pods/status"]["singularName"] == ""
    assert entries["namespaces"]["namespaced"] is False
    assert "deletecollection" not in entries["namespaces"]["verbs"]


async def test_legacy_group_discovery(api: RawAPI) -> None:
    groups = await api.request("GET", "/apis")
    for group in groups.body["groups"]:
        assert group["preferredVersion"] in group["versions"]
        for version in group["versions"]:
            listed = await api.request("GET", f"/apis/{version['groupVersion']}")
            assert listed.status == 200
    apps = await api.request("GET", "/apis/apps")
    assert apps.body["kind"] == "APIGroup"
    resources = await api.request("GET", "/apis/apps/v1/")
    scale = {r["name"]: r for r in resources.body["resources"]}["deployments/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")


async def test_aggregated_discovery(api: RawAPI) -> None:
    reply = await api.request("GET", "/apis", headers={"Accept": AGGREGATED_ACCEPT})
    assert reply.headers["Content-Type"] == (
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )
    body = json.loads(reply.raw)
    assert body["kind"] == "APIGroupDiscoveryList"
    apps = next(item for item in body["items"] if item["metadata"]["name"] == "apps")
    deployments = next(
        r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments"
    )
    assert deployments["scope"] == "Namespaced"
    assert {s["subresource"] for s in deployments["subresources"]} == {"status", "scale"}
    core = await api.request("GET", "/api", headers={"Accept": AGGREGATED_ACCEPT})
    assert [v["version"] for v in json.loads(core.raw)["items"][0]["versions"]] == ["v1"]


async def test_a_new_crd_is_discoverable_at_once_and_gone_after_delete(api: RawAPI) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    await api.request("POST", CRDS, crd)
    groups = await api.request("GET", "/apis")
    assert group in [g["name"] for g in groups.body["groups"]]
    resources = await api.request("GET", f"/apis/{group}/v1")
    names = [r["name"] for r in resources.body["resources"]]
    assert names == ["widgets", "widgets/status"]
    widgets = resources.body["resources"][0]
    assert widgets["verbs"] == [
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "create",
        "update",
        "watch",
    ]
    aggregated = await api.request("GET", "/apis", headers={"Accept": AGGREGATED_ACCEPT})
    assert group in [i["metadata"]["name"] for i in json.loads(aggregated.raw)["items"]]

    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")
    groups = await api.request("GET", "/apis")
    assert group not in [g["name"] for g in groups.body["groups"]]
    assert (await api.request("GET", f"/apis/{group}/v1")).status == 404
