"""Server-side apply over HTTP: create-on-apply, managedFields, conflicts, force, removal.

Expected behaviour is upstream's (structured-merge-diff ``merge/*_test.go``, apimachinery
``managedfields`` and apiserver ``fieldmanager`` tests), restated as facts.
"""

from __future__ import annotations

import json
from typing import Any

from tests.cluster.patch.conftest import APPLY, MERGE, Gadgets, managers
from tests.cluster.raw_api import RawAPI, Reply


def _cm_path(namespace: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps" + (f"/{name}" if name else "")


def configmap(name: str, **data: str) -> dict[str, Any]:
    """A ConfigMap manifest; without data when none is given."""
    manifest: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    if data:
        manifest["data"] = data
    return manifest


async def apply(
    api: RawAPI, namespace: str, obj: dict[str, Any], manager: str, *, force: bool = False
) -> Reply:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    return await api.request(
        "PATCH",
        _cm_path(namespace, obj["metadata"]["name"]) + query,
        data=json.dumps(obj).encode(),
        content_type=APPLY,
    )


async def test_apply_creates_and_records_the_applier(api: RawAPI, namespace: str) -> None:
    reply = await apply(api, namespace, configmap("c", a="1"), "alice")
    assert reply.status == 201, reply.body
    (entry,) = reply.body["metadata"]["managedFields"]
    assert entry["manager"] == "alice"
    assert entry["operation"] == "Apply"
    assert entry["apiVersion"] == "v1"
    assert entry["fieldsType"] == "FieldsV1"
    assert entry["fieldsV1"] == {"f:data": {"f:a": {}}}
    assert "subresource" not in entry


async def test_yaml_apply_body(api: RawAPI, namespace: str) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n"
    reply = await api.request(
        "PATCH", _cm_path(namespace, "y") + "?fieldManager=m", data=body, content_type=APPLY
    )
    assert (reply.status, reply.body["data"]) == (201, {"k": "v"})


async def test_reapplying_the_same_config_is_a_no_op(api: RawAPI, namespace: str) -> None:
    first = await apply(api, namespace, configmap("c", a="1"), "alice")
    again = await apply(api, namespace, configmap("c", a="1"), "alice")
    assert again.status == 200
    assert again.body["metadata"]["resourceVersion"] == first.body["metadata"]["resourceVersion"]
    assert again.body["metadata"]["managedFields"] == first.body["metadata"]["managedFields"]


async def test_conflict_then_force(api: RawAPI, namespace: str) -> None:
    await apply(api, namespace, configmap("c", a="1", b="2"), "alice")
    reply = await apply(api, namespace, configmap("c", a="9"), "bob")
    assert reply.status == 409
    assert reply.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "alice": .data.a',
        "reason": "Conflict",
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "alice"',
                    "field": ".data.a",
                }
            ]
        },
        "code": 409,
    }
    forced = await apply(api, namespace, configmap("c", a="9"), "bob", force=True)
    assert forced.status == 200
    assert forced.body["data"] == {"a": "9", "b": "2"}
    owners = managers(forced.body)
    assert owners[("alice", "Apply")] == {"f:data": {"f:b": {}}}
    assert owners[("bob", "Apply")] == {"f:data": {"f:a": {}}}


async def test_several_conflicts_are_listed_per_manager(api: RawAPI, namespace: str) -> None:
    await apply(api, namespace, configmap("c", a="1", b="2"), "alice")
    reply = await apply(api, namespace, configmap("c", a="8", b="9"), "bob")
    assert reply.status == 409
    assert reply.body["message"] == (
        'Apply failed with 2 conflicts: conflicts with "alice":\n- .data.a\n- .data.b'
    )
    assert [c["field"] for c in reply.body["details"]["causes"]] == [".data.a", ".data.b"]


async def test_same_value_is_shared_and_removal_needs_every_owner(
    api: RawAPI, namespace: str
) -> None:
    await apply(api, namespace, configmap("c", a="1", b="2"), "alice")
    shared = await apply(api, namespace, configmap("c", a="1"), "bob")
    assert shared.status == 200  # the same value: no conflict
    dropped = await apply(api, namespace, configmap("c", b="2"), "alice")
    assert dropped.body["data"] == {"a": "1", "b": "2"}  # bob still owns a
    assert managers(dropped.body)[("alice", "Apply")] == {"f:data": {"f:b": {}}}
    gone = await apply(api, namespace, configmap("c"), "bob")
    assert gone.body["data"] == {"b": "2"}
    assert ("bob", "Apply") not in managers(gone.body)


async def test_an_update_takes_the_field_and_the_applier_then_conflicts(
    api: RawAPI, namespace: str
) -> None:
    await apply(api, namespace, configmap("c", a="1"), "alice")
    patched = await api.request(
        "PATCH",
        _cm_path(namespace, "c") + "?fieldManager=controller",
        {"data": {"a": "2"}},
        content_type=MERGE,
    )
    assert patched.status == 200
    owners = managers(patched.body)
    assert owners[("controller", "Update")] == {"f:data": {"f:a": {}}}
    assert ("alice", "Apply") not in owners  # its only field was taken
    again = await apply(api, namespace, configmap("c", a="1"), "alice")
    assert again.status == 409
    assert again.body["message"] == (
        'Apply failed with 1 conflict: conflict with "controller" using v1: .data.a'
    )


async def test_updates_are_tracked_with_the_user_agent_as_manager(
    api: RawAPI, namespace: str
) -> None:
    created = await api.request(
        "POST",
        _cm_path(namespace),
        {"metadata": {"name": "u", "labels": {"app": "x"}}, "data": {"a": "1"}},
        headers={"User-Agent": "my-operator/1.0 (linux)"},
    )
    (entry,) = created.body["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"]) == ("my-operator", "Update")
    assert entry["fieldsV1"] == {
        "f:data": {".": {}, "f:a": {}},
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    }
    unchanged = await api.request(
        "PATCH", _cm_path(namespace, "u") + "?fieldManager=other", {}, content_type=MERGE
    )
    assert (
        unchanged.body["metadata"]["resourceVersion"]
        == (created.body["metadata"]["resourceVersion"])
    )
    assert [e["manager"] for e in unchanged.body["metadata"]["managedFields"]] == ["my-operator"]


async def test_empty_managed_fields_reset_tracking(api: RawAPI, namespace: str) -> None:
    created = await apply(api, namespace, configmap("c", a="1"), "alice")
    obj = created.body
    obj["metadata"]["managedFields"] = []
    reset = await api.request("PUT", _cm_path(namespace, "c"), obj)
    assert "managedFields" not in reset.body["metadata"]
    # An object without managedFields credits its fields to before-first-apply.
    reply = await apply(api, namespace, configmap("c", a="2"), "bob")
    assert reply.status == 409
    assert 'conflict with "before-first-apply" using v1: .data.a' in reply.body["message"]


async def test_content_type_is_checked_before_the_object_is_read(
    api: RawAPI, namespace: str
) -> None:
    reply = await api.request(
        "PATCH", _cm_path(namespace, "missing"), {"data": {}}, content_type="text/plain"
    )
    assert reply.status == 415


async def test_apply_options_are_validated(api: RawAPI, namespace: str) -> None:
    no_manager = await api.request(
        "PATCH",
        _cm_path(namespace, "c"),
        data=json.dumps(configmap("c")).encode(),
        content_type=APPLY,
    )
    assert no_manager.status == 422
    assert no_manager.body["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
        "is required for apply patch"
    )
    forced_merge = await api.request(
        "PATCH", _cm_path(namespace, "c") + "?force=true", {"data": {}}, content_type=MERGE
    )
    assert forced_merge.status == 422
    assert (
        "force: Forbidden: may not be specified for non-apply patch"
        in (forced_merge.body["message"])
    )
    wrong_version = await apply(
        api, namespace, {**configmap("c"), "apiVersion": "apps/v1"}, "alice"
    )
    assert wrong_version.status == 400
    assert wrong_version.body["message"] == (
        "Incorrect version specified in apply patch. Specified patch version: apps/v1, expected: v1"
    )
    with_managed = configmap("c")
    with_managed["metadata"]["managedFields"] = [{"manager": "x"}]
    assert (await apply(api, namespace, with_managed, "alice")).status == 400


async def test_built_in_lists_merge_by_their_keys(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/services/s?fieldManager="
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"name": "http", "port": 80, "protocol": "TCP"}]},
    }
    first = await api.request(
        "PATCH", path + "alice", data=json.dumps(service).encode(), content_type=APPLY
    )
    assert first.status == 201, first.body
    assert managers(first.body)[("alice", "Apply")]["f:spec"]["f:ports"] == {
        'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}}
    }
    service["spec"]["ports"] = [{"name": "https", "port": 443, "protocol": "TCP"}]
    second = await api.request(
        "PATCH", path + "bob", data=json.dumps(service).encode(), content_type=APPLY
    )
    assert [p["port"] for p in second.body["spec"]["ports"]] == [80, 443]


async def test_custom_resource_list_types(gadgets: Gadgets) -> None:
    spec = {"parts": [{"name": "a", "count": 1}], "tags": ["x"], "args": ["1", "2"]}
    first = await gadgets.apply(gadgets.manifest("g", **spec), "alice")
    assert first.status == 201, first.body
    assert managers(first.body)[("alice", "Apply")] == {
        "f:spec": {
            "f:args": {},
            "f:parts": {'k:{"name":"a"}': {".": {}, "f:count": {}, "f:name": {}}},
            "f:tags": {'v:"x"': {}},
        }
    }
    other = {"parts": [{"name": "b", "count": 2}], "tags": ["y"]}
    second = await gadgets.apply(gadgets.manifest("g", **other), "bob")
    assert second.status == 200, second.body
    assert second.body["spec"]["parts"] == [{"name": "a", "count": 1}, {"name": "b", "count": 2}]
    assert second.body["spec"]["tags"] == ["x", "y"]
    atomic = await gadgets.apply(gadgets.manifest("g", args=["3"]), "bob")
    assert atomic.status == 409
    assert atomic.body["details"]["causes"][0]["field"] == ".spec.args"
    # alice stops applying part "a": it goes; bob's part stays.
    dropped = await gadgets.apply(gadgets.manifest("g", tags=["x"], args=["1", "2"]), "alice")
    assert dropped.body["spec"]["parts"] == [{"name": "b", "count": 2}]


async def test_atomic_map_conflicts_as_a_whole(gadgets: Gadgets) -> None:
    await gadgets.apply(gadgets.manifest("g", selector={"app": "a"}), "alice")
    reply = await gadgets.apply(gadgets.manifest("g", selector={"tier": "b"}), "bob")
    assert reply.status == 409
    assert reply.body["message"] == (
        'Apply failed with 1 conflict: conflict with "alice": .spec.selector'
    )


async def test_status_subresource_apply(gadgets: Gadgets) -> None:
    await gadgets.apply(gadgets.manifest("g", size=1), "alice")
    status = {**gadgets.manifest("g"), "status": {"phase": "Ready"}}
    del status["spec"]
    reply = await gadgets.apply(status, "controller", subresource="status")
    assert reply.status == 200, reply.body
    assert reply.body["status"] == {"phase": "Ready"}
    entries = {
        (e["manager"], e.get("subresource", "")): e for e in reply.body["metadata"]["managedFields"]
    }
    assert entries[("controller", "status")]["fieldsV1"] == {"f:status": {"f:phase": {}}}
    # Status sent to the main resource is ignored (and not owned).
    main = await gadgets.apply({**gadgets.manifest("g", size=2), "status": {"phase": "X"}}, "alice")
    assert main.body["status"] == {"phase": "Ready"}
    assert "f:status" not in managers(main.body)[("alice", "Apply")]


async def test_status_apply_on_a_missing_object_is_404(gadgets: Gadgets) -> None:
    reply = await gadgets.apply(
        {**gadgets.manifest("nope"), "status": {"phase": "x"}}, "m", subresource="status"
    )
    assert reply.status == 404


async def test_a_field_dropped_from_a_config_without_its_parent_is_removed(
    api: RawAPI, namespace: str
) -> None:
    await apply(api, namespace, configmap("c", a="1"), "alice")
    emptied = await apply(api, namespace, configmap("c"), "alice")
    assert emptied.status == 200
    assert emptied.body.get("data", {}) == {}
    assert "managedFields" not in emptied.body["metadata"]


async def test_scale_takes_replicas_from_the_applier(api: RawAPI, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web"
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "app:1"}]},
            },
        },
    }
    body = json.dumps(deployment).encode()
    created = await api.request(
        "PATCH", path + "?fieldManager=alice", data=body, content_type=APPLY
    )
    assert created.status == 201, created.body
    scaled = await api.request(
        "PATCH",
        path + "/scale?fieldManager=hpa",
        {"spec": {"replicas": 7}},
        content_type=MERGE,
    )
    assert scaled.status == 200, scaled.body
    live = await api.request("GET", path)
    (entry,) = [e for e in live.body["metadata"]["managedFields"] if e["manager"] == "hpa"]
    assert (entry["operation"], entry["subresource"]) == ("Update", "scale")
    assert entry["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    again = await api.request("PATCH", path + "?fieldManager=alice", data=body, content_type=APPLY)
    assert again.status == 409
    assert again.body["message"] == (
        'Apply failed with 1 conflict: conflict with "hpa" with subresource "scale" using '
        "apps/v1: .spec.replicas"
    )


async def test_server_made_objects_are_managed_by_kube_apiserver(api: RawAPI) -> None:
    reply = await api.request("GET", "/api/v1/namespaces/kube-system")
    managers_of = {(e["manager"], e["operation"]) for e in reply.body["metadata"]["managedFields"]}
    assert managers_of == {("kube-apiserver", "Update")}


async def test_a_request_without_user_agent_is_unknown(api: RawAPI, namespace: str) -> None:
    reply = await api.request(
        "POST",
        _cm_path(namespace),
        {"metadata": {"name": "anon"}, "data": {"a": "1"}},
        headers={"User-Agent": ""},
    )
    assert [e["manager"] for e in reply.body["metadata"]["managedFields"]] == ["unknown"]


async def test_a_repeated_apply_is_reevaluated_after_another_write(
    api: RawAPI, namespace: str
) -> None:
    first = await apply(api, namespace, configmap("c", a="1"), "alice")
    for _ in range(2):  # unchanged: the stored object, same resourceVersion
        again = await apply(api, namespace, configmap("c", a="1"), "alice")
        assert again.status == 200
        assert again.body == first.body
    await api.request(
        "PATCH",
        _cm_path(namespace, "c") + "?fieldManager=controller",
        {"data": {"a": "2"}},
        content_type=MERGE,
    )
    after = await apply(api, namespace, configmap("c", a="1"), "alice")
    assert after.status == 409
    dry = await api.request(
        "PATCH",
        _cm_path(namespace, "c") + "?fieldManager=alice&force=true&dryRun=All",
        data=json.dumps(configmap("c", a="1")).encode(),
        content_type=APPLY,
    )
    assert (dry.status, dry.body["data"]) == (200, {"a": "1"})
    assert (await api.request("GET", _cm_path(namespace, "c"))).body["data"] == {"a": "2"}


async def test_list_keys_come_from_defaults_or_are_required(
    api: RawAPI, namespace: str, gadgets: Gadgets
) -> None:
    path = f"/api/v1/namespaces/{namespace}/services/s?fieldManager=alice"
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80}]},  # protocol defaults to TCP
    }
    created = await api.request(
        "PATCH", path, data=json.dumps(service).encode(), content_type=APPLY
    )
    assert created.status == 201, created.body
    owned = managers(created.body)[("alice", "Apply")]["f:spec"]["f:ports"]
    assert list(owned) == ['k:{"port":80,"protocol":"TCP"}']
    reply = await gadgets.apply(gadgets.manifest("g", parts=[{"count": 1}]), "alice")
    assert reply.status == 500
    assert "reason" not in reply.body  # upstream's Status leaves an empty reason out
    assert reply.body["message"] == (
        f"failed to create typed patch object (/g; {gadgets.group}/v1, Kind=Gadget): "
        ".spec.parts: element 0: associative list with keys has an element that omits key field "
        '"name" (and doesn\'t have default value)'
    )
    twice = await gadgets.apply(gadgets.manifest("g", parts=[{"name": "a"}, {"name": "a"}]), "m")
    assert (twice.status, twice.body["message"]) == (
        500,
        f"failed to create typed patch object (/g; {gadgets.group}/v1, Kind=Gadget): "
        '.spec.parts: duplicate entries for key [name="a"]',
    )


async def test_list_semantics_follow_a_changed_crd(gadgets: Gadgets) -> None:
    await gadgets.apply(gadgets.manifest("g", args=["1"]), "alice")
    atomic = await gadgets.apply(gadgets.manifest("g", args=["2"]), "bob")
    assert atomic.status == 409  # an atomic list: bob would replace alice's list
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{gadgets.group}"
    crd = (await gadgets.api.request("GET", crd_path)).body
    spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["args"]["x-kubernetes-list-type"] = "set"
    assert (await gadgets.api.request("PUT", crd_path, crd)).status == 200
    as_set = await gadgets.apply(gadgets.manifest("g", args=["2"]), "bob")
    assert as_set.status == 200, as_set.body
    assert as_set.body["spec"]["args"] == ["1", "2"]


async def test_at_most_ten_update_managers_are_kept(api: RawAPI, namespace: str) -> None:
    await api.request("POST", _cm_path(namespace) + "?fieldManager=m00", configmap("c", k00="v"))
    for number in range(1, 12):
        reply = await api.request(
            "PATCH",
            _cm_path(namespace, "c") + f"?fieldManager=m{number:02d}",
            {"data": {f"k{number:02d}": "v"}},
            content_type=MERGE,
        )
        assert reply.status == 200
    entries = reply.body["metadata"]["managedFields"]
    names = [e["manager"] for e in entries]
    assert len(names) == 10
    assert "ancient-changes" in names
    assert "m11" in names
    (ancient,) = [e for e in entries if e["manager"] == "ancient-changes"]
    assert "f:k00" in ancient["fieldsV1"]["f:data"]
