"""/openapi/v3 and /openapi/v2 as kubectl reads them: hashes, caching headers, kinds, CRDs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from setpoint.cluster.apiserver.openapi.v2_protobuf import _classes
from tests.cluster.crd_manifests import widget_crd
from tests.cluster.raw_api import RawAPI

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


async def _index(api: RawAPI) -> dict[str, str]:
    reply = await api.request("GET", "/openapi/v3")
    assert reply.status == 200
    return {path: entry["serverRelativeURL"] for path, entry in reply.body["paths"].items()}


async def _document(api: RawAPI, path: str) -> dict[str, Any]:
    url = (await _index(api))[path]
    reply = await api.request("GET", url)
    assert reply.status == 200
    body: dict[str, Any] = reply.body
    return body


def _patch_operation(document: dict[str, Any], kind: str) -> dict[str, Any]:
    for item in document["paths"].values():
        patch = item.get("patch")
        if (
            patch
            and patch["x-kubernetes-group-version-kind"]["kind"] == kind
            and not patch["operationId"].endswith("Status")
        ):
            return dict(patch)
    raise AssertionError(f"no PATCH operation for {kind}")


async def test_index_names_each_group_version_by_its_hash(api: RawAPI) -> None:
    index = await _index(api)
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1"} <= set(index)
    url = index["apis/apps/v1"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    digest = url.split("hash=")[1]
    assert len(digest) == 128 and digest == digest.upper()  # SHA-512, upper-case hex

    current = await api.request("GET", url)
    assert current.headers["ETag"] == f'"{digest}"'
    assert current.headers["Cache-Control"] == "public, immutable"
    assert "Expires" in current.headers

    unhashed = await api.request("GET", "/openapi/v3/apis/apps/v1")
    assert unhashed.headers["Cache-Control"] == "no-cache, private"
    assert unhashed.raw == current.raw

    revalidated = await api.request(
        "GET", "/openapi/v3/apis/apps/v1", headers={"If-None-Match": f'"{digest}"'}
    )
    assert revalidated.status == 304


async def test_a_stale_hash_redirects_to_the_current_document(api: RawAPI) -> None:
    index = await _index(api)
    async with api.session.get(
        api.url + "/openapi/v3/apis/apps/v1?hash=0123",
        allow_redirects=False,
    ) as reply:
        assert reply.status == 301
        assert reply.headers["Location"] == index["apis/apps/v1"]


async def test_built_in_patch_accepts_field_validation_and_strategic_merge(api: RawAPI) -> None:
    document = await _document(api, "apis/apps/v1")
    patch = _patch_operation(document, "Deployment")
    assert "fieldValidation" in [p["name"] for p in patch["parameters"] if p["in"] == "query"]
    assert sorted(patch["requestBody"]["content"]) == [
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ]
    schemas = document["components"]["schemas"]
    deployment = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}


async def test_crd_documents_follow_the_crd(api: RawAPI) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    path = f"apis/{group}/v1"
    assert path not in await _index(api)
    created = await api.request("POST", CRDS, crd)
    assert created.status == 201
    try:
        document = await _document(api, path)
        name = ".".join(reversed(group.split("."))) + ".v1.Widget"
        widget = document["components"]["schemas"][name]
        assert widget["properties"]["spec"]["properties"]["size"] == {
            "type": "integer",
            "minimum": 0,
        }
        assert (
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in document["components"]["schemas"]
        )
        patch = _patch_operation(document, "Widget")
        # No strategic merge patch for custom resources, as upstream.
        assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    finally:
        await api.request("DELETE", f"{CRDS}/widgets.{group}")
    # The CRD's custom resources are cleaned up before it goes (a finalizer): wait for that.
    for _ in range(200):
        if path not in await _index(api):
            break
        await asyncio.sleep(0.05)
    assert path not in await _index(api)


async def test_v3_is_json_only(api: RawAPI) -> None:
    reply = await api.request(
        "GET",
        "/openapi/v3/api/v1",
        headers={"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"},
    )
    assert (reply.status, reply.body["reason"]) == (406, "NotAcceptable")


async def test_v2_json_and_protobuf(api: RawAPI) -> None:
    as_json = await api.request("GET", "/openapi/v2")
    assert as_json.body["swagger"] == "2.0"
    assert "io.k8s.api.core.v1.ConfigMap" in as_json.body["definitions"]

    as_protobuf = await api.request("GET", "/openapi/v2", headers={"Accept": V2_PROTOBUF})
    assert as_protobuf.status == 200
    assert as_protobuf.headers["Content-Type"] == (
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    )
    document = _classes()["Document"]()
    document.ParseFromString(as_protobuf.raw)
    paths = {entry.name: entry.value for entry in document.paths.path}
    patch = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch
    query = [
        p.parameter.non_body_parameter.query_parameter_sub_schema.name for p in patch.parameters
    ]
    assert "fieldValidation" in query
    extensions = {e.name: e.value.yaml for e in patch.vendor_extension}
    assert "kind: Deployment" in extensions["x-kubernetes-group-version-kind"]
    definitions = {d.name for d in document.definitions.additional_properties}
    assert "io.k8s.api.apps.v1.Deployment" in definitions


async def test_openapi_needs_the_token(api: RawAPI) -> None:
    anonymous = await api.request("GET", "/openapi/v3", headers={"Authorization": ""})
    assert anonymous.status == 401


async def test_aggregated_discovery_v2beta1_for_older_clients(api: RawAPI) -> None:
    accept = (
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
    )
    reply = await api.request("GET", "/apis", headers={"Accept": accept})
    assert reply.headers["Content-Type"] == (
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    )
    body = json.loads(reply.raw)
    assert body["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    policy = next(item for item in body["items"] if item["metadata"]["name"] == "policy")
    pdb = policy["versions"][0]["resources"][0]
    assert (pdb["resource"], pdb["shortNames"]) == ("poddisruptionbudgets", ["pdb"])


async def test_a_rich_crd_schema_is_published_in_v3_and_v2(api: RawAPI) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = {
        "size": {"type": "integer", "minimum": 0, "maximum": 10},
        "port": {
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
        },
        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "items": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}},
            },
        },
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "ratio": {"type": "number", "nullable": True},
    }
    assert (await api.request("POST", CRDS, crd)).status == 201
    try:
        document = await _document(api, f"apis/{group}/v1")
        name = ".".join(reversed(group.split("."))) + ".v1.Widget"
        spec = document["components"]["schemas"][name]["properties"]["spec"]["properties"]
        assert spec["items"]["x-kubernetes-list-map-keys"] == ["name"]
        v2 = await api.request("GET", "/openapi/v2", headers={"Accept": V2_PROTOBUF})
        parsed = _classes()["Document"]()
        parsed.ParseFromString(v2.raw)
        widget = next(d.value for d in parsed.definitions.additional_properties if d.name == name)
        properties = {p.name: p.value for p in widget.properties.additional_properties}
        spec_v2 = {p.name: p.value for p in properties["spec"].properties.additional_properties}
        assert [e.yaml for e in spec_v2["mode"].enum] == ["a\n", "b\n"]
        assert spec_v2["size"].maximum == 10
        extensions = {e.name: e.value.yaml for e in spec_v2["items"].vendor_extension}
        assert extensions["x-kubernetes-list-type"] == "map\n"
    finally:
        await api.request("DELETE", f"{CRDS}/widgets.{group}")


async def test_a_crd_update_changes_the_document_and_its_hash(api: RawAPI) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    path = f"apis/{group}/v1"
    created = await api.request("POST", CRDS, crd)
    try:
        index_before = await _index(api)
        before = index_before[path]
        updated = created.body
        schema = updated["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        schema["properties"]["spec"]["properties"]["shape"] = {"type": "string"}
        reply = await api.request("PUT", f"{CRDS}/widgets.{group}", updated)
        assert reply.status == 200
        after = (await _index(api))[path]
        assert after != before
        document = await _document(api, path)
        name = ".".join(reversed(group.split("."))) + ".v1.Widget"
        spec = document["components"]["schemas"][name]["properties"]["spec"]
        assert "shape" in spec["properties"]
        # Other group-versions keep their hash: nothing else changed.
        assert (await _index(api))["apis/apps/v1"] == index_before["apis/apps/v1"]
    finally:
        await api.request("DELETE", f"{CRDS}/widgets.{group}")
