"""`setpoint run` imports only what running an operator needs: its start-up is mostly imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OPERATOR = """
import setpoint

op = setpoint.Operator("imports")

@op.reconciler(for_=setpoint.kinds.ConfigMap)
async def reconcile(ctx, request):
    return None
"""

KUBECONFIG = """
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""

# What other commands, the local cluster, typed models or rare operations need.
NOT_ON_THE_RUN_PATH = (
    "setpoint.cluster",
    "setpoint.generate",
    "setpoint.testing",
    "setpoint.api.models",
    "setpoint.api.resources",
    "setpoint.cli.cluster",
    "setpoint.cli.dev",
    "setpoint.cli.generate",
    "setpoint.cli.scaffold",
    "aiohttp.web",
    "pydantic",
    "rich",
    "watchfiles",
    "jinja2",
    "kubernetes_validate",
    "jsonschema",
    "jsonpatch",
    "importlib.metadata",
)


def test_setpoint_run_reaches_its_first_request_without_heavy_imports(tmp_path: Path) -> None:
    (tmp_path / "operator.py").write_text(OPERATOR)
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    # Runs `setpoint run` to its first request (the server is down: it gives up after a second),
    # then lists what was imported.
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('\\n'.join(sorted(sys.modules)), file=sys.stderr))\n"
        "from setpoint.cli.main import main\n"
        "sys.argv = ['setpoint', 'run', 'operator.py', '--kubeconfig', 'kubeconfig',"
        " '--cache-sync-timeout', '1']\n"
        "main()\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 1, completed.stderr
    assert "cannot reach the API server" in completed.stderr
    modules = set(completed.stderr.splitlines())
    assert "setpoint.manager" in modules  # the list is the real one
    imported = sorted(
        module
        for module in modules
        if any(module == name or module.startswith(name + ".") for name in NOT_ON_THE_RUN_PATH)
    )
    assert imported == []
