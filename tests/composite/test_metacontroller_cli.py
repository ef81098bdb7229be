"""`setpoint install metacontroller` and `setpoint metacontroller run`, with real kubectl."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import uuid

import pytest
import yaml

from setpoint.client import Client
from setpoint.testing import wait_for

from .conftest import GROUP, THING_CRD, HookServer

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")


async def kubectl(kubeconfig: str, *args: str, stdin: str | None = None) -> str:
    """kubectl in a thread: the hook server runs on this test's event loop."""
    done = await asyncio.to_thread(
        subprocess.run,
        ["kubectl", "--kubeconfig", kubeconfig, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


async def test_install_then_run_a_composite_controller_applied_with_kubectl(
    client: Client, kubeconfig: str, namespace: str, hooks: HookServer
) -> None:
    install = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "setpoint", "install", "metacontroller", "--kubeconfig", kubeconfig],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert install.returncode == 0, install.stderr
    assert "customresourcedefinition/compositecontrollers.metacontroller.k8s.io" in install.stdout
    assert "compositecontrollers" in await kubectl(
        kubeconfig, "api-resources", "--api-group=metacontroller.k8s.io"
    )
    await kubectl(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump(THING_CRD))
    shard = uuid.uuid4().hex[:8]
    hooks.handlers["/sync"] = lambda request: {
        "status": {"seen": True},
        "children": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-cli"}}],
    }
    # A manifest as Metacontroller's users write it.
    manifest = f"""
apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata:
  name: cli-things-{shard}
  labels: {{shard: "{shard}"}}
spec:
  generateSelector: true
  parentResource:
    apiVersion: {GROUP}/v1
    resource: things
  childResources:
  - apiVersion: v1
    resource: configmaps
    updateStrategy:
      method: InPlace
  hooks:
    sync:
      webhook:
        url: {hooks.url}/sync
        timeout: 5s
"""
    await kubectl(kubeconfig, "apply", "-f", "-", stdin=manifest)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "setpoint", "metacontroller", "run",
        "--kubeconfig", kubeconfig, "-n", namespace,
        "--target-label-selector", f"shard={shard}",
        "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        await kubectl(
            kubeconfig, "apply", "-n", namespace, "-f", "-",
            stdin=f"apiVersion: {GROUP}/v1\nkind: Thing\nmetadata: {{name: t}}\nspec: {{}}\n",
        )  # fmt: skip
        await wait_for(
            lambda: client.get("v1", "ConfigMap", "from-cli", namespace=namespace),
            timeout=30,
            what="the child the CLI's controller made",
        )
        status = await kubectl(
            kubeconfig, "get", "thing", "t", "-n", namespace, "-o", "jsonpath={.status}"
        )
        assert '"seen":true' in status
        events = await kubectl(
            kubeconfig,
            "get",
            "events",
            "-A",
            "--field-selector",
            f"involvedObject.name=cli-things-{shard}",
        )
        assert "Started" in events
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), 30)
        await kubectl(
            kubeconfig, "delete", "compositecontroller", f"cli-things-{shard}", "--ignore-not-found"
        )
    assert process.returncode == 0, stderr.decode()
