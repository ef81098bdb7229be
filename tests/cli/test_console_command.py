"""``setpoint console``: one line on stdout (the URL with its token), 127.0.0.1 only, the token
required, SIGTERM stops it; bad options are one-line errors."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from setpoint.testing.background_cluster import BackgroundCluster


def _console(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "setpoint", "console", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_it_prints_its_url_serves_with_the_token_and_stops_on_sigterm(
    local_cluster: BackgroundCluster,
) -> None:
    process = _console(
        "--kubeconfig", str(local_cluster.kubeconfig_path), "--operator", "127.0.0.1:9/metrics"
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        base = url.split("/?", 1)[0]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "/api/operators", timeout=10)
        assert refused.value.code == 403
        with urllib.request.urlopen(url, timeout=10) as page:
            assert page.status == 200 and b"setpoint console" in page.read()
        token = url.split("token=", 1)[1]
        with urllib.request.urlopen(f"{base}/api/operators?token={token}", timeout=10) as got:
            assert b'"url": "http://127.0.0.1:9"' in got.read()
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        assert process.stdout.read() == ""  # the URL is the only line on stdout
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--operator", "ftp://x"],
            "Invalid value for --operator: 'ftp://x': only http:// and https:// URLs are served",
        ),
        (["--port", "70000"], "Invalid value for '--port': 70000 is not in the range 0<=x<=65535."),
    ],
)
def test_bad_options_are_one_line_errors(
    args: list[str], message: str, local_cluster: BackgroundCluster
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "setpoint",
            "console",
            "--kubeconfig",
            str(local_cluster.kubeconfig_path),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"Error: {message}"


def test_a_kubeconfig_that_is_not_one_is_a_one_line_error(tmp_path: Path) -> None:
    broken = tmp_path / "kubeconfig"
    broken.write_text("clusters: [")
    done = subprocess.run(
        [sys.executable, "-m", "setpoint", "console", "--kubeconfig", str(broken)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("Error: ")


def test_a_port_in_use_is_a_one_line_error(local_cluster: BackgroundCluster) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "setpoint",
                "console",
                "--kubeconfig",
                str(local_cluster.kubeconfig_path),
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.strip() == f"Error: --port {port}: 127.0.0.1:{port} is in use"
