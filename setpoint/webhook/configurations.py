"""Webhook configurations derived from the handlers an operator registered.

What kubebuilder's markers produce (``config/webhook/manifests.yaml``), built from
:class:`WebhookDeclaration`: one ``MutatingWebhookConfiguration`` for the defaulters and one
``ValidatingWebhookConfiguration`` for the validators, each webhook named like kubebuilder's
(``m<kind>-<version>.kb.io``, ``v<kind>-<version>.kb.io``) with rules on the kind's resource,
``sideEffects: None``, ``admissionReviewVersions: [v1]`` and ``failurePolicy: Fail``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

ADMISSION_API_VERSION: Final = "admissionregistration.k8s.io/v1"


@dataclass(frozen=True)
class WebhookDeclaration:
    """An admission webhook an operator serves: path, kind, whether it mutates, operations."""

    path: str
    api_version: str
    kind: str
    mutating: bool
    handler: Any
    operations: tuple[str, ...] = ("CREATE", "UPDATE")


def webhook_configurations(
    name: str,
    declarations: Iterable[WebhookDeclaration],
    plural_of: Callable[[str, str], str],
    client_config: Callable[[str], dict[str, Any]],
    failure_policy: str = "Fail",
) -> list[dict[str, Any]]:
    """The configurations (mutating first; only kinds that have webhooks) named ``name-…``.

    ``plural_of(api_version, kind)`` gives the resource of a kind; ``client_config(path)`` the
    ``clientConfig`` of a path (a URL with a CA bundle, or a service reference).
    """
    webhooks: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for declaration in declarations:
        if not declaration.kind:
            continue  # a raw handler without a kind: its configuration is the user's
        group, _, version = declaration.api_version.rpartition("/")
        prefix = "m" if declaration.mutating else "v"
        webhooks[declaration.mutating].append(
            {
                "name": f"{prefix}{declaration.kind.lower()}-{version}.kb.io",
                "admissionReviewVersions": ["v1"],
                "clientConfig": client_config(declaration.path),
                "failurePolicy": failure_policy,
                "rules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": [version],
                        "operations": list(declaration.operations),
                        "resources": [plural_of(declaration.api_version, declaration.kind)],
                    }
                ],
                "sideEffects": "None",
            }
        )
    configurations = []
    for mutating, kind, suffix in (
        (True, "MutatingWebhookConfiguration", "mutating-webhook-configuration"),
        (False, "ValidatingWebhookConfiguration", "validating-webhook-configuration"),
    ):
        if webhooks[mutating]:
            configurations.append(
                {
                    "apiVersion": ADMISSION_API_VERSION,
                    "kind": kind,
                    "metadata": {"name": f"{name}-{suffix}"},
                    "webhooks": webhooks[mutating],
                }
            )
    return configurations
