"""``kubectl exec`` and ``kubectl cp`` over SPDY (kubectl before 1.30) against a ``--run-pods``
pod: output streams, stdin, the exit code, and files copied both ways."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl

KUBECTL_DIR = Path("/usr/lib/google-cloud-sdk/bin")


@pytest.fixture(scope="module")
def cluster() -> Iterator[BackgroundCluster]:
    running = BackgroundCluster(in_memory=True, run_pods=True).start()
    try:
        kubectl = Kubectl(running.kubeconfig_path, Path(running.kubeconfig_path).parent / "c")
        kubectl.run("run", "shell", "--image=busybox", "--command", "--", "sleep", "3600")
        kubectl.run("wait", "pod/shell", "--for=condition=Ready", "--timeout=30s")
        yield running
    finally:
        running.stop()


@pytest.fixture(params=["1.27", "1.29"])
def old_kubectl(
    request: pytest.FixtureRequest, cluster: BackgroundCluster, tmp_path: Path
) -> Kubectl:
    binary = KUBECTL_DIR / f"kubectl.{request.param}"
    if not binary.exists():
        pytest.skip(f"kubectl {request.param} is not installed")
    return Kubectl(cluster.kubeconfig_path, tmp_path / "cache", str(binary))


def test_exec_streams_and_exit_code(old_kubectl: Kubectl) -> None:
    result = old_kubectl.run(
        "exec", "shell", "--", "sh", "-c", "echo out; echo err >&2; exit 3", check=False
    )
    assert result.returncode == 3
    assert result.stdout == "out\n"
    assert "err\n" in result.stderr
    assert "command terminated with exit code 3" in result.stderr
    piped = old_kubectl.run("exec", "-i", "shell", "--", "cat", stdin="through stdin\n")
    assert piped.stdout == "through stdin\n"
    missing = old_kubectl.run("exec", "shell", "--", "no-such-command", check=False)
    assert missing.returncode != 0
    assert "no-such-command" in missing.stderr


def test_cp_both_ways(old_kubectl: Kubectl, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("copied in and out\n")
    old_kubectl.run("cp", str(source), "shell:copied.txt")
    back = tmp_path / "out.txt"
    old_kubectl.run("cp", "shell:copied.txt", str(back))
    assert back.read_text() == "copied in and out\n"
