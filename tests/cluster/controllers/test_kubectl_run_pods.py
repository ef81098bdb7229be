"""kubectl against a ``--run-pods`` cluster: exec (WebSocket v5), logs -f, --previous."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.stream import stream

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run_pods_cluster() -> Iterator[BackgroundCluster]:
    cluster = BackgroundCluster(run_pods=True).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def kubectl(run_pods_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(run_pods_cluster.kubeconfig_path, tmp_path / "kube-cache")


def test_exec_runs_in_the_pod_directory_with_its_env(kubectl: Kubectl) -> None:
    kubectl.run("run", "box", "--image=busybox", "--env=FOO=bar", "--command", "--", "sleep", "300")
    kubectl.run("wait", "pod/box", "--for=condition=Ready", "--timeout=30s")

    shown = kubectl.run("exec", "box", "--", "sh", "-c", "echo $FOO; pwd").stdout.splitlines()
    failed = kubectl.run("exec", "box", "--", "sh", "-c", "exit 3", check=False)
    echoed = kubectl.run("exec", "-i", "box", "--", "cat", stdin="from stdin\n").stdout

    assert shown[0] == "bar"
    assert "default_box_" in shown[1]
    assert failed.returncode == 3
    assert "command terminated with exit code 3" in failed.stderr
    assert echoed == "from stdin\n"
    kubectl.run("delete", "pod", "box", "--wait")


def test_logs_follow_until_the_container_exits(kubectl: Kubectl) -> None:
    kubectl.run(
        "run",
        "counter",
        "--image=busybox",
        "--restart=Never",
        "--command",
        "--",
        "sh",
        "-c",
        "for i in 1 2 3; do echo line $i; sleep 0.2; done",
    )
    kubectl.run("wait", "pod/counter", "--for=jsonpath={.status.phase}=Running", "--timeout=30s")

    followed = kubectl.run("logs", "-f", "counter").stdout

    assert followed.splitlines() == ["line 1", "line 2", "line 3"]
    kubectl.run("wait", "pod/counter", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=30s")
    assert kubectl.run("logs", "counter", "--tail=1").stdout == "line 3\n"


def test_wait_for_not_ready_sees_a_gracefully_deleted_pod(kubectl: Kubectl) -> None:
    # The kubelet reports the containers terminated and Ready=False before
    # it deletes the pod, so this wait returns instead of hanging.
    kubectl.run("run", "leaving", "--image=busybox", "--command", "--", "sleep", "300")
    kubectl.run("wait", "pod/leaving", "--for=condition=Ready", "--timeout=30s")
    waiter = kubectl.popen("wait", "pod/leaving", "--for=condition=Ready=false", "--timeout=30s")
    time.sleep(1.0)  # the wait has read the pod (Ready) and watches it

    kubectl.run("delete", "pod", "leaving", "--grace-period=10", "--wait=false")
    out, err = waiter.communicate(timeout=40)

    assert waiter.returncode == 0, err
    assert out.strip() == "pod/leaving condition met"


def test_exec_stdin_from_the_official_client_in_text_frames(
    kubectl: Kubectl, run_pods_cluster: BackgroundCluster
) -> None:
    kubectl.run("run", "shell", "--image=busybox", "--command", "--", "sleep", "300")
    kubectl.run("wait", "pod/shell", "--for=condition=Ready", "--timeout=30s")
    api = config.new_client_from_config(config_file=str(run_pods_cluster.kubeconfig_path))
    try:
        session = stream(
            client.CoreV1Api(api).connect_get_namespaced_pod_exec,
            "shell",
            "default",
            command=["/bin/sh"],
            stdin=True,
            stdout=True,
            stderr=True,
            tty=False,
            _preload_content=False,
        )
        session.write_stdin("echo hello\n")  # a str: sent as a WebSocket TEXT frame
        output = ""
        for _ in range(50):
            session.update(timeout=0.2)
            output += session.read_stdout()
            if "hello" in output:
                break
        session.write_stdin("exit\n")
        session.close()
    finally:
        api.close()

    assert output == "hello\n"
    kubectl.run("delete", "pod", "shell", "--wait")
