"""``kubectl get`` / ``describe`` (and an invalid create) against the local cluster with kubectl
1.32, 1.27 and 1.33.

The columns and cells are upstream's printers' (``pkg/printers/internalversion/printers.go``);
kubectl only lays them out, so rows are compared as whitespace-separated words.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.kubectl_runner import Kubectl

pytestmark = pytest.mark.slow

SDK_BIN = "/usr/lib/google-cloud-sdk/bin"
AGE = re.compile(r"^\d+s$")
#: kubectl's own wait for the controllers: generous, and within the runner's 60 s.
WAIT = "--timeout=55s"
#: How long ``kubectl get -w`` may take to print its next row on the shared machine.
WATCH_ROW_TIMEOUT_SECONDS = 60.0
KUBELET_EVENTS = ("Pulled", "Created", "Started")


@pytest.fixture(
    params=["kubectl", f"{SDK_BIN}/kubectl.1.27", f"{SDK_BIN}/kubectl.1.33"],
    ids=["1.32", "1.27", "1.33"],
)
def kubectl(
    request: pytest.FixtureRequest, local_cluster: BackgroundCluster, tmp_path: Path
) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache", binary=request.param)


@pytest.fixture
def kubectl_api_only(api_only_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    """kubectl 1.32 on the cluster without controllers."""
    return Kubectl(api_only_cluster.kubeconfig_path, tmp_path / "kube-cache")


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


def rolled_out(kubectl: Kubectl, namespace: str, name: str = "web") -> None:
    """Wait, as a user would, until the deployment controller reports the rollout complete."""
    kubectl.run("rollout", "status", f"deployment/{name}", "-n", namespace, WAIT)


def test_get_deployments_plain_wide_and_name(kubectl: Kubectl, namespace: str) -> None:
    create(kubectl, deployment(namespace))
    rolled_out(kubectl, namespace)
    plain = lines(kubectl.run("get", "deployments", "-n", namespace).stdout)
    assert without_ages(plain, 4) == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        ["web", "2/2", "2", "2", "AGE"],
    ]
    wide = lines(kubectl.run("get", "deployment", "web", "-n", namespace, "-o", "wide").stdout)
    assert without_ages(wide, 4) == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
        ["web", "2/2", "2", "2", "AGE", "nginx", "nginx:1.25", "app=web"],
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
    sets = lines(kubectl.run("get", "replicasets", "-n", namespace).stdout)
    assert sets[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    ((name, *counts, _),) = sets[1:]
    assert re.fullmatch(r"web-[a-z0-9]+", name) and counts == ["2", "2", "2"]


POD_COLUMNS = [
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
]


def test_get_pods_status_and_wide(kubectl: Kubectl, namespace: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "namespace": namespace},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]},
    }
    create(kubectl, pod)
    kubectl.run("wait", "pod/p1", "-n", namespace, "--for=condition=Ready", WAIT)
    running = lines(kubectl.run("get", "pods", "-n", namespace, "-o", "wide").stdout)
    ip = kubectl.run("get", "pod", "p1", "-n", namespace, "-o", "jsonpath={.status.podIP}").stdout
    assert re.fullmatch(r"10\.244\.\d+\.\d+", ip)
    assert without_ages(running, 4) == [
        POD_COLUMNS,
        ["p1", "1/1", "Running", "0", "AGE", ip, "setpoint-node", "<none>", "<none>"],
    ]


def test_get_pods_prints_a_crash_loop_written_in_status(
    kubectl_api_only: Kubectl, api_only_namespace: str
) -> None:
    """The printer's STATUS column for a crash-looping container (a status written by hand, on
    a cluster with no scheduler or kubelet to rewrite it)."""
    kubectl, namespace = kubectl_api_only, api_only_namespace
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "namespace": namespace},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]},
    }
    create(kubectl, pod)
    pending = lines(kubectl.run("get", "pods", "-n", namespace, "-o", "wide").stdout)
    assert without_ages(pending, 4) == [
        POD_COLUMNS,
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
        ["kube-root-ca.crt", "1", "AGE", "<none>"],  # the root CA publisher's; no TIER cell
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
    rolled_out(kubectl, namespace, "first")
    watch = kubectl.popen("get", "deployments", "-n", namespace, "-w", "--request-timeout=120s")
    try:
        rows = RowReader(watch)
        assert rows.next() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
        # The list is printed: anything created from now on comes as a watch event.
        assert rows.next()[:4] == ["first", "1/1", "1", "1"]
        create(kubectl, deployment(namespace, "second", replicas=3))
        seen = [rows.next()[:2]]
        while seen[-1] != ["second", "3/3"]:
            seen.append(rows.next()[:2])
    finally:
        watch.kill()
        watch.communicate()
    # Created with no status, then its READY count rising as the kubelet readies its Pods.
    assert seen[0] == ["second", "0/3"]
    assert {name for name, _ in seen} == {"second"}
    ready = [int(count.split("/")[0]) for _, count in seen]
    assert ready == sorted(ready), seen


class RowReader:
    """The rows a running ``kubectl get -w`` prints, one at a time, each with a deadline."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._rows: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, args=(process,), daemon=True).start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self._rows.put(line)

    def next(self) -> list[str]:
        try:
            return self._rows.get(timeout=WATCH_ROW_TIMEOUT_SECONDS).split()
        except queue.Empty:
            raise AssertionError("kubectl get -w printed no further row") from None


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
    rolled_out(kubectl, namespace)
    described = kubectl.run("describe", "deployment", "web", "-n", namespace).stdout
    assert re.search(r"^Selector:\s+app=web$", described, re.M)
    assert re.search(
        r"^Replicas:\s+2 desired \| 2 updated \| 2 total \| 2 available \| 0 unavailable$",
        described,
        re.M,
    )
    assert re.search(r"^\s+Available\s+True\s+MinimumReplicasAvailable$", described, re.M)
    assert re.search(r"^\s+Progressing\s+True\s+NewReplicaSetAvailable$", described, re.M)
    new_set = re.search(
        r"^NewReplicaSet:\s+(web-[a-z0-9]+) \(2/2 replicas created\)$", described, re.M
    )
    assert new_set, described
    assert re.search(
        r"^\s+Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+"
        rf"Scaled up replica set {new_set[1]} from 0 to 2$",
        described,
        re.M,
    ), described
    create(
        kubectl,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": namespace, "labels": {"app": "p"}},
            "spec": {"containers": [{"name": "app", "image": "busybox"}]},
        },
    )
    kubectl.run("wait", "pod/p", "-n", namespace, "--for=condition=Ready", WAIT)
    pod = kubectl.run("describe", "pod", "p", "-n", namespace).stdout
    assert re.search(r"^Status:\s+Running$", pod, re.M)
    assert re.search(r"^Node:\s+setpoint-node/\d+\.\d+\.\d+\.\d+$", pod, re.M)
    assert re.search(r"^IP:\s+10\.244\.\d+\.\d+$", pod, re.M)
    assert re.search(r"^\s+Image:\s+busybox$", pod, re.M)
    assert re.search(r"^\s+State:\s+Running$", pod, re.M)
    assert re.search(r"^Labels:\s+app=p$", pod, re.M)
    assert re.search(
        rf"^\s+Normal\s+Scheduled\s+\S+\s+default-scheduler\s+"
        rf"Successfully assigned {namespace}/p to setpoint-node$",
        pod,
        re.M,
    ), pod

    # The kubelet's events (as kubectl lists them), written as it starts the container.
    def events() -> list[list[str]]:
        printed = kubectl.run(
            "get", "events", "-n", namespace, "--field-selector=involvedObject.name=p",
            "-o", "custom-columns=REASON:.reason,FROM:.reportingComponent", "--no-headers",
        ).stdout  # fmt: skip
        return [line.split() for line in printed.splitlines()]

    wanted = [["Scheduled", "default-scheduler"], *([r, "kubelet"] for r in KUBELET_EVENTS)]
    eventually_sync(lambda: all(event in events() for event in wanted), "the pod's events")


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
