"""The real kubectl, oldest, current and newest (1.27, 1.32, 1.33), with its default calls.

Every ``kubectl create`` generator (protobuf bodies), ``create/replace/apply -f`` under the
default ``--validate=strict`` (OpenAPI v3, or v2 protobuf for 1.27), ``explain`` of nested
fields of built-ins and custom resources, ``edit`` through ``EDITOR``, ``api-resources`` with
short names and categories, ``get all``, ``auth whoami`` and ``auth can-i``. Expected texts are
kubectl's and kube-apiserver's own.
"""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.crd_manifests import widget_crd
from tests.cluster.kubectl_runner import Kubectl

pytestmark = pytest.mark.slow

GCLOUD_BIN = Path("/usr/lib/google-cloud-sdk/bin")
VERSIONS = {
    "1.27": str(GCLOUD_BIN / "kubectl.1.27"),
    "1.32": "kubectl",  # the dispatcher picks 1.32 from /version
    "1.33": str(GCLOUD_BIN / "kubectl.1.33"),
}


@pytest.fixture(params=sorted(VERSIONS))
def kubectl(
    request: pytest.FixtureRequest, local_cluster: BackgroundCluster, tmp_path: Path
) -> Kubectl:
    binary = VERSIONS[request.param]
    if shutil.which(binary) is None:
        pytest.skip(f"kubectl {request.param} is not installed")
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache", binary)


def _write(path: Path, document: dict[str, Any]) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def test_create_generators(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    ns = ("-n", namespace)
    suffix = secrets.token_hex(3)
    cert, key = _tls_pair(tmp_path)
    commands = [
        ("configmap", "c1", "--from-literal=a=1", "--from-literal=b=two"),
        ("secret", "generic", "s1", "--from-literal=x=y"),
        ("secret", "tls", "t1", f"--cert={cert}", f"--key={key}"),
        ("secret", "docker-registry", "d1", "--docker-username=u", "--docker-password=p"),
        ("serviceaccount", "bot"),
        ("deployment", "web", "--image=nginx", "--replicas=0", "--port=80"),
        ("service", "clusterip", "svc1", "--tcp=80:8080"),
        ("service", "nodeport", "np1", "--tcp=80:http"),
        ("job", "j1", "--image=busybox", "--", "echo", "hi"),
        ("cronjob", "cj1", "--image=busybox", "--schedule=*/5 * * * *"),
        ("role", "r1", "--verb=get", "--resource=pods"),
        ("rolebinding", "rb1", "--role=r1", f"--serviceaccount={namespace}:bot"),
        ("quota", "q1", "--hard=cpu=1,pods=2"),
        ("poddisruptionbudget", "pdb1", "--selector=app=web", "--min-available=50%"),
        ("ingress", "ing1", "--rule=foo.com/bar=svc1:80"),
    ]
    for command in commands:
        # flags before a "--" separator, so that the job's command stays last
        if "--" in command:
            cut = command.index("--")
            kubectl.run("create", *command[:cut], *ns, *command[cut:])
        else:
            kubectl.run("create", *command, *ns)
    cluster_scoped = [
        ("clusterrole", f"cr-{suffix}", "--verb=get,list", "--resource=deployments.apps"),
        ("clusterrolebinding", f"crb-{suffix}", f"--clusterrole=cr-{suffix}", "--group=devs"),
        ("priorityclass", f"high-{suffix}", "--value=1000", "--description=important"),
    ]
    try:
        for command in cluster_scoped:
            kubectl.run("create", *command)
        assert kubectl.json("get", "cm", "c1", *ns)["data"] == {"a": "1", "b": "two"}
        assert kubectl.json("get", "secret", "s1", *ns)["data"] == {"x": "eQ=="}
        assert kubectl.json("get", "secret", "t1", *ns)["type"] == "kubernetes.io/tls"
        docker = kubectl.json("get", "secret", "d1", *ns)
        assert docker["type"] == "kubernetes.io/dockerconfigjson"
        deployment = kubectl.json("get", "deploy", "web", *ns)
        assert deployment["spec"]["replicas"] == 0
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        assert (container["image"], container["ports"][0]["containerPort"]) == ("nginx", 80)
        service = kubectl.json("get", "svc", "np1", *ns)["spec"]
        assert (service["type"], service["ports"][0]["targetPort"]) == ("NodePort", "http")
        job = kubectl.json("get", "job", "j1", *ns)["spec"]["template"]["spec"]
        assert job["containers"][0]["command"] == ["echo", "hi"]
        assert kubectl.json("get", "cj", "cj1", *ns)["spec"]["schedule"] == "*/5 * * * *"
        # A job from a cronjob's template: the whole pod template travels as protobuf.
        kubectl.run("create", "job", "from-cj", "--from=cronjob/cj1", *ns)
        manual = kubectl.json("get", "job", "from-cj", *ns)
        assert manual["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
        assert manual["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
        binding = kubectl.json("get", "rolebinding", "rb1", *ns)
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "bot", "namespace": namespace}
        ]
        quota = kubectl.json("get", "quota", "q1", *ns)
        assert quota["spec"]["hard"] == {"cpu": "1", "pods": "2"}
        pdb = kubectl.json("get", "pdb", "pdb1", *ns)
        assert pdb["spec"]["minAvailable"] == "50%"
        rule = kubectl.json("get", "ing", "ing1", *ns)["spec"]["rules"][0]
        assert rule["host"] == "foo.com"
        assert rule["http"]["paths"][0]["backend"]["service"] == {
            "name": "svc1",
            "port": {"number": 80},
        }
        assert kubectl.json("get", "pc", f"high-{suffix}")["value"] == 1000
        assert kubectl.json("get", "clusterrole", f"cr-{suffix}")["rules"][0]["verbs"] == [
            "get",
            "list",
        ]
    finally:
        for kind, name, *_ in reversed(cluster_scoped):
            kubectl.run("delete", kind, name, "--ignore-not-found", check=False)


def _tls_pair(directory: Path) -> tuple[Path, Path]:
    from setpoint.cluster.apiserver.http.serving_certificate import generate_serving_certificate

    pair = generate_serving_certificate()
    cert, key = directory / "tls.crt", directory / "tls.key"
    cert.write_bytes(pair.certificate_pem)
    key.write_bytes(pair.key_pem)
    return cert, key


def test_auth_whoami_and_can_i(kubectl: Kubectl) -> None:
    whoami = kubectl.run("auth", "whoami").stdout
    assert "Username    setpoint-admin" in whoami
    assert "system:masters" in whoami
    assert kubectl.run("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
    assert kubectl.run("auth", "can-i", "get", "/logs").stdout.strip() == "yes"
    listing = kubectl.run("auth", "can-i", "--list").stdout.splitlines()
    assert listing[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert listing[1].split() == ["*.*", "[]", "[]", "[*]"]
    assert "selfsubjectaccessreviews.authorization.k8s.io   []" in "\n".join(listing)


def test_files_are_validated_strictly_by_default(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    good = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": namespace},
        "data": {"a": "1"},
    }
    bad = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "bad", "namespace": namespace},
        "dta": {"a": "1"},
    }
    good_file, bad_file = _write(tmp_path / "good.json", good), _write(tmp_path / "bad.json", bad)

    rejected = kubectl.run("create", "-f", bad_file, check=False)
    assert rejected.returncode == 1
    assert rejected.stderr.strip() == (
        f'Error from server (BadRequest): error when creating "{bad_file}": ConfigMap in version '
        '"v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dta"'
    )
    assert kubectl.run("apply", "-f", bad_file, check=False).returncode == 1
    warned = kubectl.run("create", "--validate=warn", "-f", bad_file)
    assert 'Warning: unknown field "dta"' in warned.stderr

    kubectl.run("create", "-f", good_file)
    good["data"] = {"a": "2"}
    kubectl.run("replace", "-f", _write(tmp_path / "good.json", good))
    assert kubectl.json("get", "cm", "app", "-n", namespace)["data"] == {"a": "2"}
    applied = {**good, "metadata": {"name": "applied", "namespace": namespace}}
    assert (
        "configmap/applied created"
        in kubectl.run("apply", "-f", _write(tmp_path / "a.json", applied)).stdout
    )


@pytest.fixture
def widgets(local_cluster: BackgroundCluster, tmp_path: Path) -> Any:
    crd = widget_crd()
    crd["spec"]["names"]["categories"] = ["all"]
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "color"
    ]["description"] = "The colour of the widget."
    admin = Kubectl(local_cluster.kubeconfig_path, tmp_path / "admin-cache")
    admin.run("create", "-f", _write(tmp_path / "crd.json", crd))
    try:
        yield crd["spec"]["group"]
    finally:
        admin.run("delete", "crd", crd["metadata"]["name"], "--wait=false", check=False)


def test_explain_nested_fields(kubectl: Kubectl, widgets: str) -> None:
    strategy = kubectl.run("explain", "deployment.spec.strategy.rollingUpdate.maxSurge").stdout
    assert "KIND:       Deployment" in strategy
    assert "FIELD: maxSurge" in strategy
    containers = kubectl.run("explain", "pods.spec.containers").stdout
    assert "image\t<string>" in containers
    color = kubectl.run("explain", f"widgets.{widgets}.spec.color").stdout
    assert f"GROUP:      {widgets}" in color
    assert "FIELD: color <string>" in color
    assert "The colour of the widget." in color
    recursive = kubectl.run("explain", f"widgets.{widgets}", "--recursive").stdout
    assert "size\t<integer> -required-" in recursive


def test_api_resources_and_get_all(
    kubectl: Kubectl, widgets: str, namespace: str, tmp_path: Path
) -> None:
    listing = kubectl.run("api-resources").stdout
    rows = {line.split()[0]: line.split() for line in listing.splitlines()[1:]}
    assert rows["deployments"][1] == "deploy"
    assert rows["poddisruptionbudgets"][1] == "pdb"
    assert rows["widgets"][1] == "wd"
    in_all = kubectl.run("api-resources", "--categories=all", "-o", "name").stdout.split()
    assert {"pods", "services", "deployments.apps", "jobs.batch", f"widgets.{widgets}"} <= set(
        in_all
    )

    kubectl.run("create", "deployment", "web", "--image=nginx", "-n", namespace)
    widget = {
        "apiVersion": f"{widgets}/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": namespace},
        "spec": {"size": 1},
    }
    kubectl.run("apply", "-f", _write(tmp_path / "w.json", widget))
    everything = kubectl.run("get", "all", "-n", namespace, "-o", "name").stdout.split()
    assert "deployment.apps/web" in everything
    assert f"widget.{widgets}/w1" in everything


def test_edit_through_editor(
    kubectl: Kubectl, widgets: str, namespace: str, tmp_path: Path
) -> None:
    widget = {
        "apiVersion": f"{widgets}/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": namespace},
        "spec": {"size": 1},
    }
    kubectl.run("create", "-f", _write(tmp_path / "w.json", widget))
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/size: 1/size: 7/' \"$1\"\n")
    editor.chmod(0o755)
    edited = kubectl.run(
        "edit", f"widgets.{widgets}", "w1", "-n", namespace, env={"EDITOR": str(editor)}
    )
    assert "edited" in edited.stdout
    assert kubectl.json("get", f"widgets.{widgets}", "w1", "-n", namespace)["spec"]["size"] == 7

    # An unchanged built-in passes the default validation: nothing to send.
    kubectl.run("create", "configmap", "c", "--from-literal=a=1", "-n", namespace)
    unchanged = kubectl.run("edit", "cm", "c", "-n", namespace, env={"EDITOR": "true"})
    assert unchanged.stderr.strip() == "Edit cancelled, no changes made."


def test_apply_a_custom_resource_twice_removing_a_field(
    kubectl: Kubectl, widgets: str, namespace: str, tmp_path: Path
) -> None:
    widget: dict[str, Any] = {
        "apiVersion": f"{widgets}/v1",
        "kind": "Widget",
        "metadata": {"name": "w2", "namespace": namespace},
        "spec": {"size": 1, "color": "red"},
    }
    assert "created" in kubectl.run("apply", "-f", _write(tmp_path / "w.json", widget)).stdout
    widget["spec"] = {"size": 2}
    assert "configured" in kubectl.run("apply", "-f", _write(tmp_path / "w.json", widget)).stdout
    # the removed color is gone from the object and the schema default fills it again
    spec = kubectl.json("get", f"widgets.{widgets}", "w2", "-n", namespace)["spec"]
    assert spec == {"size": 2, "color": "blue"}
