"""The Node and Lease objects a kubelet registers and renews."""

from __future__ import annotations

from typing import Any, Final

KUBELET_VERSION: Final = "v1.32.0"
NODE_LEASE_NAMESPACE: Final = "kube-node-lease"
LEASE_DURATION_SECONDS: Final = 40
#: Generous defaults: a local cluster runs thousands of simulated pods on one node.
NODE_CAPACITY: Final = {
    "cpu": "32",
    "memory": "131072Mi",
    "ephemeral-storage": "102400Mi",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    "pods": "10000",
}


def node_address(index: int) -> str:
    """The InternalIP of node ``index`` (as kind's nodes on the docker network)."""
    return f"172.18.{index // 250}.{index % 250 + 2}"


def node_object(name: str) -> dict[str, Any]:
    """A Node as the kubelet registers it (status is written separately)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {},
    }


def node_status(index: int, name: str, now: str) -> dict[str, Any]:
    """The status of a healthy node."""

    def condition(type_: str, status: str, reason: str, message: str) -> dict[str, str]:
        return {
            "type": type_,
            "status": status,
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        }

    return {
        "capacity": dict(NODE_CAPACITY),
        "allocatable": dict(NODE_CAPACITY),
        "conditions": [
            condition(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            condition(
                "DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"
            ),
            condition(
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ],
        "addresses": [
            {"type": "InternalIP", "address": node_address(index)},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": f"{index:032x}",
            "systemUUID": f"00000000-0000-4000-8000-{index:012x}",
            "bootID": f"00000000-0000-4000-9000-{index:012x}",
            "kernelVersion": "6.1.0-setpoint",
            "osImage": "setpoint simulated node",
            "containerRuntimeVersion": "containerd://1.7.18",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }


def node_lease(name: str, node_uid: str, now_micro: str) -> dict[str, Any]:
    """The Lease a kubelet holds in ``kube-node-lease`` (owned by its Node)."""
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": NODE_LEASE_NAMESPACE,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node_uid}
            ],
        },
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": now_micro,
        },
    }
