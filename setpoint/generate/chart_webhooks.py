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

__all__ = ["DEPLOYMENT_ARGS", "DEPLOYMENT_PORTS", "DEPLOYMENT_VOLUMES", "chart_webhook_files"]

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


def chart_webhook_files(
    declarations: Sequence[WebhookDeclaration], plural_of: Callable[[str, str], str]
) -> dict[str, str]:
    """``templates/webhook.yaml`` and ``templates/certmanager.yaml`` (none without webhooks)."""
    if not declarations:
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
