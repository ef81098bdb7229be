"""What a built-in write is checked for, through the HTTP API: metadata that does not decode
(400, first problem in upstream's order), schema errors, and unknown fields (warned, dropped)."""

from __future__ import annotations

from typing import Any

from tests.cluster.raw_api import RawAPI


def _config_map(name: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "a"}},
        "data": {"k": "v"},
    }
    body.update(extra)
    return body


async def test_valid_config_map_is_stored_without_warnings(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = await api.request("POST", path, _config_map("ok"))
    assert created.status == 201, created.body
    assert "Warning" not in created.headers
    assert created.body["data"] == {"k": "v"}
    assert created.body["metadata"]["labels"] == {"app": "a"}


async def test_undecodable_metadata_names_the_first_field(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = _config_map("bad")
    body["metadata"]["labels"] = {"app": 1}
    body["metadata"]["generation"] = "one"
    reply = await api.request("POST", path, body)
    assert reply.status == 400
    assert reply.body["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "number into Go struct field ObjectMeta.metadata.labels of type string"
    )
    body["metadata"]["labels"] = {"app": "a"}
    reply = await api.request("POST", path, body)
    assert reply.status == 400
    assert reply.body["message"].endswith("ObjectMeta.metadata.generation of type int64")


async def test_wrong_types_in_data_are_invalid(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    reply = await api.request("POST", path, _config_map("typed", data={"k": 1}))
    assert reply.status == 422
    assert [c["field"] for c in reply.body["details"]["causes"]] == ["data.k"]
    # Go's omitempty leaves the core group out of the details, as for every other Status.
    assert {k: v for k, v in reply.body["details"].items() if k != "causes"} == {
        "name": "typed",
        "kind": "ConfigMap",
    }


async def test_unknown_fields_are_warned_and_dropped(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = _config_map("extra", extra={"nested": True})
    body["metadata"]["bogus"] = "x"
    strict = await api.request("POST", f"{path}?fieldValidation=Strict", body)
    assert strict.status == 400
    assert 'unknown field "metadata.bogus"' in strict.body["message"]
    assert 'unknown field "extra"' in strict.body["message"]
    warned = await api.request("POST", path, body)
    assert warned.status == 201
    assert sorted(warned.headers.getall("Warning")) == [
        '299 - "unknown field \\"extra\\""',
        '299 - "unknown field \\"metadata.bogus\\""',
    ]
    stored = await api.request("GET", f"{path}/extra")
    assert "extra" not in stored.body
    assert "bogus" not in stored.body["metadata"]


async def test_owner_reference_problems_are_reported_as_upstream(
    api: RawAPI, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = _config_map("owned")
    body["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": ""}
    ]
    reply = await api.request("POST", path, body)
    assert reply.status == 422, reply.body
    assert reply.body["message"] == (
        'ConfigMap "owned" is invalid: metadata.ownerReferences.uid: '
        'Invalid value: "": uid must not be empty'
    )
    assert reply.body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "": uid must not be empty',
            "field": "metadata.ownerReferences.uid",
        }
    ]
