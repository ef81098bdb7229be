"""The Helm chart's part for an operator with admission webhooks: what ``config/webhook`` and
``config/certmanager`` are for kustomize (:mod:`setpoint.generate.webhooks`), as templates.

- ``templates/webhook.yaml`` (``webhook.enabled``): the webhook Service (443 to the manager's
  9443) and the Mutating/ValidatingWebhookConfiguration calling it, with
  ``cert-manager.io/inject-ca-from`` when ``certManager.enabled``;
- ``templates/certmanager.yaml`` (both enabled): a self-signed Issuer and the Certificate for
  the Service's DNS names, stored in the Secret ``<release>-<name>-webhook-server-cert``.

The Deployment mounts that Secret where the webhook server looks and opens port 9443; with
``webhook.enabled: false`` it runs with ``--webhook-port=-1`` instead. Without cert-manager,
create the Secret (``tls.crt``, ``tls.key``) yourself and set each configuration's
``caBundle``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import yaml

from setpoint.generate.webhooks import CERT_DIR, WEBHOOK_PORT
from setpoint.webhook.configurations import WebhookDeclaration, webhook_configurations
from setpoint.webhook.paths import CONVERT_PATH

__all__ = [
    "DEPLOYMENT_ARGS",
    "DEPLOYMENT_PORTS",
    "DEPLOYMENT_VOLUMES",
    "chart_webhook_files",
    "converted_crd_template",
]

FULLNAME: Final = '{{ include "operator.fullname" . }}'
_NAME_TOKEN: Final = "SETPOINT-FULLNAME"
_NAMESPACE_TOKEN: Final = "SETPOINT-NAMESPACE"

#: Lines of the Deployment template (its container args, ports, mounts).
DEPLOYMENT_ARGS: Final = """
        {{- if not .Values.webhook.enabled }}
        - --webhook-port=-1
        {{- end }}"""
DEPLOYMENT_PORTS: Final = f"""
        {{{{- if .Values.webhook.enabled }}}}
        - name: webhook-server
          containerPort: {WEBHOOK_PORT}
          protocol: TCP
        {{{{- end }}}}"""
DEPLOYMENT_VOLUMES: Final = f"""
        {{{{- if .Values.webhook.enabled }}}}
        volumeMounts:
        - name: webhook-certs
          mountPath: {CERT_DIR}
          readOnly: true
        {{{{- end }}}}
      {{{{- if .Values.webhook.enabled }}}}
      volumes:
      - name: webhook-certs
        secret:
          secretName: {FULLNAME}-webhook-server-cert
      {{{{- end }}}}"""


def _templated(text: str) -> str:
    return text.replace(_NAME_TOKEN, FULLNAME).replace(_NAMESPACE_TOKEN, "{{ .Release.Namespace }}")


def converted_crd_template(crd: dict[str, Any]) -> str:
    """A CRD converted by the operator, as a template (Helm's ``crds/`` are never templated):
    with ``webhook.enabled`` its ``spec.conversion`` calls the release's webhook Service at
    ``/convert``, with the CA injected by cert-manager when ``certManager.enabled``."""

    def block(value: Any) -> str:
        dumped = yaml.safe_dump(value, sort_keys=False, default_flow_style=False, width=100)
        return "".join(f"  {line}\n" for line in dumped.splitlines())

    conversion = f"""  {{{{- if .Values.webhook.enabled }}}}
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          name: {_NAME_TOKEN}-webhook-service
          namespace: {_NAMESPACE_TOKEN}
          path: {CONVERT_PATH}
      conversionReviewVersions:
      - v1
  {{{{- end }}}}
"""
    metadata = dict(crd["metadata"])
    existing = metadata.pop("annotations", None) or {}
    inject = f"""    {{{{- if and .Values.webhook.enabled .Values.certManager.enabled }}}}
    cert-manager.io/inject-ca-from: {_NAMESPACE_TOKEN}/{_NAME_TOKEN}-serving-cert
    {{{{- end }}}}
"""
    if existing:
        annotations = (
            "  annotations:\n"
            + "".join(f"    {line}\n" for line in yaml.safe_dump(existing, width=100).splitlines())
            + inject
        )
    else:
        annotations = (
            "  {{- if and .Values.webhook.enabled .Values.certManager.enabled }}\n"
            "  annotations:\n"
            f"    cert-manager.io/inject-ca-from: {_NAMESPACE_TOKEN}/{_NAME_TOKEN}-serving-cert\n"
            "  {{- end }}\n"
        )
    spec = {key: value for key, value in crd["spec"].items() if key != "conversion"}
    text = (
        f"apiVersion: {crd['apiVersion']}\nkind: {crd['kind']}\n"
        + "metadata:\n"
        + block(metadata)
        + annotations
        + "spec:\n"
        + block(spec)
        + conversion
    )
    return _templated(text)


def chart_webhook_files(
    declarations: Sequence[WebhookDeclaration],
    plural_of: Callable[[str, str], str],
    *,
    serve: bool = False,
) -> dict[str, str]:
    """``templates/webhook.yaml`` and ``templates/certmanager.yaml`` (none without webhooks;
    ``serve``: the Service and certificate even without admission webhooks, for conversion)."""
    if not declarations and not serve:
        return {}

    def client_config(path: str) -> dict[str, Any]:
        service = {"name": f"{_NAME_TOKEN}-webhook-service", "namespace": _NAMESPACE_TOKEN}
        return {"service": {**service, "path": path}}

    documents = []
    for configuration in webhook_configurations(
        _NAME_TOKEN, declarations, plural_of, client_config
    ):
        webhooks = yaml.safe_dump(
            configuration["webhooks"], sort_keys=False, default_flow_style=False, width=100
        )
        documents.append(
            f"""apiVersion: {configuration["apiVersion"]}
kind: {configuration["kind"]}
metadata:
  name: {configuration["metadata"]["name"]}
  labels:
    {{{{- include "operator.labels" . | nindent 4 }}}}
  {{{{- if .Values.certManager.enabled }}}}
  annotations:
    cert-manager.io/inject-ca-from: {_NAMESPACE_TOKEN}/{_NAME_TOKEN}-serving-cert
  {{{{- end }}}}
webhooks:
{webhooks}"""
        )
    service = f"""apiVersion: v1
kind: Service
metadata:
  name: {_NAME_TOKEN}-webhook-service
  labels:
    {{{{- include "operator.labels" . | nindent 4 }}}}
spec:
  ports:
  - port: 443
    protocol: TCP
    targetPort: {WEBHOOK_PORT}
  selector:
    {{{{- include "operator.labels" . | nindent 4 }}}}
"""
    webhook = "{{- if .Values.webhook.enabled }}\n" + "---\n".join([service, *documents])
    certmanager = f"""{{{{- if and .Values.webhook.enabled .Values.certManager.enabled }}}}
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: {_NAME_TOKEN}-selfsigned-issuer
  labels:
    {{{{- include "operator.labels" . | nindent 4 }}}}
spec:
  selfSigned: {{}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {_NAME_TOKEN}-serving-cert
  labels:
    {{{{- include "operator.labels" . | nindent 4 }}}}
spec:
  dnsNames:
  - {_NAME_TOKEN}-webhook-service.{_NAMESPACE_TOKEN}.svc
  - {_NAME_TOKEN}-webhook-service.{_NAMESPACE_TOKEN}.svc.cluster.local
  issuerRef:
    kind: Issuer
    name: {_NAME_TOKEN}-selfsigned-issuer
  secretName: {_NAME_TOKEN}-webhook-server-cert
"""
    end = "{{- end }}\n"
    return {
        "templates/webhook.yaml": _templated(webhook + end),
        "templates/certmanager.yaml": _templated(certmanager + end),
    }
