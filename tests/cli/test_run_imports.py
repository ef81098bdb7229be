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
    # What a default operator does not use before its first request: each loads
    # where it is first needed.
    "setpoint.manager.leader_election",  # with --leader-elect
    "setpoint.manager.lease_lock",
    "setpoint.manager.metrics",  # the leader-election metrics
    "setpoint.manager.metrics_endpoint",  # when the metrics server starts
    "setpoint.client.exec_credential",  # for a kubeconfig user with `exec`
    "setpoint.controller.recorder",  # at the first reconcile
    "setpoint.controller.finalizers",
    "setpoint.api.conditions",
    "setpoint.api.rbac",  # RBAC models: setpoint generate / rbac
    "setpoint.api.selectors",  # label selector parsing: with the first selector
    "setpoint.api.label_requirements",
    "setpoint.api.label_selector_parser",
    "setpoint.api.field_selectors",
    "setpoint.api.selector_error",
    "setpoint.api.field_errors",  # the API server's validation
    "setpoint.api.go_format",
    "setpoint.api.status",
    "setpoint.api.resource_versions",
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


LAZY_PACKAGES = {  # package -> its map of names loaded on first use
    "setpoint": "_EXPORTS",
    "setpoint.api": "_LAZY_EXPORTS",
    "setpoint.controller": "_LAZY_EXPORTS",
    "setpoint.manager": "_LAZY_EXPORTS",
}
# Public names that are modules; every other public name is a function, class or constant.
PUBLIC_MODULES = {"setpoint.api.meta", "setpoint.controller.log_context"}


def test_every_public_name_of_the_packages_still_imports() -> None:
    # Each public name must still resolve to the object its module defines, also after that
    # module was imported directly (the import system then sets the module itself on the
    # package under its own name, which would hide a function of the same name).
    code = (
        "import importlib, types\n"
        f"for package, table in {LAZY_PACKAGES!r}.items():\n"
        "    module = importlib.import_module(package)\n"
        "    lazy = getattr(module, table)\n"
        "    for defining in set(lazy.values()):\n"
        "        importlib.import_module(defining)\n"
        "    for name in module.__all__:\n"
        "        value = getattr(module, name)\n"
        "        if isinstance(value, types.ModuleType):\n"
        f"            assert value.__name__ in {PUBLIC_MODULES!r}, (package, name, value)\n"
        "        elif name in lazy:\n"
        "            defined = importlib.import_module(lazy[name])\n"
        "            assert value is getattr(defined, name), (package, name)\n"
        "        assert name in dir(module), (package, name)\n"
        "        exec(f'from {package} import {name}')\n"
        "print('ok')\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"
