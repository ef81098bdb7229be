"""Custom resource validation as upstream wires it: ratcheting on update, status-only checks on
``/status`` writes, ObjectMeta coercion of the body, and Go-style integral numbers in answers."""

from __future__ import annotations

from typing import Any

from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.raw_api import RawAPI

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


async def _install(api: RawAPI) -> tuple[dict[str, Any], str]:
    crd = widget_crd()
    reply = await api.request("POST", CRDS, crd)
    assert reply.status == 201, reply.body
    return reply.body, crd["spec"]["group"]


async def _tighten_size(api: RawAPI, crd: dict[str, Any], maximum: int) -> None:
    """Add ``maximum`` to ``spec.size`` of the stored CRD (objects stored before now violate it)."""
    name = crd["metadata"]["name"]
    current = (await api.request("GET", f"{CRDS}/{name}")).body
    schema = current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["size"]["maximum"] = maximum
    reply = await api.request("PUT", f"{CRDS}/{name}", current)
    assert reply.status == 200, reply.body


async def test_update_ratchets_unchanged_invalid_values(api: RawAPI, namespace: str) -> None:
    crd, group = await _install(api)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    created = await api.request("POST", path, widget("w", group, size=5))
    assert created.status == 201
    await _tighten_size(api, crd, 3)

    body = created.body
    body["spec"]["color"] = "red"  # size stays 5: not re-validated
    recolored = await api.request("PUT", f"{path}/w", body)
    assert recolored.status == 200, recolored.body
    assert recolored.body["spec"] == {"size": 5, "color": "red"}

    body = recolored.body
    body["spec"]["size"] = 6  # a changed value meets the new schema
    grown = await api.request("PUT", f"{path}/w", body)
    assert grown.status == 422
    assert [c["field"] for c in grown.body["details"]["causes"]] == ["spec.size"]
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


async def test_status_write_validates_only_the_status(api: RawAPI, namespace: str) -> None:
    crd, group = await _install(api)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    created = await api.request("POST", path, widget("w", group, size=5))
    await _tighten_size(api, crd, 3)

    body = {**created.body, "status": {"ready": True}}
    written = await api.request("PUT", f"{path}/w/status", body)
    assert written.status == 200, written.body
    assert written.body["status"] == {"ready": True}

    body = {**written.body, "status": {"ready": "yes"}}
    refused = await api.request("PUT", f"{path}/w/status", body)
    assert refused.status == 422
    assert [c["field"] for c in refused.body["details"]["causes"]] == ["status.ready"]
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


async def test_unknown_metadata_fields_are_dropped_and_reported(
    api: RawAPI, namespace: str
) -> None:
    crd, group = await _install(api)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    body = widget("w", group)
    body["metadata"]["bogus"] = "x"
    strict = await api.request("POST", f"{path}?fieldValidation=Strict", body)
    assert strict.status == 400
    assert 'unknown field "metadata.bogus"' in strict.body["message"]

    warned = await api.request("POST", path, body)
    assert warned.status == 201
    assert '299 - "unknown field \\"metadata.bogus\\""' in warned.headers.getall("Warning")
    assert "bogus" not in warned.body["metadata"]
    stored = await api.request("GET", f"{path}/w")
    assert "bogus" not in stored.body["metadata"]

    ignored = await api.request("POST", f"{path}?fieldValidation=Ignore", widget("v", group))
    assert ignored.status == 201
    assert "Warning" not in ignored.headers
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


async def test_integral_floats_are_answered_as_integers(api: RawAPI, namespace: str) -> None:
    crd, group = await _install(api)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    # An integral float is a valid integer; Go answers it as 2, never 2.0.
    data = b'{"apiVersion":"%s/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":2.0}}'
    data = data % group.encode()
    for query in ("?dryRun=All", ""):
        reply = await api.request("POST", path + query, data=data)
        assert reply.status == 201, reply.body
        assert b'"size":2}' in reply.raw or b'"size":2,' in reply.raw, reply.raw
        assert b"2.0" not in reply.raw
    fetched = await api.request("GET", f"{path}/w")
    assert b"2.0" not in fetched.raw
    assert fetched.body["spec"]["size"] == 2
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")
