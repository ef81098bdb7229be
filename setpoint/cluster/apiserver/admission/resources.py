"""The ``admissionregistration.k8s.io/v1`` resources the local API server serves.

Kept apart from the built-in table (:mod:`..registry.builtin_resources`): the server adds
them, with the behaviour that validates and defaults them, when it installs the admission
chain.
"""

from __future__ import annotations

from typing import Final

from setpoint.cluster.apiserver.registry.served_resources import ServedResource

GROUP: Final = "admissionregistration.k8s.io"
MUTATING_PLURAL: Final = "mutatingwebhookconfigurations"
VALIDATING_PLURAL: Final = "validatingwebhookconfigurations"
POLICY_PLURAL: Final = "validatingadmissionpolicies"
BINDING_PLURAL: Final = "validatingadmissionpolicybindings"
#: Resources of the group admission never sends to webhooks (upstream:
#: ``IsExemptAdmissionConfigurationResource``), whatever their version.
EXEMPT_PLURALS: Final = frozenset(
    {
        MUTATING_PLURAL,
        VALIDATING_PLURAL,
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
    }
)


def admission_resources() -> list[ServedResource]:
    """The webhook configuration kinds, as kube-apiserver 1.32 reports them in discovery."""
    return [
        ServedResource(
            GROUP,
            "v1",
            MUTATING_PLURAL,
            "MutatingWebhookConfiguration",
            False,
            "mutatingwebhookconfiguration",
            categories=("api-extensions",),
        ),
        ServedResource(
            GROUP,
            "v1",
            VALIDATING_PLURAL,
            "ValidatingWebhookConfiguration",
            False,
            "validatingwebhookconfiguration",
            categories=("api-extensions",),
        ),
        ServedResource(
            GROUP,
            "v1",
            POLICY_PLURAL,
            "ValidatingAdmissionPolicy",
            False,
            "validatingadmissionpolicy",
            categories=("api-extensions",),
            subresources=("status",),
            tracks_generation=True,
        ),
        ServedResource(
            GROUP,
            "v1",
            BINDING_PLURAL,
            "ValidatingAdmissionPolicyBinding",
            False,
            "validatingadmissionpolicybinding",
            categories=("api-extensions",),
        ),
    ]


def is_exempt(resource: ServedResource) -> bool:
    """Whether writes of ``resource`` never go to webhooks (the configuration kinds)."""
    return resource.group == GROUP and resource.plural in EXEMPT_PLURALS
