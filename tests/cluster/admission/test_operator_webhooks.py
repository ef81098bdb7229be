"""An operator's typed defaulter and validator, served by its manager's webhook server and
called by the local cluster: what `kubectl apply` of a bad object shows."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import aiohttp

import setpoint
from setpoint.models import ConfigMap
from setpoint.testing import run_operator
from setpoint.testing.background_cluster import BackgroundCluster
from setpoint.webhook import Denied
from tests.cluster.admission.test_webhook_admission import configmap, register, webhook
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI
from tests.webhook.serving import write_certificate

op = setpoint.Operator("cm-webhooks")


@op.defaulter(ConfigMap)
def default_data(obj: ConfigMap) -> None:
    obj.data.setdefault("defaulted", "yes")


@op.validator(ConfigMap)
class ConfigMapValidator:
    def validate_create(self, obj: ConfigMap) -> list[str]:
        if "forbidden" in obj.data:
            raise Denied("data.forbidden is not allowed", code=422, reason="Invalid")
        return [f"{obj.metadata.name} looks fine"]

    def validate_update(self, old: ConfigMap, new: ConfigMap) -> None:
        if old.data.get("defaulted") != new.data.get("defaulted"):
            raise Denied("data.defaulted is immutable")


def test_the_operator_declares_its_webhooks_on_kubebuilders_paths() -> None:
    assert [(w.path, w.mutating, w.operations) for w in op.webhooks] == [
        ("/mutate-core-v1-configmap", True, ("CREATE", "UPDATE")),
        ("/validate-core-v1-configmap", False, ("CREATE", "UPDATE")),
    ]


async def test_the_operators_webhooks_admit_writes_to_the_local_cluster(
    admission_cluster: BackgroundCluster, api: RawAPI, namespace: str, tmp_path: Path
) -> None:
    certificate = write_certificate(tmp_path / "certs")
    async with run_operator(
        op,
        kubeconfig=admission_cluster.kubeconfig_path,
        namespace=namespace,
        webhook_port=0,
        webhook_host="127.0.0.1",
        webhook_cert_dir=str(tmp_path / "certs"),
        health_probe_bind_address="127.0.0.1:0",
    ) as running:
        server = running.webhook_server
        assert server is not None and server.ready
        async with aiohttp.ClientSession() as session:
            assert running.probe_endpoint is not None
            async with session.get(f"{running.probe_endpoint.url}/readyz/webhook") as probe:
                assert probe.status == 200
        bundle = base64.b64encode(certificate.certificate_pem).decode()

        def client_config(path: str) -> dict[str, Any]:
            return {"url": f"https://127.0.0.1:{server.port}{path}", "caBundle": bundle}

        await register(
            api,
            "MutatingWebhookConfiguration",
            webhook("default.cm.example.com", client_config("/mutate-core-v1-configmap")),
        )
        await register(
            api,
            "ValidatingWebhookConfiguration",
            webhook("validate.cm.example.com", client_config("/validate-core-v1-configmap")),
        )
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        created = await api.request("POST", path, configmap("ok"))
        assert created.status == 201, created.body
        assert created.body["data"] == {"a": "1", "defaulted": "yes"}
        assert created.headers.getall("Warning") == ['299 - "ok looks fine"']
        bad = configmap("bad")
        bad["data"]["forbidden"] = "x"  # type: ignore[index]
        refused = await api.request("POST", path, bad)
        assert refused.status == 422
        assert refused.body["reason"] == "Invalid"
        assert refused.body["message"] == (
            'admission webhook "validate.cm.example.com" denied the request: '
            "data.forbidden is not allowed"
        )
        changed = {**created.body, "data": {"a": "1", "defaulted": "no"}}
        refused = await api.request("PUT", f"{path}/ok", changed)
        assert refused.status == 403
        assert refused.body["message"].endswith("denied the request: data.defaulted is immutable")


async def test_webhooks_local_registers_the_configurations_and_removes_them_on_exit(
    admission_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    names = [
        f"/apis/admissionregistration.k8s.io/v1/{plural}/cm-webhooks-{kind}-webhook-configuration"
        for plural, kind in (
            ("mutatingwebhookconfigurations", "mutating"),
            ("validatingwebhookconfigurations", "validating"),
        )
    ]
    async with run_operator(
        op,
        kubeconfig=admission_cluster.kubeconfig_path,
        namespace=namespace,
        webhook_port=0,
        webhooks_local=True,
    ):
        mutating = (await api.request("GET", names[0])).body
        [entry] = mutating["webhooks"]
        assert entry["name"] == "mconfigmap-v1.kb.io"
        assert entry["clientConfig"]["url"].startswith("https://127.0.0.1:")
        assert entry["clientConfig"]["url"].endswith("/mutate-core-v1-configmap")
        assert entry["rules"] == [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["configmaps"],
                "scope": "*",
            }
        ]
        assert entry["sideEffects"] == "None"
        bad = configmap("bad")
        bad["data"]["forbidden"] = "x"  # type: ignore[index]
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        refused = await api.request("POST", path, bad)
        assert refused.status == 422, refused.body
        assert refused.body["message"] == (
            'admission webhook "vconfigmap-v1.kb.io" denied the request: '
            "data.forbidden is not allowed"
        )
    for name in names:
        assert (await api.request("GET", name)).status == 404
    # Nothing is left that would refuse writes with the operator gone.
    assert (await api.request("POST", path, bad)).status == 201


async def test_a_kubebuilder_style_configuration_applied_with_kubectl_calls_the_operator(
    admission_cluster: BackgroundCluster, api: RawAPI, namespace: str, tmp_path: Path
) -> None:
    # What kubebuilder's `make manifests` writes (config/webhook/manifests.yaml), pointed at
    # the operator's server with a URL and a CA bundle, applied with the real kubectl.
    certificate = write_certificate(tmp_path / "certs")
    async with run_operator(
        op,
        kubeconfig=admission_cluster.kubeconfig_path,
        namespace=namespace,
        webhook_port=0,
        webhook_host="127.0.0.1",
        webhook_cert_dir=str(tmp_path / "certs"),
    ) as running:
        assert running.webhook_server is not None
        bundle = base64.b64encode(certificate.certificate_pem).decode()
        url = f"https://127.0.0.1:{running.webhook_server.port}/validate-core-v1-configmap"
        manifest = tmp_path / "manifests.yaml"
        manifest.write_text(
            "---\n"
            "apiVersion: admissionregistration.k8s.io/v1\n"
            "kind: ValidatingWebhookConfiguration\n"
            "metadata:\n"
            "  name: validating-webhook-configuration\n"
            "webhooks:\n"
            "- admissionReviewVersions:\n"
            "  - v1\n"
            "  clientConfig:\n"
            f"    url: {url}\n"
            f"    caBundle: {bundle}\n"
            "  failurePolicy: Fail\n"
            "  name: vconfigmap-v1.kb.io\n"
            "  rules:\n"
            "  - apiGroups:\n"
            '    - ""\n'
            "    apiVersions:\n"
            "    - v1\n"
            "    operations:\n"
            "    - CREATE\n"
            "    - UPDATE\n"
            "    resources:\n"
            "    - configmaps\n"
            "  sideEffects: None\n"
        )
        kubectl = Kubectl(admission_cluster.kubeconfig_path, tmp_path / "cache")
        applied = await asyncio.to_thread(kubectl.run, "apply", "-f", str(manifest))
        assert "validatingwebhookconfiguration" in applied.stdout
        bad = tmp_path / "bad.yaml"
        bad.write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  namespace: {namespace}\n"
            "data:\n  forbidden: x\n"
        )
        refused = await asyncio.to_thread(kubectl.run, "apply", "-f", str(bad), check=False)
        assert refused.returncode == 1
        assert (
            'admission webhook "vconfigmap-v1.kb.io" denied the request: '
            "data.forbidden is not allowed" in refused.stderr
        )
        await asyncio.to_thread(
            kubectl.run,
            "delete",
            "validatingwebhookconfiguration",
            "validating-webhook-configuration",
        )
