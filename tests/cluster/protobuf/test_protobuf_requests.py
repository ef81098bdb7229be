"""Protobuf bodies over HTTP: created objects, a 415 naming the kind, answers in JSON."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cluster.raw_api import RawAPI

PROTOBUF = "application/vnd.kubernetes.protobuf"
BODIES = json.loads((Path(__file__).parent / "kubectl_bodies.json").read_text())


async def test_configmap_created_from_kubectl_protobuf_body(api: RawAPI, namespace: str) -> None:
    body = bytes.fromhex(BODIES["configmap"]["body"])  # recorded in namespace "cnat"
    reply = await api.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/configmaps",
        data=body,
        content_type=PROTOBUF,
        headers={"Accept": f"{PROTOBUF}, application/json"},
    )
    assert reply.status == 400  # the body names namespace cnat; the URL another one
    assert reply.body["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )
    reply = await api.request(
        "POST", "/api/v1/namespaces/cnat/configmaps", data=body, content_type=PROTOBUF
    )
    if reply.status == 404:  # namespace cnat does not exist yet in the session cluster
        await api.request(
            "POST",
            "/api/v1/namespaces",
            data=bytes.fromhex(BODIES["namespace"]["body"]),
            content_type=PROTOBUF,
        )
        reply = await api.request(
            "POST", "/api/v1/namespaces/cnat/configmaps", data=body, content_type=PROTOBUF
        )
    try:
        assert reply.status == 201
        assert reply.headers["Content-Type"].startswith("application/json")
        assert reply.body["data"] == {"a": "1", "b": "two"}
    finally:
        await api.request("DELETE", "/api/v1/namespaces/cnat/configmaps/c1")


async def test_undecodable_kind_is_415_naming_it(api: RawAPI, namespace: str) -> None:
    # An Endpoints envelope: typeMeta {apiVersion: "v1", kind: "Endpoints"}, no raw.
    body = b"k8s\x00" + bytes.fromhex("0a0f") + b"\x0a\x02v1\x12\x09Endpoints"
    reply = await api.request(
        "POST", f"/api/v1/namespaces/{namespace}/endpoints", data=body, content_type=PROTOBUF
    )
    assert (reply.status, reply.body["reason"]) == (415, "UnsupportedMediaType")
    assert reply.body["message"] == (
        "the protobuf body of Endpoints (v1) cannot be decoded here (no message layout for that "
        "kind); send it as application/json"
    )


async def test_malformed_protobuf_body_is_415(api: RawAPI, namespace: str) -> None:
    reply = await api.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/configmaps",
        data=b"k8s\x00\x0a\x0f",
        content_type=PROTOBUF,
    )
    assert (reply.status, reply.body["reason"]) == (415, "UnsupportedMediaType")
    assert "the protobuf envelope is malformed" in reply.body["message"]
