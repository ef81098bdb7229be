"""``kubectl attach`` and ``kubectl debug`` (ephemeral containers) against ``--run-pods`` pods,
with kubectl 1.33 (WebSocket) and 1.27 (SPDY): stdin and ``stdinOnce``, output, a container
without a process, and debug containers that run in their target's sandbox."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl

KUBECTL_DIR = Path("/usr/lib/google-cloud-sdk/bin")
WAIT_SECONDS = 30.0


def _pod(name: str, container: dict[str, Any], restart: str = "Never") -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"restartPolicy": restart, "containers": [container]},
        }
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[BackgroundCluster]:
    running = BackgroundCluster(in_memory=True, run_pods=True).start()
    try:
        kubectl = Kubectl(running.kubeconfig_path, Path(running.kubeconfig_path).parent / "c")
        sleep = ["--command", "--", "sleep", "3600"]
        kubectl.run("run", "target", "--image=busybox", "--restart=Never", *sleep)
        kubectl.run(
            "create",
            "-f",
            "-",
            stdin=_pod(
                "idle", {"name": "idle", "image": "busybox", "stdin": True}, restart="Always"
            ),
        )
        ticker = ["sh", "-c", "while true; do echo tick; sleep 0.2; done"]
        kubectl.run(
            "create",
            "-f",
            "-",
            stdin=_pod("ticker", {"name": "ticker", "image": "busybox", "command": ticker}),
        )
        kubectl.run(
            "wait",
            "pod/target",
            "pod/idle",
            "pod/ticker",
            "--for=condition=Ready",
            "--timeout=30s",
        )
        yield running
    finally:
        running.stop()


@pytest.fixture(params=["1.33", "1.27"])
def any_kubectl(
    request: pytest.FixtureRequest, cluster: BackgroundCluster, tmp_path: Path
) -> Kubectl:
    binary = KUBECTL_DIR / f"kubectl.{request.param}"
    if not binary.exists():
        pytest.skip(f"kubectl {request.param} is not installed")
    return Kubectl(cluster.kubeconfig_path, tmp_path / "cache", str(binary))


def _wait_for(kubectl: Kubectl, pod: str, predicate: Any) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        found: dict[str, Any] = kubectl.json("get", "pod", pod)
        if predicate(found):
            return found
        assert time.monotonic() < deadline, json.dumps(found.get("status"), indent=1)
        time.sleep(0.2)


def _ephemeral_state(pod: dict[str, Any], name: str) -> dict[str, Any]:
    for status in (pod.get("status") or {}).get("ephemeralContainerStatuses") or []:
        if status["name"] == name:
            return status["state"]  # type: ignore[no-any-return]
    return {}


def test_attach_feeds_stdin_once_and_ends_with_the_process(
    any_kubectl: Kubectl, request: pytest.FixtureRequest
) -> None:
    name = "reader-" + request.node.callspec.id.replace(".", "-")
    container = {
        "name": "reader",
        "image": "busybox",
        "stdin": True,
        "stdinOnce": True,
        "command": ["sh", "-c", "while read line; do echo got:$line; done; echo eof >&2"],
    }
    any_kubectl.run("create", "-f", "-", stdin=_pod(name, container))
    any_kubectl.run("wait", f"pod/{name}", "--for=condition=Ready", "--timeout=30s")
    attached = any_kubectl.run("attach", "-i", name, stdin="one\ntwo\n")
    assert attached.stdout == "got:one\ngot:two\n"
    assert "eof" in attached.stderr
    # stdinOnce: the end of the session's stdin was the end of the container's.
    done = _wait_for(
        any_kubectl, name, lambda p: (p.get("status") or {}).get("phase") == "Succeeded"
    )
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def test_attach_streams_the_output_of_a_running_process(any_kubectl: Kubectl) -> None:
    watcher = any_kubectl.popen("attach", "ticker")
    killer = threading.Timer(WAIT_SECONDS, watcher.kill)
    killer.start()
    try:
        assert watcher.stdout is not None
        assert watcher.stdout.readline() == "tick\n"
        assert watcher.stdout.readline() == "tick\n"
    finally:
        killer.cancel()
        watcher.kill()
        watcher.communicate()


def test_attach_to_a_container_without_a_process_is_refused(any_kubectl: Kubectl) -> None:
    result = any_kubectl.run("attach", "idle", check=False)
    assert result.returncode != 0
    assert "container idle not found in pod idle_default" in result.stderr


def test_debug_runs_in_the_target_sandbox(
    any_kubectl: Kubectl, request: pytest.FixtureRequest
) -> None:
    name = "dbg-" + request.node.callspec.id.replace(".", "-")
    any_kubectl.run(
        "debug",
        "target",
        "--image=busybox",
        "--target=target",
        "-c",
        name,
        "--",
        "sh",
        "-c",
        "echo hi; tr '\\0' ' ' < /proc/2/cmdline",
    )
    pod = _wait_for(any_kubectl, "target", lambda p: "terminated" in _ephemeral_state(p, name))
    terminated = _ephemeral_state(pod, name)["terminated"]
    assert terminated["exitCode"] == 0
    spec = next(c for c in pod["spec"]["ephemeralContainers"] if c["name"] == name)
    assert spec["targetContainerName"] == "target"
    logs = any_kubectl.run("logs", "target", "-c", name)
    # The target's command is the sandbox's PID 2 (after bubblewrap's init).
    assert logs.stdout.splitlines() == ["hi", "sleep 3600 "]


def test_debug_interactive_creates_and_attaches(
    any_kubectl: Kubectl, request: pytest.FixtureRequest
) -> None:
    name = "cat-" + request.node.callspec.id.replace(".", "-")
    # kubectl debug does not set stdinOnce: the container's stdin stays open after kubectl's
    # ends (as on a real cluster, `-- cat` would never end), so the command reads one line.
    result = any_kubectl.run(
        "debug",
        "-i",
        "target",
        "--image=busybox",
        "-c",
        name,
        "--",
        "sh",
        "-c",
        "read line; echo got:$line",
        stdin="hello\n",
    )
    assert result.stdout == "got:hello\n"
    pod = _wait_for(any_kubectl, "target", lambda p: "terminated" in _ephemeral_state(p, name))
    assert _ephemeral_state(pod, name)["terminated"]["exitCode"] == 0


def test_exec_into_a_debug_container_enters_the_targets_sandbox(
    any_kubectl: Kubectl, request: pytest.FixtureRequest
) -> None:
    name = "long-" + request.node.callspec.id.replace(".", "-")
    any_kubectl.run(
        "debug", "target", "--image=busybox", "--target=target", "-c", name, "--", "sleep", "600"
    )
    _wait_for(any_kubectl, "target", lambda p: "running" in _ephemeral_state(p, name))
    # The exec'd shell is in the target's PID namespace: its own PID is in that /proc.
    script = "tr '\\0' ' ' < /proc/2/cmdline; [ -e /proc/$$/cmdline ] && echo same namespace"
    seen = any_kubectl.run("exec", "target", "-c", name, "--", "sh", "-c", script)
    assert seen.stdout == "sleep 3600 same namespace\n"


async def test_an_exec_whose_client_goes_away_is_ended(cluster: BackgroundCluster) -> None:
    headers = {"Authorization": f"Bearer {cluster.token}"}
    url = cluster.url.replace("http", "ws", 1) + "/api/v1/namespaces/default/pods/target/exec"
    query = "?command=sleep&command=641&stdout=true&stderr=true"
    async with aiohttp.ClientSession() as session:
        socket = await session.ws_connect(
            url + query, headers=headers, protocols=("v5.channel.k8s.io",)
        )
        await asyncio.sleep(0.5)  # the command runs
        await socket.close()  # kubectl interrupted: the command is killed, as by the kubelet
    kubectl = Kubectl(cluster.kubeconfig_path, Path(cluster.kubeconfig_path).parent / "c")
    script = "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"
    for _ in range(50):
        seen = kubectl.run("exec", "target", "--", "sh", "-c", script).stdout
        if "sleep 641" not in seen:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the exec'd command still runs: {seen}")


def test_kubectl_run_interactive_attaches_then_removes_the_pod(
    any_kubectl: Kubectl, request: pytest.FixtureRequest
) -> None:
    # kubectl run -i makes a pod with stdin and stdinOnce, attaches, and with --rm deletes it.
    name = "run-" + request.node.callspec.id.replace(".", "-")
    result = any_kubectl.run(
        "run",
        name,
        "-i",
        "--rm",
        "--restart=Never",
        "--image=busybox",
        "--command",
        "--",
        "sh",
        "-c",
        "read line; echo got:$line",
        stdin="hello\n",
    )
    assert "got:hello" in result.stdout
    assert f'pod "{name}" deleted' in result.stdout


def test_exec_into_a_container_without_a_process_is_refused(any_kubectl: Kubectl) -> None:
    result = any_kubectl.run("exec", "idle", "--", "true", check=False)
    assert result.returncode != 0
    assert "container idle not found in pod idle_default" in result.stderr
    assert result.stderr.count("unable to upgrade connection") <= 1
