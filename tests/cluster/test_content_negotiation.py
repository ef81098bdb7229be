"""Response media types: JSON by default, YAML when asked, 406 when nothing can be produced."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.cluster.raw_api import RawAPI

YAML = "application/yaml"
JSON = "application/json"


async def _config_map(api: RawAPI, namespace: str) -> tuple[str, dict[str, Any]]:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = {"metadata": {"name": "cm", "labels": {"n": "1"}}, "data": {"port": "8080", "b": "x"}}
    created = await api.request("POST", path, body)
    assert created.status == 201, created.body
    return f"{path}/cm", created.body


async def test_get_and_list_answer_yaml_when_asked(api: RawAPI, namespace: str) -> None:
    path, created = await _config_map(api, namespace)
    got = await api.request("GET", path, headers={"Accept": YAML})
    assert (got.status, got.headers["Content-Type"]) == (200, YAML)
    assert yaml.safe_load(got.raw) == created
    # Keys sorted, block style, strings that look like numbers stay strings.
    assert got.raw.startswith(b"apiVersion: v1\ndata:\n  b: x\n  port: '8080'\nkind: ConfigMap\n")
    listed = await api.request(
        "GET", path.rsplit("/", 1)[0], headers={"Accept": f"{YAML}, {JSON};q=0.9"}
    )
    assert listed.headers["Content-Type"] == YAML
    document = yaml.safe_load(listed.raw)
    assert document["kind"] == "ConfigMapList"
    # With the root CA publisher's ConfigMap, as in every namespace of a real cluster.
    assert [item["metadata"]["name"] for item in document["items"]] == ["cm", "kube-root-ca.crt"]


async def test_errors_and_writes_answer_yaml_when_asked(api: RawAPI, namespace: str) -> None:
    path, _ = await _config_map(api, namespace)
    missing = await api.request("GET", path + "-missing", headers={"Accept": YAML})
    assert (missing.status, missing.headers["Content-Type"]) == (404, YAML)
    assert yaml.safe_load(missing.raw)["reason"] == "NotFound"
    patched = await api.request(
        "PATCH",
        path,
        {"data": {"b": "y"}},
        content_type="application/merge-patch+json",
        headers={"Accept": YAML},
    )
    assert (patched.status, patched.headers["Content-Type"]) == (200, YAML)
    assert yaml.safe_load(patched.raw)["data"] == {"b": "y", "port": "8080"}


@pytest.mark.parametrize(
    "accept",
    [
        "*/*",
        JSON,
        f"{JSON}, {YAML}",
        "application/vnd.kubernetes.protobuf, application/json",
        f"{YAML};q=0.5, {JSON}",
        "application/*",
    ],
)
async def test_json_stays_the_default(api: RawAPI, namespace: str, accept: str) -> None:
    path, created = await _config_map(api, namespace)
    got = await api.request("GET", path, headers={"Accept": accept})
    assert (got.status, got.headers["Content-Type"]) == (200, JSON)
    assert got.body == created


@pytest.mark.parametrize(
    "accept",
    [
        "text/html",
        "application/vnd.kubernetes.protobuf",
        f"{JSON};as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
        f"{JSON};as=Table;v=v2;g=meta.k8s.io",
    ],
)
async def test_unproducible_accept_is_not_acceptable(api: RawAPI, accept: str) -> None:
    reply = await api.request("GET", "/api/v1/namespaces", headers={"Accept": accept})
    assert (reply.status, reply.body["reason"]) == (406, "NotAcceptable")
    assert reply.body["message"] == (
        "only the following media types are accepted: application/json, application/yaml"
    )


async def test_watch_streams_json_even_when_yaml_is_preferred(api: RawAPI, namespace: str) -> None:
    await _config_map(api, namespace)
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=true&timeoutSeconds=1"
    async with api.session.get(api.url + path, headers={"Accept": f"{YAML}, {JSON}"}) as reply:
        assert reply.status == 200
        first = await reply.content.readline()
    assert first.startswith(b'{"type":"ADDED"')
