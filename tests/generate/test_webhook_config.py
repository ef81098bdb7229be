"""``setpoint generate`` of an operator with webhooks: kubebuilder's config/webhook and the
cert-manager overlay, wired into config/default (rendered with the real ``kubectl kustomize``)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

import setpoint
from setpoint.generate.project import GenerateOptions, project_files
from setpoint.webhook import Denied
from tests.webhook.models import Widget

op = setpoint.Operator("widgets")


@op.defaulter(Widget)
def default_widget(widget: Widget) -> None:
    widget.spec.mode = widget.spec.mode or "fast"


@op.validator(Widget)
class WidgetValidator:
    def validate_create(self, widget: Widget) -> None:
        if (widget.spec.size or 0) > 10:
            raise Denied("too big")

    def validate_delete(self, widget: Widget) -> None:
        return None


def test_an_operator_without_webhooks_gets_no_webhook_files() -> None:
    files = project_files([setpoint.Operator("plain")], [], GenerateOptions(target="x"))
    assert not [path for path in files if path.startswith(("webhook/", "certmanager/"))]


def test_the_rendered_default_config_calls_the_webhook_service_with_an_injected_ca(
    tmp_path: Path,
) -> None:
    files = project_files([op], [Widget], GenerateOptions(target="widgets.operator"))
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(tmp_path / "default")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    objects = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(rendered) if o}
    mutating = objects[
        ("MutatingWebhookConfiguration", "widgets-webhook-mutating-webhook-configuration")
    ]
    validating = objects[
        ("ValidatingWebhookConfiguration", "widgets-webhook-validating-webhook-configuration")
    ]
    [defaulter] = mutating["webhooks"]
    assert defaulter["name"] == "mwidget-v1.kb.io"
    assert defaulter["clientConfig"]["service"] == {
        "name": "widgets-webhook-service",
        "namespace": "widgets-system",
        "path": "/mutate-example-com-v1-widget",
    }
    assert defaulter["rules"] == [
        {
            "apiGroups": ["example.com"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["widgets"],
        }
    ]
    assert defaulter["sideEffects"] == "None"
    assert defaulter["admissionReviewVersions"] == ["v1"]
    assert defaulter["failurePolicy"] == "Fail"
    [validator] = validating["webhooks"]
    assert validator["rules"][0]["operations"] == ["CREATE", "DELETE"]
    for configuration in (mutating, validating):
        assert configuration["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": "widgets-system/widgets-serving-cert"
        }
    service = objects[("Service", "widgets-webhook-service")]
    assert service["metadata"]["namespace"] == "widgets-system"
    assert service["spec"]["ports"][0]["targetPort"] == 9443
    certificate = objects[("Certificate", "widgets-serving-cert")]
    assert certificate["spec"]["dnsNames"][0] == "widgets-webhook-service.widgets-system.svc"
    assert certificate["spec"]["issuerRef"]["name"] == "widgets-selfsigned-issuer"
    assert ("Issuer", "widgets-selfsigned-issuer") in objects
    deployment = objects[("Deployment", "widgets-controller-manager")]
    pod = deployment["spec"]["template"]["spec"]
    [manager] = pod["containers"]
    assert {"name": "webhook-server", "containerPort": 9443, "protocol": "TCP"} in manager["ports"]
    assert manager["volumeMounts"] == [
        {"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs", "readOnly": True}
    ]
    assert pod["volumes"] == [{"name": "cert", "secret": {"secretName": "webhook-server-cert"}}]


def _render_enabled(template: str, release: str, namespace: str) -> list[dict[str, Any]]:
    """The chart's webhook templates as Helm renders them with every value they test enabled
    (Helm is not installed here): only the few constructs these templates use."""
    fullname = f"{release}-widgets"
    labels = {"app.kubernetes.io/name": "widgets", "app.kubernetes.io/instance": release,
              "app.kubernetes.io/managed-by": "Helm"}  # fmt: skip
    lines = []
    for line in template.splitlines():
        stripped = line.strip()
        if stripped.startswith(("{{- if ", "{{- end }}")):
            continue
        if stripped.startswith('{{- include "operator.labels" . | nindent'):
            indent = int(stripped.split("nindent")[1].split()[0])
            lines += [" " * indent + f"{key}: {value}" for key, value in labels.items()]
            continue
        line = line.replace('{{ include "operator.fullname" . }}', fullname)
        lines.append(line.replace("{{ .Release.Namespace }}", namespace))
    text = "\n".join(lines)
    assert "{{" not in text, text
    return [doc for doc in yaml.safe_load_all(text) if doc]


def test_the_helm_chart_has_the_webhook_service_configurations_and_certificate() -> None:
    files = project_files([op], [Widget], GenerateOptions(target="widgets.operator"))
    values = yaml.safe_load(files["chart/values.yaml"])
    assert values["webhook"] == {"enabled": True}
    assert values["certManager"] == {"enabled": True}
    rendered = _render_enabled(files["chart/templates/webhook.yaml"], "rel", "ops")
    objects = {(o["kind"], o["metadata"]["name"]): o for o in rendered}
    service = objects[("Service", "rel-widgets-webhook-service")]
    assert service["spec"]["ports"] == [{"port": 443, "protocol": "TCP", "targetPort": 9443}]
    kustomized = {
        doc["kind"]: doc for doc in yaml.safe_load_all(files["webhook/manifests.yaml"]) if doc
    }
    for kind, suffix in (
        ("MutatingWebhookConfiguration", "mutating"),
        ("ValidatingWebhookConfiguration", "validating"),
    ):
        configuration = objects[(kind, f"rel-widgets-{suffix}-webhook-configuration")]
        assert configuration["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": "ops/rel-widgets-serving-cert"
        }
        # The same webhooks as config/webhook, calling the release's Service.
        expected = kustomized[kind]["webhooks"]
        for webhook in expected:
            webhook["clientConfig"]["service"].update(name="rel-widgets-webhook-service",
                                                      namespace="ops")  # fmt: skip
        assert configuration["webhooks"] == expected
    certificates = _render_enabled(files["chart/templates/certmanager.yaml"], "rel", "ops")
    issuer, certificate = certificates
    assert issuer["kind"] == "Issuer" and certificate["kind"] == "Certificate"
    assert certificate["spec"] == {
        "dnsNames": ["rel-widgets-webhook-service.ops.svc",
                     "rel-widgets-webhook-service.ops.svc.cluster.local"],
        "issuerRef": {"kind": "Issuer", "name": "rel-widgets-selfsigned-issuer"},
        "secretName": "rel-widgets-webhook-server-cert",
    }  # fmt: skip
    deployment = files["chart/templates/deployment.yaml"]
    assert 'secretName: {{ include "operator.fullname" . }}-webhook-server-cert' in deployment
    assert "mountPath: /tmp/k8s-webhook-server/serving-certs" in deployment
    assert "- --webhook-port=-1" in deployment  # when webhook.enabled is false


def test_a_chart_without_webhooks_has_no_webhook_templates_or_values() -> None:
    files = project_files([setpoint.Operator("plain")], [], GenerateOptions(target="x"))
    assert "chart/templates/webhook.yaml" not in files
    assert "webhook" not in yaml.safe_load(files["chart/values.yaml"])
    assert "webhook" not in files["chart/templates/deployment.yaml"]


def _render_default(files: dict[str, str], root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(root / "default")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(rendered) if o}


def test_a_converted_kinds_crd_calls_the_webhook_service_in_config_default_only(
    tmp_path: Path,
) -> None:
    from tests.webhook.cronjob_versions import CronJobV1, CronJobV2

    converting = setpoint.Operator("cron")
    converting.conversion(CronJobV1, CronJobV2)
    files = project_files(
        [converting], [CronJobV1, CronJobV2], GenerateOptions(target="cron.operator")
    )
    # config/crd stays installable alone (setpoint install, tests): no webhook in it.
    (crd,) = [t for p, t in files.items() if p.startswith("crd/batch")]
    assert "conversion" not in yaml.safe_load(crd)["spec"]
    # A conversion-only operator has no admission configurations.
    assert "webhook/manifests.yaml" not in files
    objects = _render_default(files, tmp_path)
    rendered = objects[("CustomResourceDefinition", "cronjobs.batch.tutorial.kubebuilder.io")]
    assert rendered["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": "cron-system/cron-serving-cert"
    }
    assert rendered["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": "cron-webhook-service",
                    "namespace": "cron-system",
                    "path": "/convert",
                }
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    # ... which is the Service the configuration renders, with the certificate's DNS name.
    assert ("Service", "cron-webhook-service") in objects
    certificate = objects[("Certificate", "cron-serving-cert")]
    assert "cron-webhook-service.cron-system.svc" in certificate["spec"]["dnsNames"]


def test_the_helm_chart_templates_a_converted_crd_calling_the_release_s_service() -> None:
    """Helm never templates ``crds/``: a CRD whose versions the operator converts is a template,
    its ``spec.conversion`` calling the release's webhook Service with cert-manager's CA."""
    from tests.webhook.cronjob_versions import CronJobV1, CronJobV2

    converting = setpoint.Operator("cron")
    converting.conversion(CronJobV1, CronJobV2)
    files = project_files(
        [converting], [CronJobV1, CronJobV2], GenerateOptions(target="cron.operator")
    )
    assert not [path for path in files if path.startswith("chart/crds/batch.tutorial")]
    (crd,) = _render_enabled(files["chart/templates/crd_cronjobs.yaml"], "rel", "ops")
    assert crd["metadata"]["name"] == "cronjobs.batch.tutorial.kubebuilder.io"
    assert crd["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": "ops/rel-widgets-serving-cert"
    }
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v2", "v1"]
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": "rel-widgets-webhook-service",
                    "namespace": "ops",
                    "path": "/convert",
                }
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    # The Service and the certificate the conversion needs, without admission webhooks.
    services = _render_enabled(files["chart/templates/webhook.yaml"], "rel", "ops")
    assert [s["kind"] for s in services] == ["Service"]
    assert "chart/templates/certmanager.yaml" in files
    assert yaml.safe_load(files["chart/values.yaml"])["webhook"] == {"enabled": True}
