"""Bad requests get the upstream Status code, reason and message, and the server keeps serving."""

from __future__ import annotations

import pytest

from tests.cluster.raw_api import RawAPI


def _cm_path(namespace: str, name: str = "") -> str:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    return f"{base}/{name}" if name else base


@pytest.fixture(autouse=True)
async def _server_keeps_serving(api: RawAPI) -> None:
    yield
    reply = await api.request("GET", "/api/v1/namespaces/default")
    assert reply.status == 200


async def test_malformed_json(api: RawAPI, namespace: str) -> None:
    reply = await api.request("POST", _cm_path(namespace), data=b'{"metadata": {"name": ')
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert reply.body["message"].startswith("couldn't get version/kind; json parse error:")


async def test_body_that_is_not_an_object(api: RawAPI, namespace: str) -> None:
    reply = await api.request("POST", _cm_path(namespace), data=b"[1, 2]")
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert "cannot unmarshal array" in reply.body["message"]


async def test_wrong_kind(api: RawAPI, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}
    reply = await api.request("POST", _cm_path(namespace), body)
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert reply.body["message"].startswith(
        'Secret in version "v1" cannot be handled as a ConfigMap'
    )


async def test_wrong_api_version(api: RawAPI, namespace: str) -> None:
    body = {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    reply = await api.request("POST", _cm_path(namespace), body)
    assert reply.status == 400
    assert reply.body["message"] == (
        "the API version in the data (apps/v1) does not match the expected API version (v1)"
    )


async def test_oversized_body(api: RawAPI, namespace: str) -> None:
    big = {"metadata": {"name": "big"}, "data": {"x": "a" * (3 * 1024 * 1024 + 1)}}
    reply = await api.request("POST", _cm_path(namespace), big)
    assert (reply.status, reply.body["reason"]) == (413, "RequestEntityTooLarge")
    assert reply.body["message"] == "Request entity too large: limit is 3145728"


async def test_invalid_label_selector(api: RawAPI, namespace: str) -> None:
    reply = await api.request("GET", _cm_path(namespace) + "?labelSelector=a%20b%20c")
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert reply.body["message"] == (
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
    )


async def test_unsupported_field_selector(api: RawAPI, namespace: str) -> None:
    reply = await api.request("GET", _cm_path(namespace) + "?fieldSelector=spec.foo%3Dbar")
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert "spec.foo" in reply.body["message"]


async def test_invalid_name(api: RawAPI, namespace: str) -> None:
    reply = await api.request("POST", _cm_path(namespace), {"metadata": {"name": "Bad_Name"}})
    assert (reply.status, reply.body["reason"]) == (422, "Invalid")
    assert reply.body["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        "a lowercase RFC 1123 subdomain must consist of"
    )
    causes = reply.body["details"]["causes"]
    assert [(c["reason"], c["field"]) for c in causes] == [("FieldValueInvalid", "metadata.name")]


async def test_missing_name(api: RawAPI, namespace: str) -> None:
    reply = await api.request("POST", _cm_path(namespace), {"metadata": {}})
    assert reply.status == 422
    assert reply.body["message"] == (
        'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    )


async def test_unknown_resource(api: RawAPI) -> None:
    reply = await api.request("GET", "/api/v1/widgets")
    assert (reply.status, reply.body["reason"]) == (404, "NotFound")
    assert reply.body["message"] == "the server could not find the requested resource"
    reply = await api.request("GET", "/apis/nope.example.com/v1/things")
    assert reply.status == 404


async def test_missing_token(api: RawAPI) -> None:
    reply = await api.request("GET", "/api/v1/namespaces", headers={"Authorization": "Bearer x"})
    assert (reply.status, reply.body["reason"], reply.body["kind"]) == (
        401,
        "Unauthorized",
        "Status",
    )


async def test_health_and_version_need_no_token(api: RawAPI) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        reply = await api.request("GET", path, headers={"Authorization": ""})
        assert (reply.status, reply.raw) == (200, b"ok")
    reply = await api.request("GET", "/version/", headers={"Authorization": ""})
    assert (reply.body["major"], reply.body["minor"]) == ("1", "32")


async def test_namespace_mismatch(api: RawAPI, namespace: str) -> None:
    body = {"metadata": {"name": "x", "namespace": "other"}}
    reply = await api.request("POST", _cm_path(namespace), body)
    assert reply.status == 400
    assert reply.body["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )


async def test_missing_namespace(api: RawAPI) -> None:
    reply = await api.request("POST", _cm_path("no-such-ns"), {"metadata": {"name": "x"}})
    assert (reply.status, reply.body["message"]) == (404, 'namespaces "no-such-ns" not found')


async def test_unsupported_patch_type(api: RawAPI, namespace: str) -> None:
    await api.request("POST", _cm_path(namespace), {"metadata": {"name": "p"}})
    reply = await api.request(
        "PATCH",
        _cm_path(namespace, "p"),
        {"data": {"a": "b"}},
        content_type="application/x-not-a-patch",
    )
    assert (reply.status, reply.body["reason"]) == (415, "UnsupportedMediaType")
    assert reply.body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml"
    )


async def test_protobuf_body(api: RawAPI, namespace: str) -> None:
    reply = await api.request(
        "POST",
        _cm_path(namespace),
        data=b"k8s\x00\x0a\x0f",
        content_type="application/vnd.kubernetes.protobuf",
    )
    assert reply.status == 415


async def test_protobuf_only_accept(api: RawAPI) -> None:
    reply = await api.request(
        "GET", "/api/v1/namespaces", headers={"Accept": "application/vnd.kubernetes.protobuf"}
    )
    assert (reply.status, reply.body["reason"]) == (406, "NotAcceptable")


async def test_resource_version_match_without_resource_version(api: RawAPI, namespace: str) -> None:
    reply = await api.request("GET", _cm_path(namespace) + "?resourceVersionMatch=NotOlderThan")
    assert (reply.status, reply.body["reason"]) == (422, "Invalid")
    assert reply.body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided"
    )


async def test_invalid_continue_token(api: RawAPI, namespace: str) -> None:
    reply = await api.request("GET", _cm_path(namespace) + "?limit=1&continue=notatoken")
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")


async def test_method_not_allowed(api: RawAPI) -> None:
    reply = await api.request("POST", "/api/v1/namespaces/default/configmaps/x", {})
    assert (reply.status, reply.body["reason"]) == (405, "MethodNotAllowed")


async def test_builtin_type_error_names_the_field(api: RawAPI, namespace: str) -> None:
    body = {"metadata": {"name": "x"}, "data": {"a": 1}}
    reply = await api.request("POST", _cm_path(namespace), body)
    assert (reply.status, reply.body["reason"]) == (422, "Invalid")
    assert [c["field"] for c in reply.body["details"]["causes"]] == ["data.a"]


async def test_json_patch_failed_test(api: RawAPI, namespace: str) -> None:
    await api.request("POST", _cm_path(namespace), {"metadata": {"name": "j"}, "data": {"a": "1"}})
    patch = [{"op": "test", "path": "/data/a", "value": "2"}, {"op": "remove", "path": "/data/a"}]
    reply = await api.request(
        "PATCH", _cm_path(namespace, "j"), patch, content_type="application/json-patch+json"
    )
    assert (reply.status, reply.body["reason"]) == (422, "Invalid")
    kept = await api.request("GET", _cm_path(namespace, "j"))
    assert kept.body["data"] == {"a": "1"}
