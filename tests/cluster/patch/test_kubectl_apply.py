"""The real kubectl (oldest and newest installed minor) patching and applying against the local
cluster: patch without ``--type``, client-side apply twice, server-side apply, conflicts,
``--force-conflicts`` and switching between the two apply modes.

``apply`` and ``edit`` still pass ``--validate=false``: kubectl's default validation needs the
OpenAPI documents, which the local cluster does not serve yet (nor does kubectl 1.27's ``diff``
work without them). Everything else uses default flags.
"""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.patch.conftest import gadget_crd

pytestmark = pytest.mark.slow

KUBECTL_DIR = Path("/usr/lib/google-cloud-sdk/bin")
VERSIONS = ("1.27", "1.33")
#: Until the local cluster serves OpenAPI, kubectl's client-side validation cannot run.
NO_OPENAPI = ("--validate=false",)


class VersionedKubectl(Kubectl):
    """A :class:`Kubectl` running one installed minor version directly."""

    def __init__(self, binary: Path, kubeconfig: Path, cache_dir: Path) -> None:
        super().__init__(kubeconfig, cache_dir)
        self._binary = binary

    def _command(self, *args: str) -> list[str]:
        return [str(self._binary), *super()._command(*args)[1:]]

    def apply(self, manifest: dict[str, Any], *flags: str, check: bool = True) -> Any:
        return self.run(
            "apply", *NO_OPENAPI, *flags, "-f", "-", stdin=json.dumps(manifest), check=check
        )


@pytest.fixture(params=VERSIONS, ids=[f"kubectl-{v}" for v in VERSIONS])
def kubectl(
    request: pytest.FixtureRequest, local_cluster: BackgroundCluster, tmp_path: Path
) -> VersionedKubectl:
    binary = KUBECTL_DIR / f"kubectl.{request.param}"
    if not binary.exists():
        pytest.skip(f"{binary} is not installed")
    return VersionedKubectl(binary, local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def deployment(namespace: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web", **labels}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1"}]},
            },
        },
    }


def managers(obj: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])}


def get(kubectl: Kubectl, *args: str) -> Any:
    return kubectl.json("get", *args, "--show-managed-fields")


def test_patch_without_type_is_strategic(kubectl: VersionedKubectl, namespace: str) -> None:
    kubectl.apply(deployment(namespace))
    kubectl.run(
        "patch",
        "deployment",
        "web",
        "-n",
        namespace,
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}',
    )
    live = get(kubectl, "deployment", "web", "-n", namespace)
    names = {c["name"] for c in live["spec"]["template"]["spec"]["containers"]}
    assert names == {"nginx", "side"}  # merged by name, not replaced
    assert ("kubectl-patch", "Update") in managers(live)


def test_client_side_apply_twice_removes_a_field(kubectl: VersionedKubectl, namespace: str) -> None:
    created = kubectl.apply(deployment(namespace, tier="fe"))
    assert "deployment.apps/web created" in created.stdout
    kubectl.run("label", "deployment", "web", "-n", namespace, "team=x")
    configured = kubectl.apply(deployment(namespace))
    assert "deployment.apps/web configured" in configured.stdout
    live = get(kubectl, "deployment", "web", "-n", namespace)
    # tier was applied before and is gone now; team was never applied and stays.
    assert live["metadata"]["labels"] == {"app": "web", "team": "x"}
    assert ("kubectl-client-side-apply", "Update") in managers(live)
    unchanged = kubectl.apply(deployment(namespace))
    assert "deployment.apps/web unchanged" in unchanged.stdout
    again = get(kubectl, "deployment", "web", "-n", namespace)
    assert again["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]


def test_custom_resources(kubectl: VersionedKubectl, namespace: str) -> None:
    group = f"k{secrets.token_hex(4)}.example.com"
    crd = gadget_crd(group)
    kubectl.run("create", *NO_OPENAPI, "-f", "-", stdin=json.dumps(crd))
    try:
        gadget = {
            "apiVersion": f"{group}/v1",
            "kind": "Gadget",
            "metadata": {"name": "g", "namespace": namespace},
            "spec": {"size": 1, "color": "red", "tags": ["a", "b"]},
        }
        kubectl.apply(gadget)
        del gadget["spec"]["color"]
        gadget["spec"]["tags"] = ["a"]
        kubectl.apply(gadget)
        live = get(kubectl, f"gadgets.{group}", "g", "-n", namespace)
        assert live["spec"] == {"size": 1, "tags": ["a"]}
        refused = kubectl.run(
            "patch",
            f"gadgets.{group}",
            "g",
            "-n",
            namespace,
            "-p",
            '{"spec":{"size":2}}',
            check=False,
        )
        assert refused.returncode != 0
        assert "application/strategic-merge-patch+json is not supported" in refused.stderr
        kubectl.run(
            "patch",
            f"gadgets.{group}",
            "g",
            "-n",
            namespace,
            "--type=merge",
            "-p",
            '{"spec":{"size":2}}',
        )
        gadget["spec"]["size"] = 3
        conflict = kubectl.apply(gadget, "--server-side", "--field-manager=other", check=False)
        assert conflict.returncode != 0
        assert f'conflict with "kubectl-patch" using {group}/v1: .spec.size' in conflict.stderr
        kubectl.apply(gadget, "--server-side", "--field-manager=other", "--force-conflicts")
        live = get(kubectl, f"gadgets.{group}", "g", "-n", namespace)
        assert live["spec"]["size"] == 3
        assert ("other", "Apply") in managers(live)
    finally:
        kubectl.run("delete", "crd", crd["metadata"]["name"], "--wait=false", check=False)


def fields(obj: dict[str, Any], manager: str, subresource: str = "") -> dict[str, Any]:
    """The fieldsV1 of ``manager``'s entry (for ``subresource``) in ``obj``'s managedFields."""
    (entry,) = (
        e
        for e in obj["metadata"]["managedFields"]
        if (e["manager"], e.get("subresource", "")) == (manager, subresource)
    )
    fields_v1: dict[str, Any] = entry["fieldsV1"]
    return fields_v1


def test_server_side_apply_conflict_and_force(kubectl: VersionedKubectl, namespace: str) -> None:
    applied = kubectl.apply(deployment(namespace), "--server-side")
    assert "deployment.apps/web serverside-applied" in applied.stdout
    # Within the runner's 60 s: kubectl, not the runner, reports a rollout that never ends.
    rollout = ("rollout", "status", "deployment/web", "-n", namespace, "--timeout=55s")
    kubectl.run(*rollout)
    live = get(kubectl, "deployment", "web", "-n", namespace)
    # Besides kubectl's apply, the deployment controller's own writes, as on a real cluster:
    # the revision annotation (an update) and the status (an update of the subresource).
    entries = {
        (e["manager"], e["operation"], e.get("subresource", ""))
        for e in live["metadata"]["managedFields"]
    }
    assert entries == {
        ("kubectl", "Apply", ""),
        ("kube-controller-manager", "Update", ""),
        ("kube-controller-manager", "Update", "status"),
    }
    revision = fields(live, "kube-controller-manager")
    assert revision == {
        "f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}}
    }
    status = fields(live, "kube-controller-manager", "status")["f:status"]
    assert {"f:replicas", "f:readyReplicas", "f:availableReplicas", "f:conditions"} <= set(status)
    assert "f:replicas" in fields(live, "kubectl")["f:spec"]

    scaled = deployment(namespace)
    scaled["spec"]["replicas"] = 5
    conflict = kubectl.apply(scaled, "--server-side", "--field-manager=scaler", check=False)
    assert conflict.returncode != 0
    # Only kubectl's field conflicts: the controller owns status, not spec.
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in (
        conflict.stderr
    )
    kubectl.apply(scaled, "--server-side", "--field-manager=scaler", "--force-conflicts")
    kubectl.run(*rollout)
    live = get(kubectl, "deployment", "web", "-n", namespace)
    assert (live["spec"]["replicas"], live["status"]["availableReplicas"]) == (5, 5)
    assert "f:replicas" in fields(live, "scaler")["f:spec"]
    assert "f:replicas" not in fields(live, "kubectl")["f:spec"]
    assert "f:availableReplicas" in fields(live, "kube-controller-manager", "status")["f:status"]


def test_switching_between_client_and_server_side_apply(
    kubectl: VersionedKubectl, namespace: str
) -> None:
    kubectl.apply(deployment(namespace, tier="fe"))
    moved = deployment(namespace, tier="fe")
    moved["spec"]["replicas"] = 4
    kubectl.apply(moved, "--server-side")  # no conflict with kubectl's own client-side apply
    live = get(kubectl, "deployment", "web", "-n", namespace)
    assert live["spec"]["replicas"] == 4
    assert ("kubectl", "Apply") in managers(live)
    assert ("kubectl-client-side-apply", "Update") not in managers(live)  # upgraded
    # A field dropped from the server-side applied config is removed.
    kubectl.apply(deployment(namespace), "--server-side")
    live = get(kubectl, "deployment", "web", "-n", namespace)
    assert live["metadata"]["labels"] == {"app": "web"}
    # And back to client-side apply.
    back = deployment(namespace, team="y")
    kubectl.apply(back)
    live = get(kubectl, "deployment", "web", "-n", namespace)
    assert live["metadata"]["labels"] == {"app": "web", "team": "y"}


def test_edit_set_image_rollout_restart_and_diff(
    kubectl: VersionedKubectl, namespace: str, tmp_path: Path
) -> None:
    kubectl.apply(deployment(namespace))
    kubectl.run("set", "image", "deployment/web", "nginx=nginx:2", "-n", namespace)
    kubectl.run("rollout", "restart", "deployment/web", "-n", namespace)
    live = get(kubectl, "deployment", "web", "-n", namespace)
    template = live["spec"]["template"]
    assert template["spec"]["containers"][0]["image"] == "nginx:2"
    assert "kubectl.kubernetes.io/restartedAt" in template["metadata"]["annotations"]
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nsed -i "s/nginx:2/nginx:3/" "$1"\n')
    editor.chmod(0o755)
    edited = subprocess.run(
        kubectl._command("edit", *NO_OPENAPI, "deployment/web", "-n", namespace),
        capture_output=True,
        text=True,
        env={**kubectl._env(), "EDITOR": str(editor)},
        timeout=60,
        check=False,
    )
    assert edited.returncode == 0, edited.stderr
    live = get(kubectl, "deployment", "web", "-n", namespace)
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:3"
    assert ("kubectl-edit", "Update") in managers(live)


def test_diff_is_a_dry_run_strategic_patch(
    local_cluster: BackgroundCluster, tmp_path: Path, namespace: str
) -> None:
    # Only the newest: kubectl 1.27's diff first needs /openapi/v2, not served yet.
    kubectl = VersionedKubectl(
        KUBECTL_DIR / "kubectl.1.33", local_cluster.kubeconfig_path, tmp_path / "kube-cache"
    )
    kubectl.apply(deployment(namespace))
    changed = deployment(namespace)
    changed["spec"]["replicas"] = 7
    diff = kubectl.run("diff", "-f", "-", stdin=json.dumps(changed), check=False)
    assert diff.returncode == 1, diff.stderr  # 1: differences found
    assert "+  replicas: 7" in diff.stdout
    assert get(kubectl, "deployment", "web", "-n", namespace)["spec"]["replicas"] == 2
