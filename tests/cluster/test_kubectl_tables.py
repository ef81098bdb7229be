"""``kubectl get`` / ``describe`` (and an invalid create) against the local cluster with kubectl
1.32, 1.27 and 1.33.

The columns and cells are upstream's printers' (``pkg/printers/internalversion/printers.go``);
kubectl only lays them out, so rows are compared as whitespace-separated words.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.kubectl_runner import Kubectl

pytestmark = pytest.mark.slow

SDK_BIN = "/usr/lib/google-cloud-sdk/bin"
AGE = re.compile(r"^\d+s$")


@pytest.fixture(
    params=["kubectl", f"{SDK_BIN}/kubectl.1.27", f"{SDK_BIN}/kubectl.1.33"],
    ids=["1.32", "1.27", "1.33"],
)
def kubectl(
    request: pytest.FixtureRequest, local_cluster: BackgroundCluster, tmp_path: Path
) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache", binary=request.param)


def create(kubectl: Kubectl, obj: dict[str, Any]) -> None:
    kubectl.run("create", "--validate=false", "-f", "-", stdin=json.dumps(obj))


def deployment(namespace: str, name: str = "web", replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]},
            },
        },
    }


def lines(output: str) -> list[list[str]]:
    return [line.split() for line in output.strip().splitlines()]


def without_ages(rows: list[list[str]], column: int) -> list[list[str]]:
    for row in rows[1:]:
        assert AGE.match(row[column]), row
        row[column] = "AGE"
    return rows


def test_get_deployments_plain_wide_and_name(kubectl: Kubectl, namespace: str) -> None:
    create(kubectl, deployment(namespace))
    plain = lines(kubectl.run("get", "deployments", "-n", namespace).stdout)
    assert without_ages(plain, 4) == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        ["web", "0/2", "0", "0", "AGE"],
    ]
    wide = lines(kubectl.run("get", "deployment", "web", "-n", namespace, "-o", "wide").stdout)
    assert without_ages(wide, 4) == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
        ["web", "0/2", "0", "0", "AGE", "nginx", "nginx:1.25", "app=web"],
    ]
    named = kubectl.run("get", "deployments", "-n", namespace, "-o", "name").stdout
    assert named.split() == ["deployment.apps/web"]
    path = kubectl.run(
        "get",
        "deploy",
        "web",
        "-n",
        namespace,
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ).stdout
    assert path == "nginx:1.25"
    custom = kubectl.run(
        "get", "deploy", "-n", namespace, "-o", "custom-columns=N:.metadata.name,R:.spec.replicas"
    ).stdout
    assert lines(custom) == [["N", "R"], ["web", "2"]]


def test_get_pods_status_and_wide(kubectl: Kubectl, namespace: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "namespace": namespace},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]},
    }
    create(kubectl, pod)
    pending = lines(kubectl.run("get", "pods", "-n", namespace, "-o", "wide").stdout)
    assert without_ages(pending, 4) == [
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED",
            "NODE",
            "READINESS",
            "GATES",
        ],
        ["p1", "0/1", "Pending", "0", "AGE", "<none>", "<none>", "<none>", "<none>"],
    ]
    status = {
        "status": {
            "phase": "Running",
            "podIP": "10.244.0.9",
            "podIPs": [{"ip": "10.244.0.9"}],
            "containerStatuses": [
                {
                    "name": "app",
                    "image": "busybox",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 3,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1}},
                }
            ],
        }
    }
    kubectl.run(
        "patch", "pod", "p1", "-n", namespace, "--subresource=status", "--type=merge",
        "-p", json.dumps(status),
    )  # fmt: skip
    crashing = lines(kubectl.run("get", "pod", "p1", "-n", namespace, "-o", "wide").stdout)
    assert crashing[1][:4] == ["p1", "0/1", "CrashLoopBackOff", "3"]
    assert crashing[1][5] == "10.244.0.9"


def test_get_config_maps_secrets_services_namespaces(kubectl: Kubectl, namespace: str) -> None:
    for name in ("zeta", "alpha"):
        create(
            kubectl,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace, "labels": {"tier": name}},
                "data": {"a": "1", "b": "2"},
            },
        )
    create(
        kubectl,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "creds", "namespace": namespace},
            "type": "Opaque",
            "data": {"user": "YQ=="},
        },
    )
    create(
        kubectl,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP"}]},
        },
    )
    maps = lines(
        kubectl.run(
            "get", "cm", "-n", namespace, "--show-labels", "-L", "tier", "--sort-by=.metadata.name"
        ).stdout
    )
    assert without_ages(maps, 2) == [
        ["NAME", "DATA", "AGE", "TIER", "LABELS"],
        ["alpha", "2", "AGE", "alpha", "tier=alpha"],
        ["zeta", "2", "AGE", "zeta", "tier=zeta"],
    ]
    secrets = lines(kubectl.run("get", "secrets", "-n", namespace).stdout)
    assert without_ages(secrets, 3) == [
        ["NAME", "TYPE", "DATA", "AGE"],
        ["creds", "Opaque", "1", "AGE"],
    ]
    services = lines(kubectl.run("get", "svc", "-n", namespace, "-o", "wide").stdout)
    assert services[0] == [
        "NAME",
        "TYPE",
        "CLUSTER-IP",
        "EXTERNAL-IP",
        "PORT(S)",
        "AGE",
        "SELECTOR",
    ]
    assert services[1][:2] == ["web", "ClusterIP"]
    assert re.match(r"^10\.\d+\.\d+\.\d+$", services[1][2])
    assert services[1][3:5] == ["<none>", "80/TCP"] and services[1][6] == "app=web"
    namespaces = lines(kubectl.run("get", "namespace", namespace).stdout)
    assert without_ages(namespaces, 2) == [["NAME", "STATUS", "AGE"], [namespace, "Active", "AGE"]]
    every = lines(kubectl.run("get", "configmaps", "-A", "--sort-by=.metadata.name").stdout)
    assert every[0] == ["NAMESPACE", "NAME", "DATA", "AGE"]
    assert [namespace, "alpha", "2"] in [row[:3] for row in every]


def test_get_watch_prints_rows_as_they_change(kubectl: Kubectl, namespace: str) -> None:
    create(kubectl, deployment(namespace, "first", replicas=1))
    watch = kubectl.popen("get", "deployments", "-n", namespace, "-w", "--request-timeout=3s")
    time.sleep(0.7)  # the initial list is printed, then the watch starts
    create(kubectl, deployment(namespace, "second", replicas=3))
    out, _ = watch.communicate(timeout=30)
    rows = lines(out)
    assert rows[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert [row[:2] for row in rows[1:]] == [["first", "0/1"], ["second", "0/3"]]


def test_custom_resource_printer_columns_and_describe(kubectl: Kubectl, namespace: str) -> None:
    crd = widget_crd()
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    group = crd["spec"]["group"]
    create(kubectl, crd)
    time.sleep(0.2)
    for name, size in (("w1", 2), ("w2", 7)):
        body = widget(name, group, size=size)
        body["metadata"]["namespace"] = namespace
        create(kubectl, body)
    plain = lines(kubectl.run("get", f"widgets.{group}", "-n", namespace).stdout)
    assert without_ages(plain, 2) == [
        ["NAME", "SIZE", "AGE"],
        ["w1", "2", "AGE"],
        ["w2", "7", "AGE"],
    ]
    wide = lines(kubectl.run("get", f"widgets.{group}", "-n", namespace, "-o", "wide").stdout)
    assert without_ages(wide, 3) == [
        ["NAME", "SIZE", "COLOR", "AGE"],
        ["w1", "2", "blue", "AGE"],
        ["w2", "7", "blue", "AGE"],
    ]
    described = kubectl.run("describe", f"widgets.{group}", "w1", "-n", namespace).stdout
    assert re.search(r"^Name:\s+w1$", described, re.M)
    assert re.search(r"^Kind:\s+Widget$", described, re.M)
    assert re.search(r"^\s+Size:\s+2$", described, re.M)
    kubectl.run("delete", "crd", f"widgets.{group}")


def test_describe_deployment_and_pod(kubectl: Kubectl, namespace: str) -> None:
    create(kubectl, deployment(namespace))
    described = kubectl.run("describe", "deployment", "web", "-n", namespace).stdout
    assert re.search(r"^Selector:\s+app=web$", described, re.M)
    assert re.search(
        r"^Replicas:\s+2 desired \| 0 updated \| 0 total \| 0 available \| 0 unavailable$",
        described,
        re.M,
    )
    create(
        kubectl,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": namespace, "labels": {"app": "p"}},
            "spec": {"containers": [{"name": "app", "image": "busybox"}]},
        },
    )
    pod = kubectl.run("describe", "pod", "p", "-n", namespace).stdout
    assert re.search(r"^Status:\s+Pending$", pod, re.M)
    assert re.search(r"^\s+Image:\s+busybox$", pod, re.M)
    assert re.search(r"^Labels:\s+app=p$", pod, re.M)


def test_kubectl_reports_invalid_objects_as_kube_apiserver_does(
    kubectl: Kubectl, namespace: str
) -> None:
    bad = deployment(namespace, "bad")
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    created = kubectl.run(
        "create", "--validate=false", "-f", "-", stdin=json.dumps(bad), check=False
    )
    assert created.returncode == 1
    assert created.stderr.strip() == (
        'The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"other"}: `selector` does not match template `labels`'
    )
