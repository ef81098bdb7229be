"""Running an operator as a ServiceAccount (impersonation): the client option, `setpoint run
--as`, the testing kit's ``run_operator(service_account=...)``, and the one-line refusal."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

import setpoint
from setpoint.client import Client
from setpoint.client.errors import ConfigError, Forbidden
from setpoint.generate.rbac_suggest import missing_rules
from setpoint.testing import BackgroundCluster, run_operator, wait_for
from setpoint.testing.least_privilege import install_rbac, observed_rbac, service_account_user

ROLE = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
"""

copier = setpoint.Operator("copier")


@copier.reconciler(for_=("v1", "ConfigMap"))
async def copy_to_a_secret(ctx: setpoint.Context, request: setpoint.Request) -> None:
    config_map = await ctx.get()
    if config_map is None:
        return
    await ctx.client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": request.name, "namespace": request.namespace},
            "stringData": dict(config_map.get("data") or {}),
        }
    )


async def test_the_client_impersonates_a_service_account(
    kubeconfig: str, namespace: str, client: Client
) -> None:
    user = service_account_user(namespace, "robot")
    async with await Client.from_kubeconfig(kubeconfig, impersonate_user=user) as robot:
        with pytest.raises(Forbidden) as refused:
            await robot.list("v1", "ConfigMap", namespace=namespace)
        assert f'User "{user}" cannot list resource "configmaps"' in refused.value.message
        assert refused.value.missing_permission == 'Permission("", "configmaps", ["list"])'
        await client.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "robot-view", "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": "view"},
                "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": namespace}],
            }
        )  # fmt: skip

        async def can_list() -> bool:
            try:
                await robot.list("v1", "ConfigMap", namespace=namespace)
            except Forbidden:
                return False
            return True

        await wait_for(can_list, what="the binding to take effect")
    with pytest.raises(ConfigError, match="impersonate_groups: requires impersonate_user"):
        await Client.from_kubeconfig(kubeconfig, impersonate_groups=["g"])


async def test_an_operator_run_as_its_service_account_names_the_missing_permission(
    kubeconfig: str,
    namespace: str,
    client: Client,
    local_cluster: BackgroundCluster,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    role = tmp_path / "role.yaml"
    role.write_text(ROLE)
    rbac = await install_rbac(client, role, namespace=namespace, service_account="copier")
    try:
        caplog.set_level(logging.ERROR, logger="setpoint")
        async with run_operator(
            copier, kubeconfig=kubeconfig, namespace=namespace, service_account="copier"
        ):
            await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "c", "namespace": namespace},
                    "data": {"k": "v"},
                }
            )

            def refusals() -> list[logging.LogRecord]:
                return [r for r in caplog.records if "forbidden" in r.getMessage()]

            (first, *_) = await wait_for(refusals, what="the refusal in the log")
    finally:
        await rbac.remove(client)
    message = first.getMessage()
    assert f'User "{rbac.user}" cannot create resource "secrets"' in message
    assert 'missing permission: Permission("", "secrets", ["create"])' in message
    assert first.exc_info is None and "\n" not in message
    observed = observed_rbac(local_cluster, rbac.user)
    assert missing_rules(rbac.rules, observed) == [("", "secrets", "create")]


OPERATOR = """
import setpoint

op = setpoint.Operator("as-op")

@op.reconciler(for_=("v1", "ConfigMap"))
async def reconcile(ctx, request):
    return None
"""


async def _run(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "setpoint.cli.main", "run", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def _line_with(stream: Any, text: str) -> str:
    while True:
        line = (await stream.readline()).decode()
        if not line or text in line:
            return line


async def test_setpoint_run_as_acts_as_the_user(
    kubeconfig: str, namespace: str, tmp_path: Path
) -> None:
    target = tmp_path / "as_operator.py"
    target.write_text(OPERATOR)
    user = service_account_user(namespace, "nobody")
    process = await _run(str(target), "--kubeconfig", kubeconfig, "-n", namespace, "--as", user)
    try:
        line = await asyncio.wait_for(_line_with(process.stderr, "forbidden"), 60)
    finally:
        process.terminate()
        await process.wait()
    assert f'User \\"{user}\\" cannot list resource \\"configmaps\\"' in line or (
        f'User "{user}" cannot list resource "configmaps"' in line
    )
    usage = await _run(str(target), "--kubeconfig", kubeconfig, "--as-group", "g")
    _, stderr = await asyncio.wait_for(usage.communicate(), 60)
    assert usage.returncode == 2
    assert "--as-group requires --as" in stderr.decode()
