"""The cells of built-in kinds' tables, against the rules of upstream's ``printers.go``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from setpoint.cluster.apiserver.printers import human_duration
from setpoint.cluster.apiserver.printers.apps import DAEMON_SETS, DEPLOYMENTS, REPLICA_SETS
from setpoint.cluster.apiserver.printers.batch import CRON_JOBS, JOBS
from setpoint.cluster.apiserver.printers.core import (
    CONFIG_MAPS,
    ENDPOINT_SLICES,
    EVENTS,
    NAMESPACES,
    NODES,
    PODS,
    RESOURCE_QUOTAS,
    SECRETS,
    SERVICES,
)
from setpoint.cluster.apiserver.printers.platform import (
    VALIDATING_ADMISSION_POLICIES,
    VALIDATING_ADMISSION_POLICY_BINDINGS,
)
from setpoint.cluster.apiserver.printers.rbac import RBAC_PRINTERS

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


# apimachinery duration_test.go (TestHumanDuration, TestHumanDurationBoundaries).
@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (1, "1s"),
        (70, "70s"),
        (190, "3m10s"),
        (70 * 60, "70m"),
        (47 * 3600, "47h"),
        (49 * 3600, "2d1h"),
        ((8 * 24 + 2) * 3600, "8d"),
        (367 * 24 * 3600, "367d"),
        ((365 * 2 * 24 + 25) * 3600, "2y1d"),
        ((365 * 8 * 24 + 2) * 3600, "8y"),
        (-2, "<invalid>"),
        (-1.999, "0s"),
        (0.999, "0s"),
        (119.999, "119s"),
        (120, "2m"),
        (121, "2m1s"),
        (599.999, "9m59s"),
        (601, "10m"),
        (3 * 3600 - 0.001, "179m"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600 - 0.001, "7h59m"),
        (8 * 3600 + 59 * 60, "8h"),
        (2 * 24 * 3600, "2d"),
        (8 * 24 * 3600 - 0.001, "7d23h"),
        (2 * 365 * 24 * 3600 - 0.001, "729d"),
        (2 * 365 * 24 * 3600 + 23 * 3600, "2y"),
        (2 * 365 * 24 * 3600 + 24 * 3600, "2y1d"),
    ],
)
def test_ages_read_as_kubectl_shows_them(seconds: float, shown: str) -> None:
    assert human_duration(seconds) == shown


def pod(status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "creationTimestamp": ago(minutes=5)},
        "spec": {"containers": [{"name": "app", "image": "busybox"}], **spec},
        "status": status,
    }


def running(ready: bool = True, restarts: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "name": "app",
        "ready": ready,
        "restartCount": restarts,
        "state": {"running": {"startedAt": ago(minutes=4)}},
        **extra,
    }


@pytest.mark.parametrize(
    ("status", "ready", "shown", "restarts"),
    [
        ({"phase": "Pending"}, "0/1", "Pending", "0"),
        (
            {
                "phase": "Pending",
                "containerStatuses": [
                    {"name": "app", "state": {"waiting": {"reason": "ContainerCreating"}}}
                ],
            },
            "0/1",
            "ContainerCreating",
            "0",
        ),
        ({"phase": "Running", "containerStatuses": [running()]}, "1/1", "Running", "0"),
        (
            {
                "phase": "Succeeded",
                "containerStatuses": [
                    {
                        "name": "app",
                        "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                    }
                ],
            },
            "0/1",
            "Completed",
            "0",
        ),
        (
            {
                "phase": "Running",
                "containerStatuses": [
                    {
                        "name": "app",
                        "restartCount": 4,
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(minutes=3)}},
                    }
                ],
            },
            "0/1",
            "CrashLoopBackOff",
            "4 (3m ago)",
        ),
        (
            {
                "phase": "Running",
                "containerStatuses": [
                    {"name": "app", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
                ],
            },
            "0/1",
            "Signal:9",
            "0",
        ),
        (
            {
                "phase": "Running",
                "containerStatuses": [{"name": "app", "state": {"terminated": {"exitCode": 2}}}],
            },
            "0/1",
            "ExitCode:2",
            "0",
        ),
        (
            {
                "phase": "Pending",
                "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}
                ],
            },
            "0/1",
            "SchedulingGated",
            "0",
        ),
        ({"phase": "Failed", "reason": "Evicted"}, "0/1", "Evicted", "0"),
    ],
)
def test_pod_ready_status_and_restarts(
    status: dict[str, Any], ready: str, shown: str, restarts: str
) -> None:
    cells = PODS.cells(pod(status), NOW)
    assert cells[:5] == ["p", ready, shown, restarts, "5m"]


def test_a_deleted_running_pod_is_terminating() -> None:
    obj = pod({"phase": "Running", "containerStatuses": [running()]})
    obj["metadata"]["deletionTimestamp"] = ago(seconds=1)
    assert PODS.cells(obj, NOW)[2] == "Terminating"


def test_init_containers_show_their_progress() -> None:
    init = [{"name": "setup", "image": "busybox"}, {"name": "migrate", "image": "busybox"}]
    status = {
        "phase": "Pending",
        "initContainerStatuses": [
            {"name": "setup", "state": {"terminated": {"exitCode": 0}}},
            {"name": "migrate", "state": {"running": {}}},
        ],
    }
    assert PODS.cells(pod(status, initContainers=init), NOW)[2] == "Init:1/2"
    status["initContainerStatuses"][1]["state"] = {"terminated": {"exitCode": 1}}
    assert PODS.cells(pod(status, initContainers=init), NOW)[2] == "Init:ExitCode:1"
    status["initContainerStatuses"][1]["state"] = {"terminated": {"exitCode": 1, "reason": "Error"}}
    assert PODS.cells(pod(status, initContainers=init), NOW)[2] == "Init:Error"
    status["initContainerStatuses"][1]["state"] = {"waiting": {"reason": "ImagePullBackOff"}}
    assert PODS.cells(pod(status, initContainers=init), NOW)[2] == "Init:ImagePullBackOff"


def test_a_sidecar_counts_as_a_container() -> None:
    init = [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}]
    status = {
        "phase": "Running",
        "conditions": [{"type": "Initialized", "status": "True"}],
        "initContainerStatuses": [
            {"name": "proxy", "started": True, "ready": True, "state": {"running": {}}}
        ],
        "containerStatuses": [running()],
    }
    assert PODS.cells(pod(status, initContainers=init), NOW)[1:3] == ["2/2", "Running"]


def test_completed_with_a_container_still_running() -> None:
    containers = [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}]
    statuses = [
        running(name="a"),
        {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
    ]
    status: dict[str, Any] = {"phase": "Running", "containerStatuses": statuses}
    assert PODS.cells(pod(status, containers=containers), NOW)[1:3] == ["1/2", "NotReady"]
    status["conditions"] = [{"type": "Ready", "status": "True"}]
    assert PODS.cells(pod(status, containers=containers), NOW)[1:3] == ["1/2", "Running"]


def test_pod_wide_cells_and_row_conditions() -> None:
    obj = pod(
        {
            "phase": "Succeeded",
            "podIPs": [{"ip": "10.244.0.7"}],
            "nominatedNodeName": "n2",
            "conditions": [{"type": "gate/a", "status": "True"}],
        },
        nodeName="n1",
        readinessGates=[{"conditionType": "gate/a"}, {"conditionType": "gate/b"}],
    )
    assert PODS.cells(obj, NOW)[5:] == ["10.244.0.7", "n1", "n2", "1/2"]
    assert PODS.conditions(obj) == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]
    assert [c.name for c in PODS.columns if c.priority] == [
        "IP",
        "Node",
        "Nominated Node",
        "Readiness Gates",
    ]


def workload(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "creationTimestamp": ago(hours=3, minutes=20)},
        "spec": {
            "replicas": 3,
            "selector": {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
            },
            "template": {
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.25"},
                        {"name": "log", "image": "busybox"},
                    ]
                }
            },
            **spec,
        },
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2, "replicas": 3},
    }


def test_deployment_cells() -> None:
    assert DEPLOYMENTS.cells(workload(), NOW) == [
        "web",
        "2/3",
        3,
        2,
        "3h20m",
        "nginx,log",
        "nginx:1.25,busybox",
        "app=web,tier in (a,b)",
    ]
    assert [c.name for c in DEPLOYMENTS.columns] == [
        "Name",
        "Ready",
        "Up-to-date",
        "Available",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]


def test_replica_set_and_daemon_set_cells() -> None:
    assert REPLICA_SETS.cells(workload(), NOW)[:5] == ["web", 3, 3, 2, "3h20m"]
    daemon = workload(template={"spec": {"nodeSelector": {"disk": "ssd"}, "containers": []}})
    daemon["status"] = {"desiredNumberScheduled": 2, "numberReady": 1}
    assert DAEMON_SETS.cells(daemon, NOW) == [
        "web", 2, 0, 1, 0, 0, "disk=ssd", "3h20m", "", "", "app=web,tier in (a,b)",
    ]  # fmt: skip


def test_service_cells() -> None:
    service = {
        "metadata": {"name": "web", "creationTimestamp": ago(days=3)},
        "spec": {
            "type": "NodePort",
            "clusterIPs": ["10.96.0.12"],
            "ports": [
                {"port": 80, "protocol": "TCP", "nodePort": 30080},
                {"port": 53, "protocol": "UDP"},
            ],
            "selector": {"b": "2", "a": "1"},
        },
    }
    assert SERVICES.cells(service, NOW) == [
        "web", "NodePort", "10.96.0.12", "<none>", "80:30080/TCP,53/UDP", "3d", "a=1,b=2",
    ]  # fmt: skip
    service["spec"] = {"type": "LoadBalancer", "clusterIPs": ["10.96.0.13"]}
    assert SERVICES.cells(service, NOW)[2:5] == ["10.96.0.13", "<pending>", "<none>"]
    service["spec"] = {"type": "ExternalName", "externalName": "db.example.com"}
    assert SERVICES.cells(service, NOW)[2:5] == ["<none>", "db.example.com", "<none>"]


def test_config_map_secret_namespace_cells() -> None:
    meta = {"name": "x", "creationTimestamp": ago(seconds=42)}
    config_map = {"metadata": meta, "data": {"a": "1"}, "binaryData": {"b": ""}}
    assert CONFIG_MAPS.cells(config_map, NOW) == ["x", 2, "42s"]
    secret = {"metadata": meta, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}}
    assert SECRETS.cells(secret, NOW) == ["x", "kubernetes.io/tls", 2, "42s"]
    namespace = {"metadata": meta, "status": {"phase": "Terminating"}}
    assert NAMESPACES.cells(namespace, NOW) == ["x", "Terminating", "42s"]


def test_node_cells() -> None:
    node = {
        "metadata": {
            "name": "n1",
            "creationTimestamp": ago(days=9),
            "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}],
            "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
            "nodeInfo": {"kubeletVersion": "v1.32.0"},
        },
    }
    assert NODES.cells(node, NOW) == [
        "n1", "NotReady,SchedulingDisabled", "control-plane,edge", "9d", "v1.32.0",
        "172.18.0.2", "<none>", "<unknown>", "<unknown>", "<unknown>",
    ]  # fmt: skip


def test_event_cells() -> None:
    event = {
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Deployment", "name": "web", "fieldPath": ""},
        "type": "Normal",
        "reason": "ScalingReplicaSet",
        "message": "Scaled up replica set web-1 to 3 ",
        "source": {"component": "deployment-controller"},
        "firstTimestamp": ago(minutes=7),
        "lastTimestamp": ago(minutes=2),
        "count": 2,
    }
    assert EVENTS.cells(event, NOW) == [
        "2m", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller",
        "Scaled up replica set web-1 to 3", "7m", 2, "web.1",
    ]  # fmt: skip


def test_job_and_cron_job_cells() -> None:
    job = {
        "metadata": {"name": "pi", "creationTimestamp": ago(minutes=9)},
        "spec": {"completions": 3, "template": {"spec": {"containers": []}}},
        "status": {
            "succeeded": 3,
            "startTime": ago(minutes=9),
            "completionTime": ago(minutes=8, seconds=15),
            "conditions": [{"type": "Complete", "status": "True"}],
        },
    }
    assert JOBS.cells(job, NOW)[:5] == ["pi", "Complete", "3/3", "45s", "9m"]
    job["spec"] = {"parallelism": 2}
    job["status"] = {"succeeded": 1}
    assert JOBS.cells(job, NOW)[1:4] == ["Running", "1/1 of 2", ""]
    cron = {
        "metadata": {"name": "nightly", "creationTimestamp": ago(days=1)},
        "spec": {"schedule": "0 3 * * *", "suspend": False, "jobTemplate": {"spec": {}}},
        "status": {"active": [{"name": "a"}], "lastScheduleTime": ago(hours=9)},
    }
    assert CRON_JOBS.cells(cron, NOW)[:7] == [
        "nightly", "0 3 * * *", "<none>", "False", 1, "9h", "24h",
    ]  # fmt: skip


def test_role_binding_cells() -> None:
    binding = {
        "metadata": {"name": "readers", "creationTimestamp": ago(seconds=5)},
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "alice"},
            {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "bot", "namespace": "ops"},
            {"kind": "User", "name": "bob"},
        ],
    }
    assert RBAC_PRINTERS["rolebindings"].cells(binding, NOW) == [
        "readers", "ClusterRole/view", "5s", "alice, bob", "devs", "ops/bot",
    ]  # fmt: skip


def test_every_built_in_column_has_upstream_documentation() -> None:
    from setpoint.cluster.apiserver.printers.table import _PRINTERS, DEFAULT_PRINTER

    printers = [*_PRINTERS.values(), DEFAULT_PRINTER]
    undocumented = [
        column.name
        for printer in printers
        for column in printer.columns
        if column.doc and not column.definition()["description"]
    ]
    assert undocumented == []
    ip = next(c for c in PODS.columns if c.name == "IP").definition()
    assert ip["description"] == (
        "podIP address allocated to the pod. Routable at least within the cluster. Empty if not "
        "yet allocated."
    )


def test_resource_quota_cells() -> None:
    quota = {
        "metadata": {"name": "compute", "creationTimestamp": ago(seconds=42)},
        "status": {
            "hard": {
                "pods": "4",
                "requests.cpu": "2",
                "limits.memory": "4096Mi",
                "limits.cpu": "4",
            },
            "used": {"pods": "1", "requests.cpu": "500m", "limits.memory": "1Gi"},
        },
    }
    assert RESOURCE_QUOTAS.cells(quota, NOW) == [
        "compute",
        "42s",
        "pods: 1/4, requests.cpu: 500m/2",
        "limits.cpu: 0/4, limits.memory: 1Gi/4Gi",
    ]
    assert [c.name for c in RESOURCE_QUOTAS.columns] == ["Name", "Age", "Request", "Limit"]


def test_endpoint_slice_cells() -> None:
    meta = {"name": "web-abc", "creationTimestamp": ago(seconds=5)}
    addresses = [{"addresses": [f"10.0.0.{i}"]} for i in range(1, 6)]
    ports = [{"port": 80}, {"name": "metrics"}, {}, {"port": 443}]
    full = {"metadata": meta, "addressType": "IPv4", "ports": ports, "endpoints": addresses}
    assert ENDPOINT_SLICES.cells(full, NOW) == [
        "web-abc", "IPv4", "80,metrics,* + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...",
        "5s",
    ]  # fmt: skip
    empty = {"metadata": meta, "addressType": "IPv4", "ports": [], "endpoints": []}
    assert ENDPOINT_SLICES.cells(empty, NOW) == ["web-abc", "IPv4", "<unset>", "<unset>", "5s"]


def test_validating_admission_policy_cells() -> None:
    meta = {"name": "p", "creationTimestamp": ago(seconds=5)}
    policy = {"metadata": meta, "spec": {"validations": [{"expression": "true"}] * 2}}
    assert VALIDATING_ADMISSION_POLICIES.cells(policy, NOW) == ["p", 2, "<unset>", "5s"]
    policy["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    assert VALIDATING_ADMISSION_POLICIES.cells(policy, NOW)[2] == "v1/ConfigMap"
    binding: dict[str, Any] = {"metadata": meta, "spec": {"policyName": "p"}}
    assert VALIDATING_ADMISSION_POLICY_BINDINGS.cells(binding, NOW) == ["p", "p", "<unset>", "5s"]
    binding["spec"]["paramRef"] = {"name": "limits", "namespace": "ops"}
    assert VALIDATING_ADMISSION_POLICY_BINDINGS.cells(binding, NOW)[2] == "ops/limits"
    binding["spec"]["paramRef"] = {"name": "limits"}
    assert VALIDATING_ADMISSION_POLICY_BINDINGS.cells(binding, NOW)[2] == "*/limits"
    binding["spec"]["paramRef"] = {"selector": {"matchLabels": {"b": "2", "a": "1"}}}
    assert VALIDATING_ADMISSION_POLICY_BINDINGS.cells(binding, NOW)[2] == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},"
        "MatchExpressions:[]LabelSelectorRequirement{},}"
    )


def test_csi_storage_capacity_cells_have_no_age() -> None:
    from setpoint.cluster.apiserver.printers.infrastructure import CSI_STORAGE_CAPACITIES

    meta = {"name": "c", "creationTimestamp": ago(seconds=5)}
    capacity = {"metadata": meta, "storageClassName": "fast", "capacity": "1024Mi"}
    assert CSI_STORAGE_CAPACITIES.cells(capacity, NOW) == ["c", "fast", "1Gi"]
    assert CSI_STORAGE_CAPACITIES.cells({"metadata": meta, "storageClassName": "fast"}, NOW) == [
        "c", "fast", "<unset>",
    ]  # fmt: skip
    assert [c.name for c in CSI_STORAGE_CAPACITIES.columns] == [
        "Name", "StorageClassName", "Capacity",
    ]  # fmt: skip


def test_resource_metrics_cells_as_metrics_server_prints_them() -> None:
    from setpoint.cluster.apiserver.printers.resource_metrics import NODE_METRICS, POD_METRICS

    node = {
        "metadata": {"name": "n1"},
        "window": "10.044s",
        "usage": {"cpu": "250000000n", "memory": "65536Ki"},
    }
    assert NODE_METRICS.cells(node, NOW) == ["n1", "250m", "64Mi", "10.044s"]
    pod = {
        "metadata": {"name": "p1", "namespace": "default"},
        "window": "15s",
        "containers": [
            {"name": "a", "usage": {"cpu": "1500000n", "memory": "1024Ki"}},
            {"name": "b", "usage": {"cpu": "500000n", "memory": "1024Ki"}},
        ],
    }
    assert POD_METRICS.cells(pod, NOW) == ["p1", "2m", "2Mi", "15s"]
    definitions = [c.definition() for c in NODE_METRICS.columns]
    assert [(d["name"], d["format"]) for d in definitions] == [
        ("Name", "name"), ("cpu", "quantity"), ("memory", "quantity"), ("Window", "duration"),
    ]  # fmt: skip
