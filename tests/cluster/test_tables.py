"""Tables on the wire (``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``), as kubectl
asks for them: list metadata kept, ``includeObject``, one Table per watch event, CRD columns."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.raw_api import RawAPI

KUBECTL_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
TABLE = {"Accept": KUBECTL_ACCEPT}
#: The test's own ConfigMaps (all labelled ``k``), not the root CA publisher's.
OWN = "labelSelector=k"


async def _config_maps(api: RawAPI, namespace: str, *names: str) -> str:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for name in names:
        reply = await api.request(
            "POST", path, {"metadata": {"name": name, "labels": {"k": name}}, "data": {"a": "1"}}
        )
        assert reply.status == 201, reply.body
    return path


async def test_a_list_becomes_a_table_keeping_the_list_metadata(
    api: RawAPI, namespace: str
) -> None:
    path = await _config_maps(api, namespace, "a", "b", "c")
    reply = await api.request("GET", f"{path}?limit=2", headers=TABLE)
    assert reply.status == 200
    table = reply.body
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert table["columnDefinitions"][0]["format"] == "name"
    assert table["metadata"]["continue"]
    assert table["metadata"]["remainingItemCount"] == 2  # c, and the root CA publisher's
    assert int(table["metadata"]["resourceVersion"]) > 0
    assert [row["cells"][:2] for row in table["rows"]] == [["a", 1], ["b", 1]]
    partial = table["rows"][0]["object"]
    assert (partial["kind"], partial["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert partial["metadata"]["labels"] == {"k": "a"}
    assert "data" not in partial
    rest = await api.request(
        "GET", f"{path}?limit=2&continue={table['metadata']['continue']}", headers=TABLE
    )
    assert [row["cells"][0] for row in rest.body["rows"]] == ["c", "kube-root-ca.crt"]


async def test_include_object(api: RawAPI, namespace: str) -> None:
    path = await _config_maps(api, namespace, "one")
    whole = await api.request("GET", f"{path}?{OWN}&includeObject=Object", headers=TABLE)
    obj = whole.body["rows"][0]["object"]
    assert (obj["kind"], obj["apiVersion"], obj["data"]) == ("ConfigMap", "v1", {"a": "1"})
    bare = await api.request("GET", f"{path}?{OWN}&includeObject=None", headers=TABLE)
    assert "object" not in bare.body["rows"][0]
    bad = await api.request("GET", f"{path}?includeObject=Everything", headers=TABLE)
    assert (bad.status, bad.body["reason"]) == (400, "BadRequest")
    assert bad.body["message"] == 'unrecognized includeObject value: "Everything"'


async def test_one_object_and_the_v1beta1_table(api: RawAPI, namespace: str) -> None:
    path = await _config_maps(api, namespace, "solo")
    reply = await api.request(
        "GET",
        f"{path}/solo",
        headers={"Accept": "application/json;as=Table;v=v1beta1;g=meta.k8s.io"},
    )
    assert reply.status == 200
    assert reply.body["apiVersion"] == "meta.k8s.io/v1beta1"
    assert reply.body["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
    assert [row["cells"][:2] for row in reply.body["rows"]] == [["solo", 1]]
    plain = await api.request("GET", f"{path}/solo")
    assert plain.body["kind"] == "ConfigMap"


async def test_kinds_without_a_printer_get_name_and_created_at(api: RawAPI) -> None:
    reply = await api.request(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", headers=TABLE
    )
    assert [c["name"] for c in reply.body["columnDefinitions"]] == ["Name", "Created At"]
    assert reply.body["columnDefinitions"][1]["type"] == "date"


async def test_watch_sends_a_table_per_event_with_headers_once(api: RawAPI, namespace: str) -> None:
    path = await _config_maps(api, namespace, "w1", "w2")
    async with api.session.get(
        f"{api.url}{path}?{OWN}&watch=true&timeoutSeconds=1", headers=TABLE
    ) as reply:
        assert reply.status == 200
        events = [json.loads(line) async for line in reply.content if line.strip()]
    assert [e["type"] for e in events] == ["ADDED", "ADDED"]
    first, second = (e["object"] for e in events)
    assert first["kind"] == "Table" and first["columnDefinitions"][0]["name"] == "Name"
    assert second["columnDefinitions"] is None
    assert [e["object"]["rows"][0]["cells"][0] for e in events] == ["w1", "w2"]


async def test_custom_resources_use_the_crd_printer_columns(api: RawAPI, namespace: str) -> None:
    crd: dict[str, Any] = widget_crd()
    version = crd["spec"]["versions"][0]
    version["additionalPrinterColumns"] = [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
        {"name": "Ready", "type": "boolean", "jsonPath": ".status.ready"},
    ]
    group = crd["spec"]["group"]
    created = await api.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd
    )
    assert created.status == 201, created.body
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    reply = await api.request("POST", path, widget("w1", group, size=4))
    assert reply.status == 201, reply.body
    table = (await api.request("GET", path, headers=TABLE)).body
    assert [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", 0),
        ("Size", "integer", 0),
        ("Color", "string", 1),
        ("Ready", "boolean", 0),
    ]
    assert table["rows"][0]["cells"] == ["w1", 4, "blue", None]
    await api.request(
        "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}"
    )


async def test_custom_resources_without_columns_show_age(api: RawAPI, namespace: str) -> None:
    crd = widget_crd()
    group = crd["spec"]["group"]
    await api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    await api.request("POST", path, widget("w1", group))
    table = (await api.request("GET", f"{path}/w1", headers=TABLE)).body
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["columnDefinitions"][1]["type"] == "date"
    assert table["rows"][0]["cells"][0] == "w1"
    assert table["rows"][0]["cells"][1].endswith("s")
    await api.request(
        "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}"
    )


async def test_the_scale_subresource_has_its_own_columns(api: RawAPI, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    body = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    assert (await api.request("POST", path, body)).status == 201
    # The built-in controllers bring the Deployment up; once its Scale reports three
    # replicas, the table's Available column must say so too.
    for _ in range(200):
        scale = (await api.request("GET", f"{path}/web/scale")).body
        if scale.get("status", {}).get("replicas") == 3:
            break
        await asyncio.sleep(0.05)
    table = (await api.request("GET", f"{path}/web/scale", headers=TABLE)).body
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Desired", "integer"),
        ("Available", "integer"),
        ("Age", "string"),
    ]
    assert table["rows"][0]["cells"][:3] == ["web", 3, 3]


async def test_events_of_both_apis_print_as_events(api: RawAPI, namespace: str) -> None:
    event = {
        "metadata": {"name": "p.1"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "regarding": {"kind": "Pod", "name": "p", "namespace": namespace},
        "reason": "Pulled",
        "note": "Image pulled ",
        "type": "Normal",
        "action": "Pull",
        "reportingController": "kubelet",
        "reportingInstance": "node-1",
    }
    path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    created = await api.request("POST", path, event)
    assert created.status == 201, created.body
    for listed in (path, f"/api/v1/namespaces/{namespace}/events"):
        table = (await api.request("GET", listed, headers=TABLE)).body
        assert [c["name"] for c in table["columnDefinitions"]] == [
            "Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message",
            "First Seen", "Count", "Name",
        ]  # fmt: skip
        cells = table["rows"][0]["cells"]
        assert cells[1:8] == [
            "Normal",
            "Pulled",
            "pod/p",
            "",
            "kubelet, node-1",
            "Image pulled",
            cells[0],
        ]
        assert cells[8:] == [1, "p.1"]
