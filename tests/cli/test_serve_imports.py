"""`setpoint cluster serve` answers `/readyz` without importing what only some requests need,
and its start leaves the garbage collector running again (see
setpoint/cli/garbage_collection.py)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

# Each loads with the first request that needs it (the tests of those requests are named).
NOT_IMPORTED_AT_START = (
    "google.protobuf",  # protobuf bodies (tests/cluster/protobuf), OpenAPI v2 in protobuf
    "setpoint.cluster.apiserver.http.protobuf.decoding",  # (tests/cluster/openapi)
    "setpoint.cluster.apiserver.http.protobuf.descriptors",
    "setpoint.cluster.apiserver.http.protobuf.messages",
    "kubernetes_validate",  # only its schema files are read (find_spec finds them)
    "jsonschema",
    "referencing",
    "cel_expr_python",  # CEL rules of CRDs and admission policies (tests/cluster/schema, admission)
    # the runtime, and the other commands
    "setpoint.client",
    "setpoint.cache",
    "setpoint.controller",
    "setpoint.manager",
    "setpoint.cli.run",
    "setpoint.cli.dev",
    "setpoint.cli.generate",
    "setpoint.cli.scaffold",
    "setpoint.generate",
    "setpoint.console",
    "pydantic",
    "rich",
    "jinja2",
)

# Runs the command in this interpreter (as `python -m setpoint` does) and, from a thread,
# reports what is imported once /readyz answers and the kubeconfig is written (the end of the
# start: the controllers start after the listeners), and the collector's state.
SERVE = """
import gc, json, os, sys, threading, time, urllib.request
port, kubeconfig, report_path = sys.argv[1], sys.argv[2], sys.argv[3]

def report():
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            time.sleep(0.01)
    while not os.path.exists(kubeconfig) or not gc.isenabled():
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    modules = sorted(sys.modules)
    import aiohttp.connector
    context = aiohttp.connector._SSL_CONTEXT_VERIFIED
    state = {
        "modules": modules,
        "gc_enabled": gc.isenabled(),
        "frozen": gc.get_freeze_count(),
        "ca_pending": context.__dict__.get("_certificates_pending", False),
    }
    # A file of its own: the command prints on stdout from the other thread meanwhile.
    with open(report_path, "w") as out:
        out.write(json.dumps(state))
    os._exit(0)

threading.Thread(target=report, daemon=True).start()
from setpoint.cli.main import main
sys.argv = ["setpoint", "cluster", "serve", "--in-memory", "--port", port,
            "--kubeconfig", kubeconfig, "--log-level", "warning"]
main()
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_cluster_serve_is_ready_without_the_modules_of_occasional_requests(
    tmp_path: Path,
) -> None:
    report = tmp_path / "report.json"
    completed = subprocess.run(
        [sys.executable, "-c", SERVE, str(_free_port()), str(tmp_path / "kubeconfig"), str(report)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.exists(), completed.stderr
    state = json.loads(report.read_text())
    modules = set(state["modules"])
    # the list is the real one: the server and its controllers are imported
    assert "setpoint.cluster.apiserver.server" in modules
    assert "setpoint.cluster.controllers.kubelet.kubelet" in modules
    imported = sorted(
        module
        for module in modules
        if any(module == name or module.startswith(name + ".") for name in NOT_IMPORTED_AT_START)
    )
    assert imported == []
    # aiohttp's default TLS context has not loaded the system's CA certificates
    assert state["ca_pending"] is True
    # the collector was paused during the start only; what the start built is frozen
    assert state["gc_enabled"] is True
    assert state["frozen"] > 10_000


def test_the_click_group_invoked_directly_leaves_the_collector_alone() -> None:
    code = (
        "import gc\n"
        "from click.testing import CliRunner\n"
        "from setpoint.cli.main import cli\n"
        "result = CliRunner().invoke(cli, ['cluster', 'serve', '--port', '70000'])\n"
        "assert result.exit_code == 2, result.output\n"
        "print(gc.isenabled(), gc.get_freeze_count())\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["True", "0"]
