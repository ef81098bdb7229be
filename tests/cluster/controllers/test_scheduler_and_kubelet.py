"""Nodes, the scheduler and the simulated kubelet through the official client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.cluster.controllers.waiting import eventually_sync

NODE = "setpoint-node"


def pod(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def running(core_v1: client.CoreV1Api, namespace: str, name: str) -> client.V1Pod:
    def check() -> client.V1Pod | None:
        found = core_v1.read_namespaced_pod(name, namespace)
        return found if found.status.phase == "Running" else None

    return eventually_sync(check, f"pod {name} Running")


def events_of(core_v1: client.CoreV1Api, namespace: str, name: str) -> dict[str, Any]:
    return {
        e.reason: e
        for e in core_v1.list_namespaced_event(namespace).items
        if e.involved_object.name == name
    }


def test_the_node_is_ready_with_allocatable_and_a_lease(
    core_v1: client.CoreV1Api, api_client: client.ApiClient
) -> None:
    node = core_v1.read_node(NODE)
    ready = {c.type: c for c in node.status.conditions}["Ready"]
    assert (ready.status, ready.reason) == ("True", "KubeletReady")
    assert {"cpu", "memory", "pods"} <= set(node.status.allocatable)
    assert node.metadata.labels["kubernetes.io/hostname"] == NODE
    assert node.status.node_info.kubelet_version.startswith("v1.32")
    lease = client.CoordinationV1Api(api_client).read_namespaced_lease(NODE, "kube-node-lease")
    assert lease.spec.holder_identity == NODE
    assert lease.metadata.owner_references[0].kind == "Node"


def test_a_pod_is_scheduled_and_run(core_v1: client.CoreV1Api, namespace: str) -> None:
    core_v1.create_namespaced_pod(namespace, pod("web"))

    found = running(core_v1, namespace, "web")

    assert found.spec.node_name == NODE
    assert found.spec.service_account_name == "default"
    assert [c.type for c in found.status.conditions] == [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    assert all(c.status == "True" for c in found.status.conditions)
    assert found.status.pod_ip.startswith("10.244.")
    assert found.status.host_ip == "172.18.0.2"
    assert found.status.start_time is not None
    (container,) = found.status.container_statuses
    assert (container.ready, container.started, container.restart_count) == (True, True, 0)
    assert container.state.running.started_at is not None
    assert container.container_id.startswith("containerd://")
    assert container.image_id.startswith("docker.io/library/nginx@sha256:")

    def all_events() -> dict[str, Any]:
        found_events = events_of(core_v1, namespace, "web")
        return found_events if {"Scheduled", "Started"} <= set(found_events) else {}

    events = eventually_sync(all_events, "Scheduled and Started events")
    assert events["Scheduled"].message == f"Successfully assigned {namespace}/web to {NODE}"
    assert events["Scheduled"].reporting_component == "default-scheduler"
    assert events["Pulled"].message == 'Container image "nginx:1.27" already present on machine'
    assert events["Started"].message == "Started container app"
    assert events["Started"].source.component == "kubelet"
    assert events["Started"].source.host == NODE
    assert events["Started"].involved_object.field_path == "spec.containers{app}"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"nodeSelector": {"disk": "ssd"}}, "1 node(s) didn't match Pod's node affinity/selector"),
        (
            {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx",
                        "resources": {"requests": {"cpu": "1000"}},
                    }
                ]
            },
            "1 Insufficient cpu",
        ),
    ],
)
def test_a_pod_no_node_fits_stays_pending(
    core_v1: client.CoreV1Api, namespace: str, spec: dict[str, Any], reason: str
) -> None:
    core_v1.create_namespaced_pod(namespace, pod("stuck", **spec))

    def unschedulable() -> Any:
        conditions = core_v1.read_namespaced_pod("stuck", namespace).status.conditions or []
        return next((c for c in conditions if c.type == "PodScheduled"), None)

    condition = eventually_sync(unschedulable, "PodScheduled False")
    assert (condition.status, condition.reason) == ("False", "Unschedulable")
    assert condition.message.startswith(f"0/1 nodes are available: {reason}.")
    assert "preemption: 0/1 nodes are available" in condition.message
    stuck = core_v1.read_namespaced_pod("stuck", namespace)
    assert stuck.status.phase == "Pending"
    assert stuck.spec.node_name is None
    events = eventually_sync(
        lambda: events_of(core_v1, namespace, "stuck").get("FailedScheduling"),
        "FailedScheduling event",
    )
    assert events.type == "Warning"
    assert events.message == condition.message


def test_binding_assigns_a_pod_once(core_v1: client.CoreV1Api, namespace: str) -> None:
    core_v1.create_namespaced_pod(namespace, pod("manual", schedulerName="my-scheduler"))
    created = core_v1.read_namespaced_pod("manual", namespace)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "manual", "uid": created.metadata.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": NODE},
    }

    # _preload_content=False: the client cannot decode the Status answer as a V1Binding (a
    # known issue of the official client, the same against kube-apiserver).
    answer = core_v1.create_namespaced_pod_binding(
        "manual", namespace, binding, _preload_content=False
    )
    assert answer.status == 201

    bound = running(core_v1, namespace, "manual")
    assert bound.spec.node_name == NODE
    with pytest.raises(ApiException) as again:
        core_v1.create_namespaced_pod_binding("manual", namespace, binding, _preload_content=False)
    assert again.value.status == 409
    message = json.loads(again.value.body)["message"]
    assert message.endswith(f'pod manual is already assigned to node "{NODE}"')


def test_deleting_a_running_pod_stops_its_containers_then_removes_it(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    core_v1.create_namespaced_pod(namespace, pod("doomed"))
    running(core_v1, namespace, "doomed")

    answer = core_v1.delete_namespaced_pod("doomed", namespace)
    assert answer.metadata.deletion_timestamp is not None  # graceful: kept for the kubelet

    def gone() -> bool:
        try:
            core_v1.read_namespaced_pod("doomed", namespace)
        except ApiException as exc:
            return exc.status == 404
        return False

    eventually_sync(gone, "the kubelet removes the pod")
    killing = events_of(core_v1, namespace, "doomed")["Killing"]
    assert killing.message == "Stopping container app"


def test_logs_say_the_output_is_simulated(core_v1: client.CoreV1Api, namespace: str) -> None:
    core_v1.create_namespaced_pod(namespace, pod("talker"))
    running(core_v1, namespace, "talker")

    text = core_v1.read_namespaced_pod_log("talker", namespace)

    assert "simulated" in text
    assert "--run-pods" in text


def test_logs_of_a_pod_with_two_containers_need_a_container_name(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    two = pod("two")
    two["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    core_v1.create_namespaced_pod(namespace, two)
    running(core_v1, namespace, "two")

    with pytest.raises(ApiException) as caught:
        core_v1.read_namespaced_pod_log("two", namespace)

    assert caught.value.status == 400
    assert "a container name must be specified for pod two, choose one of: [app sidecar]" in (
        caught.value.body
    )


def test_every_namespace_gets_a_default_service_account(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    account = eventually_sync(
        lambda: (
            {sa.metadata.name for sa in core_v1.list_namespaced_service_account(namespace).items}
            >= {"default"}
        ),
        "ServiceAccount default",
    )
    assert account


def test_a_pod_created_with_a_node_name_runs_there(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    core_v1.create_namespaced_pod(namespace, pod("direct", nodeName=NODE))

    found = running(core_v1, namespace, "direct")

    scheduled = {c.type: c for c in found.status.conditions}["PodScheduled"]
    assert scheduled.status == "True"
    assert "Scheduled" not in events_of(core_v1, namespace, "direct")
