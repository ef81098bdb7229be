"""``config/webhook/`` and ``config/certmanager/`` for an operator with admission webhooks, as
kubebuilder lays them out.

- ``webhook/manifests.yaml``: the Mutating/ValidatingWebhookConfiguration built from the
  operator's handlers (:func:`setpoint.webhook.configurations.webhook_configurations`), calling
  ``webhook-service`` in the operator's namespace; ``webhook/service.yaml``: that Service, port
  443 to the manager's 9443.
- ``certmanager/``: a self-signed ``Issuer`` and the ``serving-cert`` ``Certificate`` for the
  service's DNS names, stored in the Secret ``webhook-server-cert``; the configurations carry
  ``cert-manager.io/inject-ca-from`` so that cert-manager fills in their ``caBundle``.
- ``default/manager_webhook_patch.yaml``: mounts that Secret where the webhook server looks
  (``/tmp/k8s-webhook-server/serving-certs``) and opens port 9443.
- ``default/crd_conversion_<plural>.yaml``, for each kind with a conversion
  (``Operator.conversion``): patches its CRD with ``spec.conversion`` (``strategy: Webhook``,
  the webhook Service at ``/convert``) and ``cert-manager.io/inject-ca-from``, what
  kubebuilder's ``config/crd/patches`` do. It is a patch of ``config/default`` only, so that
  ``config/crd`` alone (``setpoint install``, tests) installs CRDs that need no webhook.

Names are written as ``config/default`` renders them (its ``namePrefix`` and namespace), so no
kustomize replacements are needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from setpoint.api.resources.custom_resource import CustomResource, default_plural
from setpoint.manager.operator import Operator
from setpoint.webhook.configurations import WebhookDeclaration, webhook_configurations
from setpoint.webhook.paths import CONVERT_PATH

WEBHOOK_PORT: Final = 9443
SERVICE: Final = "webhook-service"
CERTIFICATE: Final = "serving-cert"
SECRET: Final = "webhook-server-cert"
CERT_DIR: Final = "/tmp/k8s-webhook-server/serving-certs"
_IRREGULAR_PLURALS: Final = {"Endpoints": "endpoints"}


def webhook_declarations(operators: Sequence[Operator]) -> list[WebhookDeclaration]:
    """Every typed admission webhook of ``operators``."""
    return [webhook for operator in operators for webhook in operator.webhooks if webhook.kind]


def plural_of(declaration: WebhookDeclaration) -> str:
    """The resource (plural) the declaration's webhook rules name."""
    model = getattr(declaration.handler, "model", None)
    if isinstance(model, type) and issubclass(model, CustomResource) and model.__resource__:
        return model.__resource__.plural
    return _IRREGULAR_PLURALS.get(declaration.kind, default_plural(declaration.kind))


def webhook_files(
    declarations: Sequence[WebhookDeclaration],
    name: str,
    namespace: str,
    dump: Any,
    kustomization: Any,
) -> dict[str, str]:
    """The files, by path under ``config/``."""
    plurals = {(d.api_version, d.kind): plural_of(d) for d in declarations}
    service_name = f"{name}-{SERVICE}"

    def client_config(path: str) -> dict[str, Any]:
        return {"service": {"name": SERVICE, "namespace": namespace, "path": path}}

    configurations = webhook_configurations(
        "webhook", declarations, lambda v, k: plurals[(v, k)], client_config
    )
    for configuration in configurations:
        configuration["metadata"]["annotations"] = {
            "cert-manager.io/inject-ca-from": f"{namespace}/{name}-{CERTIFICATE}"
        }
    files: dict[str, str] = {}
    if configurations:
        files["webhook/manifests.yaml"] = dump(*configurations)
    files["webhook/service.yaml"] = dump(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": SERVICE, "namespace": "system"},
            "spec": {
                "ports": [{"port": 443, "protocol": "TCP", "targetPort": WEBHOOK_PORT}],
                "selector": {"control-plane": "controller-manager"},
            },
        }
    )
    resources = ["manifests.yaml", "service.yaml"] if configurations else ["service.yaml"]
    files["webhook/kustomization.yaml"] = dump(kustomization(resources))
    files["certmanager/issuer.yaml"] = dump(
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": {"name": "selfsigned-issuer", "namespace": "system"},
            "spec": {"selfSigned": {}},
        }
    )
    files["certmanager/certificate.yaml"] = dump(
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": CERTIFICATE, "namespace": "system"},
            "spec": {
                "dnsNames": [
                    f"{service_name}.{namespace}.svc",
                    f"{service_name}.{namespace}.svc.cluster.local",
                ],
                "issuerRef": {"kind": "Issuer", "name": f"{name}-selfsigned-issuer"},
                "secretName": SECRET,
            },
        }
    )
    files["certmanager/kustomization.yaml"] = dump(
        kustomization(["issuer.yaml", "certificate.yaml"])
    )
    files["default/manager_webhook_patch.yaml"] = dump(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "controller-manager", "namespace": "system"},
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "manager",
                                "ports": [
                                    {
                                        "name": "webhook-server",
                                        "containerPort": WEBHOOK_PORT,
                                        "protocol": "TCP",
                                    }
                                ],
                                "volumeMounts": [
                                    {"name": "cert", "mountPath": CERT_DIR, "readOnly": True}
                                ],
                            }
                        ],
                        "volumes": [{"name": "cert", "secret": {"secretName": SECRET}}],
                    }
                }
            },
        }
    )
    return files


def converted_crds(operators: Sequence[Operator]) -> list[str]:
    """The names of the CRDs whose versions the operators convert (``Operator.conversion``)."""
    return sorted(
        {
            hub.declaration().crd_name
            for operator in operators
            for hub, _ in operator.conversions
            if isinstance(hub, type) and issubclass(hub, CustomResource)
        }
    )


def conversion_patches(crds: Sequence[str], name: str, namespace: str, dump: Any) -> dict[str, str]:
    """``default/crd_conversion_<plural>.yaml`` for each CRD in ``crds``."""
    files: dict[str, str] = {}
    for crd in crds:
        files[f"default/crd_conversion_{crd.partition('.')[0]}.yaml"] = dump(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {
                    "name": crd,
                    "annotations": {
                        "cert-manager.io/inject-ca-from": f"{namespace}/{name}-{CERTIFICATE}"
                    },
                },
                "spec": {
                    "conversion": {
                        "strategy": "Webhook",
                        "webhook": {
                            "clientConfig": {
                                # Rendered names: kustomize's name prefix does not
                                # reach this field of a CRD.
                                "service": {
                                    "name": f"{name}-{SERVICE}",
                                    "namespace": namespace,
                                    "path": CONVERT_PATH,
                                }
                            },
                            "conversionReviewVersions": ["v1"],
                        },
                    }
                },
            }
        )
    return files
