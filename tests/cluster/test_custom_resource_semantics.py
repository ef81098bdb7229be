"""CRDs and custom resources: defaults, conditions, conflicts, field validation, versions."""

from __future__ import annotations

import asyncio
import copy
import json

from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.raw_api import RawAPI

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


async def test_crd_defaults_and_conditions(api: RawAPI) -> None:
    crd = widget_crd()
    del crd["spec"]["names"]["singular"]
    reply = await api.request("POST", CRDS, crd)
    assert reply.status == 201
    names = reply.body["spec"]["names"]
    assert (names["singular"], names["listKind"]) == ("widget", "WidgetList")
    assert reply.body["spec"]["conversion"] == {"strategy": "None"}
    assert reply.body["status"]["storedVersions"] == ["v1"]
    assert reply.body["status"]["acceptedNames"]["plural"] == "widgets"
    conditions = {c["type"]: (c["status"], c["reason"]) for c in reply.body["status"]["conditions"]}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


async def test_crd_name_must_be_plural_dot_group(api: RawAPI) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "wrong.example.com"
    reply = await api.request("POST", CRDS, crd)
    assert reply.status == 422
    assert [c["field"] for c in reply.body["details"]["causes"]] == ["metadata.name"]


async def test_crd_without_spec_reports_each_problem_once(api: RawAPI) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {},
    }
    reply = await api.request("POST", CRDS, crd)
    assert reply.status == 422, reply.body
    causes = [(c["reason"], c["field"]) for c in reply.body["details"]["causes"]]
    assert len(causes) == len(set(causes)), causes
    assert ("FieldValueRequired", "spec.group") in causes


async def test_conflicting_kind_is_not_accepted(api: RawAPI) -> None:
    first = widget_crd()
    group = first["spec"]["group"]
    await api.request("POST", CRDS, first)
    second = copy.deepcopy(first)
    second["metadata"]["name"] = f"gadgets.{group}"
    second["spec"]["names"].update(plural="gadgets", singular="gadget", shortNames=["gd"])
    reply = await api.request("POST", CRDS, second)
    assert reply.status == 201
    conditions = {c["type"]: c for c in reply.body["status"]["conditions"]}
    assert conditions["NamesAccepted"]["status"] == "False"
    # Upstream checks kind, then listKind; the last conflict found is reported.
    assert conditions["NamesAccepted"]["reason"] == "ListKindConflict"
    assert conditions["Established"]["status"] == "False"
    assert (await api.request("GET", f"/apis/{group}/v1/gadgets")).status == 404
    for name in (second["metadata"]["name"], first["metadata"]["name"]):
        await api.request("DELETE", f"{CRDS}/{name}")


async def test_field_validation_strict_and_warn(api: RawAPI, namespace: str) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    await api.request("POST", CRDS, crd)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    body = widget("w", group)
    body["spec"]["extra"] = 1
    strict = await api.request("POST", f"{path}?fieldValidation=Strict", body)
    assert strict.status == 400
    assert strict.body["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'unknown field "spec.extra"'
    )
    warned = await api.request("POST", path, body)
    assert warned.status == 201
    assert warned.headers.getall("Warning") == ['299 - "unknown field \\"spec.extra\\""']
    assert "extra" not in warned.body["spec"]  # pruned
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


async def test_served_versions_share_storage(api: RawAPI, namespace: str) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    v1 = crd["spec"]["versions"][0]
    v2 = {**copy.deepcopy(v1), "name": "v2", "storage": False}
    crd["spec"]["versions"].append(v2)
    await api.request("POST", CRDS, crd)
    created = await api.request(
        "POST", f"/apis/{group}/v1/namespaces/{namespace}/widgets", widget("w", group)
    )
    assert created.status == 201
    as_v2 = await api.request("GET", f"/apis/{group}/v2/namespaces/{namespace}/widgets/w")
    assert as_v2.body["apiVersion"] == f"{group}/v2"
    assert as_v2.body["spec"] == created.body["spec"]
    listed = await api.request("GET", f"/apis/{group}/v2/namespaces/{namespace}/widgets")
    assert [i["apiVersion"] for i in listed.body["items"]] == [f"{group}/v2"]
    groups = await api.request("GET", f"/apis/{group}")
    assert groups.body["preferredVersion"]["version"] == "v2"
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


async def test_create_drops_status_with_status_subresource(api: RawAPI, namespace: str) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    await api.request("POST", CRDS, crd)
    body = {**widget("w", group), "status": {"ready": True}}
    created = await api.request("POST", f"/apis/{group}/v1/namespaces/{namespace}/widgets", body)
    assert "status" not in created.body
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


async def test_scale_subresource_and_selectable_fields(api: RawAPI, namespace: str) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    version = crd["spec"]["versions"][0]
    version["subresources"]["scale"] = {
        "specReplicasPath": ".spec.size",
        "statusReplicasPath": ".status.size",
    }
    version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["size"] = {
        "type": "integer"
    }
    version["selectableFields"] = [{"jsonPath": ".spec.color"}]
    await api.request("POST", CRDS, crd)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    await api.request("POST", path, widget("a", group, size=2))
    red = widget("b", group)
    red["spec"]["color"] = "red"
    await api.request("POST", path, red)

    scale = await api.request("GET", f"{path}/a/scale")
    assert (scale.body["kind"], scale.body["spec"]) == ("Scale", {"replicas": 2})
    patched = await api.request(
        "PATCH",
        f"{path}/a/scale",
        {"spec": {"replicas": 6}},
        content_type="application/merge-patch+json",
    )
    assert patched.body["spec"] == {"replicas": 6}
    assert (await api.request("GET", f"{path}/a")).body["spec"]["size"] == 6

    selected = await api.request("GET", f"{path}?fieldSelector=spec.color%3Dred")
    assert [i["metadata"]["name"] for i in selected.body["items"]] == ["b"]
    unknown = await api.request("GET", f"{path}?fieldSelector=spec.size%3D1")
    assert unknown.status == 400
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


async def test_deleting_a_crd_ends_watches_on_its_resources(api: RawAPI, namespace: str) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    await api.request("POST", CRDS, crd)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    created = await api.request("POST", path, widget("w", group))
    rv = created.body["metadata"]["resourceVersion"]
    async with api.session.get(
        f"{api.url}{path}?watch=1&resourceVersion={rv}&timeoutSeconds=60"
    ) as response:
        await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")
        raw = await asyncio.wait_for(response.read(), 10)  # ends long before the timeout
    events = [json.loads(line) for line in raw.splitlines() if line.strip()]
    assert [e["type"] for e in events] == ["DELETED"]


async def test_crd_deletion_waits_for_custom_resource_finalizers(
    api: RawAPI, namespace: str
) -> None:
    crd = widget_crd()
    group, name = crd["spec"]["group"], crd["metadata"]["name"]
    await api.request("POST", CRDS, crd)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    held = widget("held", group)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.request("POST", path, held)

    deleting = await api.request("DELETE", f"{CRDS}/{name}")
    assert deleting.body["metadata"]["deletionTimestamp"]
    terminating = {c["type"]: c for c in deleting.body["status"]["conditions"]}["Terminating"]
    assert (terminating["status"], terminating["reason"]) == ("True", "InstanceDeletionInProgress")
    resources = await api.request("GET", f"/apis/{group}/v1")
    assert resources.body["resources"][0]["verbs"] == [
        "delete",
        "deletecollection",
        "get",
        "list",
        "watch",
    ]
    instance = await api.request("GET", f"{path}/held")
    assert instance.body["metadata"]["deletionTimestamp"]
    refused = await api.request("POST", path, widget("new", group))
    assert (refused.status, refused.body["message"]) == (
        405,
        "create not allowed while custom resource definition is terminating",
    )

    await api.request(
        "PATCH",
        f"{path}/held",
        {"metadata": {"finalizers": None}},
        content_type="application/merge-patch+json",
    )
    for _ in range(200):
        if (await api.request("GET", f"{CRDS}/{name}")).status == 404:
            break
        await asyncio.sleep(0.02)
    assert (await api.request("GET", f"{CRDS}/{name}")).status == 404
    assert (await api.request("GET", f"/apis/{group}/v1")).status == 404


async def test_deprecated_version_warns(api: RawAPI, namespace: str) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    crd["spec"]["versions"][0]["deprecated"] = True
    crd["spec"]["versions"][0]["deprecationWarning"] = "use v2 instead"
    await api.request("POST", CRDS, crd)
    reply = await api.request(
        "POST", f"/apis/{group}/v1/namespaces/{namespace}/widgets", widget("w", group)
    )
    assert reply.status == 201
    assert reply.headers.getall("Warning") == ['299 - "use v2 instead"']
    read = await api.request("GET", f"/apis/{group}/v1/namespaces/{namespace}/widgets/w")
    assert read.headers.getall("Warning") == ['299 - "use v2 instead"']
    await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")
