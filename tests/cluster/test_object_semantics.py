"""Write semantics of the local cluster: metadata the server owns, no-op writes, generation,
subresources, deletion with finalizers and propagation policies, dry runs, namespaces."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cluster.raw_api import RawAPI

MERGE = "application/merge-patch+json"


def _deployment(name: str, replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }


async def test_create_fills_server_owned_metadata(api: RawAPI, namespace: str) -> None:
    body = {"metadata": {"generateName": "gen-", "uid": "mine", "selfLink": "/x"}}
    reply = await api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", body)
    assert reply.status == 201
    meta = reply.body["metadata"]
    assert meta["name"].startswith("gen-")
    assert len(meta["name"]) == len("gen-") + 5
    assert meta["uid"] != "mine"
    assert "selfLink" not in meta
    assert meta["creationTimestamp"].endswith("Z")
    assert (reply.body["apiVersion"], reply.body["kind"]) == ("v1", "ConfigMap")


async def test_resource_version_is_global_and_increasing(api: RawAPI, namespace: str) -> None:
    versions = []
    for name in ("a", "b", "c"):
        reply = await api.request(
            "POST", f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"name": name}}
        )
        versions.append(int(reply.body["metadata"]["resourceVersion"]))
    assert versions == sorted(versions)
    assert len(set(versions)) == 3


async def test_noop_update_keeps_resource_version(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = await api.request("POST", path, {"metadata": {"name": "n"}, "data": {"a": "1"}})
    again = await api.request("PUT", f"{path}/n", created.body)
    assert again.status == 200
    assert again.body["metadata"]["resourceVersion"] == created.body["metadata"]["resourceVersion"]
    patched = await api.request("PATCH", f"{path}/n", {"data": {"a": "1"}}, content_type=MERGE)
    assert (
        patched.body["metadata"]["resourceVersion"] == created.body["metadata"]["resourceVersion"]
    )
    rv = created.body["metadata"]["resourceVersion"]
    events = await api.watch(f"{path}?watch=1&resourceVersion={rv}&timeoutSeconds=1")
    assert events == []


async def test_generation_follows_spec_changes_only(api: RawAPI, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    created = await api.request("POST", path, _deployment("d"))
    assert created.body["metadata"]["generation"] == 1
    labelled = await api.request(
        "PATCH", f"{path}/d", {"metadata": {"labels": {"x": "y"}}}, content_type=MERGE
    )
    assert labelled.body["metadata"]["generation"] == 1
    scaled = await api.request("PATCH", f"{path}/d", {"spec": {"replicas": 3}}, content_type=MERGE)
    assert scaled.body["metadata"]["generation"] == 2


async def test_status_subresource_separates_status_and_spec(api: RawAPI, namespace: str) -> None:
    # A Service: no controller of the local cluster writes its status (a Deployment's status
    # belongs to the deployment controller).
    path = f"/api/v1/namespaces/{namespace}/services"

    def ingress(ip: str) -> dict[str, Any]:
        return {"loadBalancer": {"ingress": [{"ip": ip}]}}

    service = {
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "a"}},
        "status": ingress("10.0.0.9"),
    }
    created = await api.request("POST", path, service)
    assert created.status == 201, created.body
    assert not created.body.get("status", {}).get("loadBalancer", {}).get("ingress")
    status = await api.request(
        "PATCH",
        f"{path}/s/status",
        {"status": ingress("10.0.0.1"), "spec": {"selector": {"app": "b"}}},
        content_type=MERGE,
    )
    assert status.body["status"] == ingress("10.0.0.1")
    assert status.body["spec"]["selector"] == {"app": "a"}  # a status write changes only status
    main = await api.request(
        "PATCH",
        f"{path}/s",
        {"status": ingress("10.0.0.2"), "spec": {"selector": {"app": "c"}}},
        content_type=MERGE,
    )
    assert main.body["status"] == ingress("10.0.0.1")  # a main write keeps the status
    assert main.body["spec"]["selector"] == {"app": "c"}


async def test_scale_subresource(api: RawAPI, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    await api.request("POST", path, _deployment("web", replicas=2))
    scale = await api.request("GET", f"{path}/web/scale")
    assert scale.body["kind"] == "Scale"
    assert scale.body["apiVersion"] == "autoscaling/v1"
    assert scale.body["spec"] == {"replicas": 2}
    assert scale.body["status"]["selector"] == "app=web"
    patched = await api.request(
        "PATCH", f"{path}/web/scale", {"spec": {"replicas": 4}}, content_type=MERGE
    )
    assert patched.body["spec"] == {"replicas": 4}
    deployment = await api.request("GET", f"{path}/web")
    assert deployment.body["spec"]["replicas"] == 4


async def test_finalizers_hold_deletion(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = {"metadata": {"name": "f", "finalizers": ["example.com/hold"]}}
    await api.request("POST", path, body)
    deleting = await api.request("DELETE", f"{path}/f")
    assert deleting.status == 200
    assert deleting.body["metadata"]["deletionTimestamp"]
    assert deleting.body["metadata"]["deletionGracePeriodSeconds"] == 0

    again = await api.request("DELETE", f"{path}/f")
    assert again.status == 200
    assert (
        again.body["metadata"]["deletionTimestamp"]
        == deleting.body["metadata"]["deletionTimestamp"]
    )

    more = await api.request(
        "PATCH",
        f"{path}/f",
        {"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}},
        content_type=MERGE,
    )
    assert more.status == 422
    assert "no new finalizers can be added if the object is being deleted" in more.body["message"]

    released = await api.request(
        "PATCH", f"{path}/f", {"metadata": {"finalizers": None}}, content_type=MERGE
    )
    assert released.status == 200
    gone = await api.request("GET", f"{path}/f")
    assert gone.status == 404


async def test_propagation_policy_is_recorded_as_finalizer(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    await api.request("POST", path, {"metadata": {"name": "fg"}})
    reply = await api.request("DELETE", f"{path}/fg", {"propagationPolicy": "Foreground"})
    assert reply.body["metadata"]["finalizers"] == ["foregroundDeletion"]
    both = await api.request(
        "DELETE", f"{path}/fg", {"propagationPolicy": "Orphan", "orphanDependents": True}
    )
    assert both.status == 422


async def test_delete_preconditions(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    await api.request("POST", path, {"metadata": {"name": "pre"}})
    reply = await api.request("DELETE", f"{path}/pre", {"preconditions": {"uid": "other"}})
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    assert "Precondition failed: UID in precondition: other" in reply.body["message"]


async def test_delete_collection_with_selector(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for name, tier in (("a", "web"), ("b", "web"), ("c", "db")):
        await api.request("POST", path, {"metadata": {"name": name, "labels": {"tier": tier}}})
    reply = await api.request("DELETE", f"{path}?labelSelector=tier%3Dweb")
    assert reply.status == 200
    assert sorted(i["metadata"]["name"] for i in reply.body["items"]) == ["a", "b"]
    left = await api.request("GET", path)
    assert [i["metadata"]["name"] for i in left.body["items"]] == ["c", "kube-root-ca.crt"]


async def test_dry_run_persists_nothing(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    reply = await api.request("POST", f"{path}?dryRun=All", {"metadata": {"name": "dry"}})
    assert reply.status == 201
    assert (await api.request("GET", f"{path}/dry")).status == 404


async def test_custom_resource_update_needs_resource_version(api: RawAPI, namespace: str) -> None:
    from tests.cluster.crd_manifests import widget, widget_crd

    crd = widget_crd()
    group = crd["spec"]["group"]
    await api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    created = await api.request("POST", path, widget("w", group))
    body = created.body
    del body["metadata"]["resourceVersion"]
    reply = await api.request("PUT", f"{path}/w", body)
    assert reply.status == 422
    assert reply.body["message"] == (
        f'Widget.{group} "w" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
        "must be specified for an update"
    )
    await api.request(
        "DELETE",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}",
    )


async def test_terminating_namespace_refuses_content_then_disappears(api: RawAPI) -> None:
    await api.request("POST", "/api/v1/namespaces", {"metadata": {"name": "doomed"}})
    created = await api.request("GET", "/api/v1/namespaces/doomed")
    assert created.body["spec"]["finalizers"] == ["kubernetes"]
    assert created.body["metadata"]["labels"] == {"kubernetes.io/metadata.name": "doomed"}
    held = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    await api.request("POST", "/api/v1/namespaces/doomed/configmaps", held)

    deleting = await api.request("DELETE", "/api/v1/namespaces/doomed")
    assert deleting.status == 200
    assert deleting.body["status"]["phase"] == "Terminating"

    refused = await api.request(
        "POST", "/api/v1/namespaces/doomed/configmaps", {"metadata": {"name": "new"}}
    )
    assert (refused.status, refused.body["reason"]) == (403, "Forbidden")
    assert refused.body["message"] == (
        'configmaps "new" is forbidden: unable to create new content in namespace doomed '
        "because it is being terminated"
    )
    assert refused.body["details"]["causes"][0]["reason"] == "NamespaceTerminating"

    await api.request(
        "PATCH",
        "/api/v1/namespaces/doomed/configmaps/held",
        {"metadata": {"finalizers": None}},
        content_type=MERGE,
    )
    for _ in range(200):
        if (await api.request("GET", "/api/v1/namespaces/doomed")).status == 404:
            break
        await asyncio.sleep(0.05)
    assert (await api.request("GET", "/api/v1/namespaces/doomed")).status == 404


async def test_system_namespaces_cannot_be_deleted(api: RawAPI) -> None:
    reply = await api.request("DELETE", "/api/v1/namespaces/kube-system")
    assert (reply.status, reply.body["message"]) == (
        403,
        'namespaces "kube-system" is forbidden: this namespace may not be deleted',
    )


async def test_pod_deletion_is_immediate_unless_scheduled(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    # A scheduler name nobody serves keeps the pod unscheduled (the default scheduler would
    # bind it at once); node-1 below has no kubelet, so its pod stays until forced.
    spec = {"schedulerName": "nobody", "containers": [{"name": "c", "image": "busybox"}]}
    created = await api.request("POST", path, {"metadata": {"name": "p"}, "spec": spec})
    assert created.body["status"]["phase"] == "Pending"
    deleted = await api.request("DELETE", f"{path}/p")
    assert deleted.body["kind"] == "Pod"
    assert (await api.request("GET", f"{path}/p")).status == 404

    scheduled = {"metadata": {"name": "s"}, "spec": {**spec, "nodeName": "node-1"}}
    await api.request("POST", path, scheduled)
    graceful = await api.request("DELETE", f"{path}/s")
    assert graceful.body["metadata"]["deletionGracePeriodSeconds"] == 30
    assert (await api.request("GET", f"{path}/s")).status == 200
    forced = await api.request("DELETE", f"{path}/s", {"gracePeriodSeconds": 0})
    assert forced.status == 200
    assert (await api.request("GET", f"{path}/s")).status == 404


async def test_lease_times_are_normalised(api: RawAPI, namespace: str) -> None:
    body = {
        "metadata": {"name": "leader"},
        "spec": {
            "holderIdentity": "me",
            "leaseDurationSeconds": 15,
            "renewTime": "2024-01-02T03:04:05.123+00:00",
        },
    }
    reply = await api.request(
        "POST", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", body
    )
    assert reply.status == 201
    assert reply.body["spec"]["renewTime"] == "2024-01-02T03:04:05.123000Z"


async def test_events_are_validated_and_shared_between_apis(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/events"
    incomplete = {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace},
        "eventTime": "2024-01-02T03:04:05.000000Z",
    }
    reply = await api.request("POST", path, incomplete)
    assert reply.status == 422
    fields = {c["field"] for c in reply.body["details"]["causes"]}
    assert {"reportingComponent", "reportingInstance", "action", "reason"} <= fields

    event = {
        **incomplete,
        "reportingComponent": "example.com/operator",
        "reportingInstance": "op-1",
        "action": "Reconcile",
        "reason": "Done",
        "message": "reconciled",
        "type": "Normal",
    }
    assert (await api.request("POST", path, event)).status == 201
    as_v1 = await api.request("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/e1")
    assert as_v1.body["apiVersion"] == "events.k8s.io/v1"
    assert as_v1.body["note"] == "reconciled"
    assert as_v1.body["regarding"]["name"] == "p"
    selected = await api.request("GET", f"{path}?fieldSelector=involvedObject.name%3Dp")
    assert [i["metadata"]["name"] for i in selected.body["items"]] == ["e1"]


async def test_namespace_finalize_subresource(api: RawAPI) -> None:
    await api.request("POST", "/api/v1/namespaces", {"metadata": {"name": "fin"}})
    namespace = (await api.request("GET", "/api/v1/namespaces/fin")).body
    namespace["spec"]["finalizers"] = ["example.com/extra", "kubernetes"]
    updated = await api.request("PUT", "/api/v1/namespaces/fin/finalize", namespace)
    assert updated.body["spec"]["finalizers"] == ["example.com/extra", "kubernetes"]
    # A plain update cannot change spec.finalizers.
    updated.body["spec"]["finalizers"] = []
    plain = await api.request("PUT", "/api/v1/namespaces/fin", updated.body)
    assert plain.body["spec"]["finalizers"] == ["example.com/extra", "kubernetes"]

    await api.request("DELETE", "/api/v1/namespaces/fin")
    for _ in range(100):
        current = (await api.request("GET", "/api/v1/namespaces/fin")).body
        if current["spec"]["finalizers"] == ["example.com/extra"]:
            break
        await asyncio.sleep(0.02)
    assert current["spec"]["finalizers"] == ["example.com/extra"]  # "kubernetes" was removed
    current["spec"]["finalizers"] = []
    finalized = await api.request("PUT", "/api/v1/namespaces/fin/finalize", current)
    assert finalized.status == 200
    assert (await api.request("GET", "/api/v1/namespaces/fin")).status == 404


async def test_events_api_watch_is_converted(api: RawAPI, namespace: str) -> None:
    listed = await api.request("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")
    rv = listed.body["metadata"]["resourceVersion"]
    event = {
        "metadata": {"name": "old-style"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace},
        "reason": "Started",
        "message": "hello",
        "type": "Normal",
    }
    assert (
        await api.request("POST", f"/api/v1/namespaces/{namespace}/events", event)
    ).status == 201
    events = await api.watch(
        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
        f"?watch=1&resourceVersion={rv}&timeoutSeconds=1"
    )
    assert [e["object"]["apiVersion"] for e in events] == ["events.k8s.io/v1"]
    assert events[0]["object"]["note"] == "hello"


async def test_builtin_defaults_are_filled(api: RawAPI, namespace: str) -> None:
    created = await api.request(
        "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", _deployment("dd")
    )
    spec = created.body["spec"]
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"]) == ("Always", "ClusterFirst")
    assert pod_spec["containers"][0]["imagePullPolicy"] == "Always"  # untagged image


async def test_job_selector_is_generated_from_its_uid(api: RawAPI, namespace: str) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox:1.36"}],
                }
            }
        },
    }
    created = await api.request("POST", f"/apis/batch/v1/namespaces/{namespace}/jobs", job)
    assert created.status == 201, created.body
    uid = created.body["metadata"]["uid"]
    assert created.body["spec"]["selector"] == {
        "matchLabels": {"batch.kubernetes.io/controller-uid": uid}
    }
    labels = created.body["spec"]["template"]["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "j"
    assert (created.body["spec"]["completions"], created.body["spec"]["backoffLimit"]) == (1, 6)


async def test_events_k8s_io_create(api: RawAPI, namespace: str) -> None:
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"generateName": "widget-"},
        "eventTime": "2024-01-02T03:04:05.123456+00:00",
        "reportingController": "example.com/widget-controller",
        "reportingInstance": "widget-controller-1",
        "action": "Reconcile",
        "reason": "Scaled",
        "regarding": {"kind": "Widget", "name": "w", "namespace": namespace},
        "note": "scaled to 3",
        "type": "Normal",
    }
    path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    created = await api.request("POST", path, event)
    assert created.status == 201, created.body
    assert created.body["eventTime"] == "2024-01-02T03:04:05.123456Z"
    assert created.body["regarding"]["name"] == "w"
    core = await api.request(
        "GET", f"/api/v1/namespaces/{namespace}/events/{created.body['metadata']['name']}"
    )
    assert (core.body["message"], core.body["reportingComponent"]) == (
        "scaled to 3",
        "example.com/widget-controller",
    )
    bad = {**event, "type": "Odd"}
    rejected = await api.request("POST", path, bad)
    assert rejected.status == 422
    assert [c["field"] for c in rejected.body["details"]["causes"]] == ["type"]


async def test_lease_renewal_with_optimistic_concurrency(api: RawAPI, namespace: str) -> None:
    path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    lease = {
        "metadata": {"name": "leader"},
        "spec": {
            "holderIdentity": "a",
            "leaseDurationSeconds": 15,
            "acquireTime": "2024-01-02T03:04:05.000000Z",
            "renewTime": "2024-01-02T03:04:05.000000Z",
            "leaseTransitions": 0,
        },
    }
    created = await api.request("POST", path, lease)
    renewed = dict(created.body)
    renewed["spec"] = {**created.body["spec"], "renewTime": "2024-01-02T03:04:07.000000Z"}
    first = await api.request("PUT", f"{path}/leader", renewed)
    assert first.status == 200
    second = await api.request("PUT", f"{path}/leader", renewed)  # same stale resourceVersion
    assert (second.status, second.body["reason"]) == (409, "Conflict")
    assert second.body["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has '
        "been modified; please apply your changes to the latest version and try again"
    )
    assert second.body["details"] == {
        "name": "leader",
        "group": "coordination.k8s.io",
        "kind": "leases",
    }


async def test_services_get_a_stable_cluster_ip(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/services"
    body = {
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    created = await api.request("POST", path, body)
    assert created.status == 201, created.body
    spec = created.body["spec"]
    assert spec["clusterIP"].startswith("10.")
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["type"] == "ClusterIP"
    other = await api.request("POST", path, {**body, "metadata": {"name": "other"}})
    assert other.body["spec"]["clusterIP"] != spec["clusterIP"]
    changed = await api.request(
        "PATCH",
        f"{path}/web",
        {"spec": {"clusterIP": "10.96.0.2", "clusterIPs": ["10.96.0.2"]}},
        content_type=MERGE,
    )
    assert changed.status == 422
    assert "may not change once set" in changed.body["message"]
    deleted = await api.request("DELETE", f"{path}/web")
    assert deleted.body["kind"] == "Service"  # services answer a delete with the object


async def test_events_k8s_io_missing_event_time_is_reported_once(
    api: RawAPI, namespace: str
) -> None:
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "type": "Normal",
    }
    path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    rejected = await api.request("POST", path, event)
    assert rejected.status == 422, rejected.body
    fields = [c["field"] for c in rejected.body["details"]["causes"]]
    assert fields.count("eventTime") == 1, fields
