"""The built-in resources without a controller of their own, in everyday kubectl use: created
from manifests under kubectl's strict validation, listed with upstream's columns, defaulted as
kube-apiserver defaults them; plus ``componentstatuses`` and ``bindings``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.crd_manifests import widget_crd
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def _apply(kubectl: Kubectl, tmp_path: Path, *documents: dict[str, Any]) -> str:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(documents)}))
    return kubectl.run("apply", "-f", str(path)).stdout


def _header(listing: str) -> list[str]:
    return listing.splitlines()[0].split()


def test_namespaced_kinds_with_kubectl(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    meta = {"namespace": namespace}
    applied = _apply(
        kubectl,
        tmp_path,
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "deny-all", **meta},
            "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]},
        },
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "limits", **meta},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]},
        },
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": "tpl", **meta},
            "template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}},
        },
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", **meta},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 4,
            },
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": {"name": "capacity", **meta},
            "storageClassName": "standard",
            "capacity": "10Gi",
        },
    )
    assert "networkpolicy.networking.k8s.io/deny-all created" in applied
    assert "horizontalpodautoscaler.autoscaling/web created" in applied

    policy = kubectl.json("get", "netpol", "deny-all", "-n", namespace)
    # Defaulted as SetDefaults_NetworkPolicy: egress rules add Egress; ports get TCP.
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["egress"][0]["ports"][0]["protocol"] == "TCP"
    assert _header(kubectl.run("get", "netpol", "-n", namespace).stdout) == [
        "NAME",
        "POD-SELECTOR",
        "AGE",
    ]

    hpa = kubectl.json("get", "hpa", "web", "-n", namespace)
    assert hpa["spec"]["minReplicas"] == 1
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
    row = kubectl.run("get", "hpa", "web", "-n", namespace).stdout.splitlines()[1].split()
    assert row[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/80%", "1", "4", "0"]

    assert kubectl.run("get", "podtemplates", "-n", namespace).stdout.splitlines() == [
        "NAME   CONTAINERS   IMAGES         POD LABELS",
        "tpl    c            busybox:1.36   <none>",
    ]
    template = kubectl.json("get", "podtemplates", "tpl", "-n", namespace)
    assert template["template"]["spec"]["restartPolicy"] == "Always"
    assert kubectl.run("get", "limits", "-n", namespace, "-o", "name").stdout.split() == [
        "limitrange/limits"
    ]
    capacity = kubectl.json("get", "csistoragecapacities", "capacity", "-n", namespace)
    assert capacity["capacity"] == "10Gi"

    # Unknown fields are refused under kubectl's default strict validation.
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": "bad", **meta},
                "spec": {"podSelector": {}, "bogus": 1},
            }
        )
    )
    refused = kubectl.run("create", "-f", str(bad), check=False)
    assert refused.returncode != 0
    assert 'unknown field "spec.bogus"' in refused.stderr


def test_cluster_scoped_kinds_with_kubectl(kubectl: Kubectl, tmp_path: Path) -> None:
    applied = _apply(
        kubectl,
        tmp_path,
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IngressClass",
            "metadata": {"name": "test-nginx"},
            "spec": {"controller": "k8s.io/ingress-nginx"},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "test.csi.example.com"},
            "spec": {},
        },
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "test-gv"},
            "handler": "runsc",
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "test-node"},
            "spec": {"drivers": []},
        },
    )
    assert "csidriver.storage.k8s.io/test.csi.example.com created" in applied
    driver = kubectl.json("get", "csidrivers", "test.csi.example.com")
    assert driver["spec"]["attachRequired"] is True
    assert driver["spec"]["volumeLifecycleModes"] == ["Persistent"]
    assert kubectl.json("get", "runtimeclass", "test-gv")["handler"] == "runsc"
    row = kubectl.run("get", "ingressclass", "test-nginx").stdout.splitlines()[1].split()
    assert row[:2] == ["test-nginx", "k8s.io/ingress-nginx"]
    drivers = kubectl.run("get", "csidriver", "test.csi.example.com").stdout.splitlines()
    assert drivers[0].split() == [
        "NAME",
        "ATTACHREQUIRED",
        "PODINFOONMOUNT",
        "STORAGECAPACITY",
        "TOKENREQUESTS",
        "REQUIRESREPUBLISH",
        "MODES",
        "AGE",
    ]
    assert drivers[1].split()[:7] == [
        "test.csi.example.com",
        "true",
        "false",
        "false",
        "<unset>",
        "false",
        "Persistent",
    ]
    runtime = kubectl.run("get", "runtimeclass", "test-gv").stdout.splitlines()
    assert runtime[1].split()[:2] == ["test-gv", "runsc"]
    assert kubectl.run("get", "csinode", "test-node").stdout.splitlines()[1].split()[:2] == [
        "test-node",
        "0",
    ]
    for kind, name in (
        ("ingressclass", "test-nginx"),
        ("csidriver", "test.csi.example.com"),
        ("runtimeclass", "test-gv"),
        ("csinode", "test-node"),
    ):
        kubectl.run("delete", kind, name)


def test_component_statuses(kubectl: Kubectl) -> None:
    listed = kubectl.run("get", "componentstatuses")
    assert "Warning: v1 ComponentStatus is deprecated in v1.19+" in listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    assert sorted(line.split()[0] for line in lines[1:]) == [
        "controller-manager",
        "etcd-0",
        "scheduler",
    ]
    assert all(line.split()[1] == "Healthy" for line in lines[1:])
    missing = kubectl.run("get", "cs", "nope", check=False)
    assert 'componentstatuses "nope" not found' in missing.stderr
    refused = kubectl.run("delete", "cs", "etcd-0", check=False)
    assert refused.returncode != 0


async def test_binding_posted_to_the_collection(api_only: RawAPI, api_only_namespace: str) -> None:
    ns = api_only_namespace
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    assert (await api_only.request("POST", f"/api/v1/namespaces/{ns}/pods", pod)).status == 201
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"},
    }
    bound = await api_only.request("POST", f"/api/v1/namespaces/{ns}/bindings", binding)
    assert bound.status == 201, bound.body
    assert bound.body["status"] == "Success"
    stored = await api_only.request("GET", f"/api/v1/namespaces/{ns}/pods/p")
    assert stored.body["spec"]["nodeName"] == "node-a"
    again = await api_only.request("POST", f"/api/v1/namespaces/{ns}/bindings", binding)
    assert again.status == 409
    assert (
        again.body["message"] == 'Operation cannot be fulfilled on pods/binding "p": '
        'pod p is already assigned to node "node-a"'
    )
    listed = await api_only.request("GET", f"/api/v1/namespaces/{ns}/bindings")
    assert listed.status == 405


def test_api_services_list_the_served_groups_as_local(kubectl: Kubectl, tmp_path: Path) -> None:
    rows = {
        line.split()[0]: line.split()[1:3]
        for line in kubectl.run("get", "apiservices").stdout.splitlines()[1:]
    }
    for name in ("v1.", "v1.apps", "v2.autoscaling", "v1.certificates.k8s.io", "v1.storage.k8s.io"):
        assert rows[name] == ["Local", "True"], name
    core = kubectl.json("get", "apiservice", "v1.apps")
    assert core["spec"]["groupPriorityMinimum"] == 17800
    assert core["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"] == "onstart"
    available = core["status"]["conditions"][0]
    assert (available["type"], available["status"], available["reason"]) == (
        "Available",
        "True",
        "Local",
    )

    # A CRD's group gets its APIService while it is served, and loses it after.
    crd = widget_crd()
    group = crd["spec"]["group"]
    path = tmp_path / "crd.json"
    path.write_text(json.dumps(crd))
    kubectl.run("create", "-f", str(path))
    try:
        kubectl.run(
            "wait", "--for=condition=Established", f"crd/{crd['metadata']['name']}", "--timeout=20s"
        )
        name = f"v1.{group}"
        added = eventually_sync(
            lambda: kubectl.run("get", "apiservice", name, check=False).returncode == 0,
            "the CRD group's APIService",
        )
        assert added
        assert kubectl.json("get", "apiservice", name)["metadata"]["labels"] == {
            "kube-aggregator.kubernetes.io/automanaged": "true"
        }
    finally:
        kubectl.run("delete", "crd", crd["metadata"]["name"])
    eventually_sync(
        lambda: kubectl.run("get", "apiservice", f"v1.{group}", check=False).returncode != 0,
        "the CRD group's APIService gone",
    )


def test_system_priority_classes(kubectl: Kubectl, tmp_path: Path) -> None:
    rows = {
        line.split()[0]: line.split()[1:3]
        for line in kubectl.run("get", "priorityclasses").stdout.splitlines()[1:]
    }
    assert rows["system-node-critical"] == ["2000001000", "false"]
    assert rows["system-cluster-critical"] == ["2000000000", "false"]
    reserved = kubectl.run(
        "create", "priorityclass", "system-mine", "--value=5", check=False
    ).stderr
    assert (
        'PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: '
        "priority class names with 'system-' prefix are reserved for system use only. "
        "error: system-mine is not a known system priority class"
    ) in reserved
    too_high = kubectl.run(
        "create", "priorityclass", "too-high", "--value=1000000001", check=False
    ).stderr
    assert (
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
    ) in too_high


async def test_kubectl_autoscale_writes_v1_read_as_v2(
    kubectl: Kubectl, namespace: str, api: RawAPI
) -> None:
    kubectl.run("create", "deployment", "web", "--image=nginx", "-n", namespace)
    done = kubectl.run(
        "autoscale", "deployment", "web", "--max=5", "--cpu-percent=70", "-n", namespace
    )
    assert done.stdout.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    row = kubectl.run("get", "hpa", "web", "-n", namespace).stdout.splitlines()[1].split()
    assert row[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/70%", "1", "5", "0"]
    path = f"/namespaces/{namespace}/horizontalpodautoscalers/web"
    v2 = (await api.request("GET", f"/apis/autoscaling/v2{path}")).body
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 70},
            },
        }
    ]
    # A metric v1 cannot express travels in the v1 view's annotation and back.
    memory = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}},
    }
    v2["spec"]["metrics"].append(memory)
    assert (await api.request("PUT", f"/apis/autoscaling/v2{path}", v2)).status == 200
    v1 = (await api.request("GET", f"/apis/autoscaling/v1{path}")).body
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 70
    annotation = v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
    assert json.loads(annotation) == [memory]
    v1["spec"]["maxReplicas"] = 7
    assert (await api.request("PUT", f"/apis/autoscaling/v1{path}", v1)).status == 200
    again = (await api.request("GET", f"/apis/autoscaling/v2{path}")).body
    assert again["spec"]["maxReplicas"] == 7
    assert again["spec"]["metrics"][1] == memory
    assert "annotations" not in again["metadata"]


def test_flow_control_mandatory_objects(kubectl: Kubectl) -> None:
    schemas = {
        line.split()[0]: line.split()[1:4]
        for line in kubectl.run("get", "flowschemas").stdout.splitlines()[1:]
    }
    assert schemas["exempt"] == ["exempt", "1", "<none>"]
    assert schemas["catch-all"] == ["catch-all", "10000", "ByUser"]
    levels = {
        line.split()[0]: line.split()[1:6]
        for line in kubectl.run("get", "prioritylevelconfigurations").stdout.splitlines()[1:]
    }
    assert levels["exempt"] == ["Exempt", "<none>", "<none>", "<none>", "<none>"]
    assert levels["catch-all"] == ["Limited", "5", "<none>", "<none>", "<none>"]
    exempt = kubectl.json("get", "flowschema", "exempt")
    assert exempt["metadata"]["annotations"] == {"apf.kubernetes.io/autoupdate-spec": "true"}
    assert exempt["spec"]["rules"][0]["subjects"] == [
        {"kind": "Group", "group": {"name": "system:masters"}}
    ]
