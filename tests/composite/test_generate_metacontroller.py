"""`setpoint generate metacontroller`: the CRDs, least-privilege ClusterRole and Deployment of
`setpoint metacontroller run`, from the CompositeControllers and DecoratorControllers it runs;
the ClusterRole is enough to run them (checked by running as the ServiceAccount bound to it)."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

import setpoint
from setpoint.cli.main import cli
from setpoint.client import Client
from setpoint.composite import Metacontroller
from setpoint.testing import install_rbac, run_operator, wait_for

from .conftest import GROUP, HookServer
from .test_composite_webhooks import create_thing, thing_status


def declarations(hooks: HookServer, namespace: str, shard: str) -> list[dict[str, Any]]:
    webhook = {
        "url": hooks.url + "/sync",
        "authorization": {"secretRef": {"name": "hook-token", "namespace": namespace, "key": "t"}},
    }
    return [
        {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "CompositeController",
            "metadata": {"name": f"things-{shard}", "labels": {"composite-test": shard}},
            "spec": {
                "generateSelector": True,
                "parentResource": {"apiVersion": f"{GROUP}/v1", "resource": "things"},
                "childResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "configmaps",
                        "updateStrategy": {"method": "RollingInPlace"},
                    }
                ],
                "hooks": {"sync": {"webhook": webhook}},
            },
        },
        {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "DecoratorController",
            "metadata": {"name": f"decorate-{shard}", "labels": {"composite-test": shard}},
            "spec": {
                "resources": [{"apiVersion": "apps/v1", "resource": "statefulsets"}],
                "attachments": [{"apiVersion": "v1", "resource": "services"}],
                "hooks": {
                    "sync": {
                        "webhook": {
                            "service": {"name": "decorator-hooks", "namespace": namespace},
                            "path": "/decorate",
                        }
                    },
                    "customize": {"webhook": {"url": hooks.url + "/customize"}},
                },
            },
        },
    ]


def role_rules(path: Path) -> list[dict[str, Any]]:
    role = yaml.safe_load((path / "rbac" / "role.yaml").read_text())
    assert role["kind"] == "ClusterRole"
    rules: list[dict[str, Any]] = role["rules"]
    return rules


async def test_generated_rbac_and_deployment_run_the_declared_controllers(
    client: Client,
    kubeconfig: str,
    namespace: str,
    hooks: HookServer,
    crds: None,
    tmp_path: Path,
) -> None:
    shard = uuid.uuid4().hex[:12]
    declared = declarations(hooks, namespace, shard)
    manifests = tmp_path / "config" / "metacontroller.yaml"
    manifests.parent.mkdir()
    manifests.write_text(yaml.safe_dump_all(declared))
    output = tmp_path / "out"
    image = "registry.example/setpoint:1"
    arguments = ["generate", "metacontroller", str(manifests.parent), "-o", str(output)]
    result = CliRunner().invoke(cli, [*arguments, "--image", image])
    assert result.exit_code == 0, result.output
    assert "for 2 controller(s)" in result.output
    missing = CliRunner().invoke(cli, ["generate", "metacontroller", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
    assert "nowhere: no such file or directory" in missing.output
    assert f"DecoratorController decorate-{shard}: its customize hook" in result.output

    rules = role_rules(output)
    by_resource = {
        (rule["apiGroups"][0], resource, tuple(rule.get("resourceNames", ()))): rule["verbs"]
        for rule in rules
        for resource in rule["resources"]
    }
    writes = ["get", "list", "watch", "create", "update", "patch", "delete"]
    assert by_resource[("metacontroller.k8s.io", "compositecontrollers", ())] == [
        "get",
        "list",
        "watch",
    ]
    assert by_resource[("metacontroller.k8s.io", "controllerrevisions", ())] == writes
    assert by_resource[(GROUP, "things", ())] == ["get", "list", "watch", "update", "patch"]
    assert by_resource[(GROUP, "things/status", ())] == ["get", "update", "patch"]
    assert by_resource[("", "configmaps", ())] == writes
    assert by_resource[("apps", "statefulsets", ())] == ["get", "list", "watch", "update", "patch"]
    assert by_resource[("", "services", ())] == writes
    assert by_resource[("", "services", ("decorator-hooks",))] == ["get"]
    assert by_resource[("", "endpoints", ("decorator-hooks",))] == ["get"]
    assert by_resource[("", "secrets", ("hook-token",))] == ["get"]
    assert not any("*" in rule["resources"] or "*" in rule["verbs"] for rule in rules)
    (deployment,) = [
        d
        for d in yaml.safe_load_all((output / "manager" / "manager.yaml").read_text())
        if d["kind"] == "Deployment"
    ]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == image
    assert container["command"] == ["setpoint"]
    assert container["args"][:3] == ["metacontroller", "run", "--leader-elect"]
    kustomization = yaml.safe_load((output / "default" / "kustomization.yaml").read_text())
    assert kustomization["namespace"] == "metacontroller"
    crd_files = sorted(p.name for p in (output / "crd").iterdir())
    assert "metacontroller.k8s.io_controllerrevisions.yaml" in crd_files

    # The ClusterRole is enough: the composite controller runs as the ServiceAccount bound to
    # it (rolling child, so ControllerRevisions too; the hook's token read from its Secret).
    token = base64.b64encode(b"abc").decode()
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "hook-token", "namespace": namespace},
            "data": {"t": token},
        }
    )
    hooks.handlers["/sync"] = lambda request: {
        "status": {"ran": True},
        "children": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child"}}],
    }
    rbac = await install_rbac(client, output / "rbac", namespace=namespace, service_account="mc")
    op = setpoint.Operator("metacontroller")
    op.add(Metacontroller(op, target_label_selector=f"composite-test={shard}"))
    created = [await client.create(declared[0])]
    try:
        async with run_operator(
            op, kubeconfig=kubeconfig, namespace=namespace, service_account="mc"
        ):
            await create_thing(client, namespace)
            await thing_status(
                client,
                namespace,
                lambda s: (
                    s.get("ran")
                    and any(c.get("reason") == "OnLatestRevision" for c in s.get("conditions", []))
                ),
            )
            await wait_for(
                lambda: client.get("v1", "ConfigMap", "child", namespace=namespace), timeout=10
            )
            assert hooks.headers["/sync"][-1]["Authorization"] == "Bearer abc"
    finally:
        for obj in created:
            await client.delete(obj, missing_ok=True)
        await rbac.remove(client)
