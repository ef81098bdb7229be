"""An OLM ``registry+v1`` bundle of the operator, for OperatorHub and the Operator Lifecycle
Manager.

Layout (what ``operator-sdk generate bundle`` writes)::

    manifests/<name>.clusterserviceversion.yaml   one ClusterServiceVersion
    manifests/<group>_<plural>.yaml                the owned CRDs
    metadata/annotations.yaml                      package, channels, media type
    tests/scorecard/config.yaml                    the scorecard's basic and olm suites

The CSV's install strategy is the generated Deployment with the generated RBAC (cluster rules
as ``clusterPermissions``, leader election as ``permissions``); every owned CRD lists the kinds
its reconciler owns as ``resources`` and has a spec and a status descriptor for every field of
its models; ``alm-examples`` are the generated samples. An operator with webhooks gets OLM's
``webhookdefinitions`` (:func:`webhook_definitions`); OLM then creates their Service,
certificate and configurations itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from setpoint.api.resources.custom_resource import CustomResource
from setpoint.api.resources.definition import crd_manifests, openapi_schema
from setpoint.generate.project import GenerateOptions, deployment_manifest
from setpoint.generate.rbac import leader_election_rules, role_rules
from setpoint.generate.samples import sample_object
from setpoint.manager.operator import Operator

__all__ = [
    "CAPABILITY_LEVELS",
    "BundleOptions",
    "bundle_files",
    "field_descriptors",
    "webhook_definitions",
]

CAPABILITY_LEVELS = (
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
)
SCORECARD_IMAGE = "quay.io/operator-framework/scorecard-test:v1.39.0"
SCORECARD_TESTS = (
    ("basic", "basic-check-spec"),
    ("olm", "olm-bundle-validation"),
    ("olm", "olm-crds-have-validation"),
    ("olm", "olm-crds-have-resources"),
    ("olm", "olm-spec-descriptors"),
    ("olm", "olm-status-descriptors"),
)


@dataclass(frozen=True)
class BundleOptions:
    """What a bundle needs beyond the manifests."""

    version: str = "0.1.0"
    channels: tuple[str, ...] = ("alpha",)
    capabilities: str = "Basic Install"
    provider: str = ""
    description: str = ""


def _words(name: str) -> str:
    spaced = "".join(f" {c}" if c.isupper() else c for c in name).replace("_", " ")
    return " ".join(word.capitalize() for word in spaced.split())


def field_descriptors(schema: dict[str, Any], prefix: str = "") -> list[dict[str, Any]]:
    """A descriptor per field of an object schema, nested fields as dotted paths."""
    descriptors: list[dict[str, Any]] = []
    for name, child in schema.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        descriptor = {"path": path, "displayName": _words(name)}
        if child.get("description"):
            descriptor["description"] = child["description"]
        descriptors.append(descriptor)
        if child.get("type") == "object" and "properties" in child:
            descriptors.extend(field_descriptors(child, path))
    return descriptors


def _owned_kinds(
    operators: Sequence[Operator], model: type[CustomResource]
) -> list[dict[str, str]]:
    declaration = model.declaration()
    resources: dict[tuple[str, str], dict[str, str]] = {}
    for operator in operators:
        for reconciler in operator.declarations:
            # Any version of the kind: one reconciler serves every version of a CRD.
            api_version, kind = reconciler.for_
            if (api_version.rpartition("/")[0], kind) != (declaration.group, declaration.kind):
                continue
            for api_version, kind in reconciler.owns:
                version = api_version.rpartition("/")[2]
                resources[(kind, version)] = {"kind": kind, "name": "", "version": version}
    return [resources[key] for key in sorted(resources)]


#: The webhook Service's port and the manager's (OLM creates the Service and the certificate).
WEBHOOK_SERVICE_PORT = 443
_WEBHOOK_TYPES = {
    "MutatingWebhookConfiguration": "MutatingAdmissionWebhook",
    "ValidatingWebhookConfiguration": "ValidatingAdmissionWebhook",
}


def webhook_definitions(operators: Sequence[Operator], deployment: str) -> list[dict[str, Any]]:
    """The CSV's ``webhookdefinitions``: what ``operator-sdk generate bundle`` writes for the
    operators' admission webhooks (as ``config/webhook``) and their conversion (``/convert``,
    one definition naming every converted CRD)."""
    from setpoint.generate.webhooks import WEBHOOK_PORT, plural_of, webhook_declarations
    from setpoint.webhook.configurations import webhook_configurations
    from setpoint.webhook.paths import CONVERT_PATH

    declarations = webhook_declarations(operators)
    plurals = {(d.api_version, d.kind): plural_of(d) for d in declarations}
    configurations = webhook_configurations(
        "bundle",
        declarations,
        lambda api_version, kind: plurals[(api_version, kind)],
        lambda path: {"service": {"path": path}},
    )
    definitions: list[dict[str, Any]] = []

    def common() -> dict[str, Any]:
        return {
            "deploymentName": deployment,
            "containerPort": WEBHOOK_SERVICE_PORT,
            "targetPort": WEBHOOK_PORT,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }

    for configuration in configurations:
        for webhook in configuration["webhooks"]:
            definitions.append(
                {
                    "type": _WEBHOOK_TYPES[configuration["kind"]],
                    "generateName": webhook["name"],
                    **common(),
                    "failurePolicy": webhook["failurePolicy"],
                    "rules": webhook["rules"],
                    "webhookPath": webhook["clientConfig"]["service"]["path"],
                }
            )
    kinds = {
        hub.declaration().crd_name: hub.declaration().kind
        for operator in operators
        for hub, _ in operator.conversions
        if isinstance(hub, type) and issubclass(hub, CustomResource)
    }
    converted = sorted(kinds)
    if converted:
        definitions.append(
            {
                "type": "ConversionWebhook",
                "generateName": f"c{kinds[converted[0]].lower()}.kb.io",
                **common(),
                "webhookPath": CONVERT_PATH,
                "conversionCRDs": converted,
            }
        )
    return definitions


def bundle_files(
    operators: Sequence[Operator],
    models: Sequence[type[CustomResource]],
    options: GenerateOptions,
    bundle: BundleOptions,
) -> dict[str, str]:
    """Every file of the bundle, by path relative to the bundle directory."""
    if not operators:
        raise ValueError("nothing to bundle: TARGET defines no operator")
    if bundle.capabilities not in CAPABILITY_LEVELS:
        raise ValueError(
            f"capabilities {bundle.capabilities!r} must be one of: {', '.join(CAPABILITY_LEVELS)}"
        )
    name = operators[0].name
    account = f"{name}-controller-manager"
    declarations = [d for operator in operators for d in operator.declarations]
    crds = crd_manifests(models)
    files: dict[str, str] = {}
    for crd in crds:
        spec = crd["spec"]
        files[f"manifests/{spec['group']}_{spec['names']['plural']}.yaml"] = _yaml(crd)

    owned = []
    for model in sorted(models, key=lambda m: (m.declaration().group, m.declaration().kind)):
        declaration = model.declaration()
        schema = openapi_schema(model)
        properties = schema.get("properties", {})
        owned.append(
            {
                "name": declaration.crd_name,
                "version": declaration.version,
                "kind": declaration.kind,
                "displayName": _words(declaration.kind),
                "description": (model.__doc__ or declaration.kind).strip().splitlines()[0],
                "resources": _owned_kinds(operators, model),
                "specDescriptors": field_descriptors(properties.get("spec", {})),
                "statusDescriptors": field_descriptors(properties.get("status", {})),
            }
        )
    webhooks = webhook_definitions(operators, f"{name}-controller-manager")
    # OLM installs an operator with a conversion webhook in AllNamespaces mode only: the CRD,
    # and so its conversion, is cluster-wide.
    converts = any(definition["type"] == "ConversionWebhook" for definition in webhooks)
    deployment = deployment_manifest(name, options)
    deployment_spec = deployment["spec"]
    deployment_spec["template"]["spec"]["serviceAccountName"] = account
    examples = [sample_object(model) for model in models]
    csv = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": f"{name}.v{bundle.version}",
            "namespace": "placeholder",
            "annotations": {
                "alm-examples": json.dumps(examples, indent=2, sort_keys=True),
                "capabilities": bundle.capabilities,
                "operators.operatorframework.io/builder": "setpoint",
                "operators.operatorframework.io/project_layout": "setpoint",
            },
        },
        "spec": {
            "displayName": _words(name.replace("-", " ").title().replace(" ", "")),
            "description": bundle.description or f"The {name} operator.",
            "version": bundle.version,
            "maturity": bundle.channels[0],
            "provider": {"name": bundle.provider or name},
            "keywords": [name],
            "minKubeVersion": "1.27.0",
            "installModes": [
                {"type": "OwnNamespace", "supported": not converts},
                {"type": "SingleNamespace", "supported": not converts},
                {"type": "MultiNamespace", "supported": False},
                {"type": "AllNamespaces", "supported": True},
            ],
            "install": {
                "strategy": "deployment",
                "spec": {
                    "clusterPermissions": [
                        {
                            "serviceAccountName": account,
                            "rules": [rule.as_manifest() for rule in role_rules(declarations)],
                        }
                    ],
                    "permissions": [
                        {
                            "serviceAccountName": account,
                            "rules": [rule.as_manifest() for rule in leader_election_rules()],
                        }
                    ],
                    "deployments": [
                        {
                            "name": f"{name}-controller-manager",
                            "label": {"control-plane": "controller-manager"},
                            "spec": deployment_spec,
                        }
                    ],
                },
            },
            "customresourcedefinitions": {"owned": owned},
            **({"webhookdefinitions": webhooks} if webhooks else {}),
        },
    }
    files[f"manifests/{name}.clusterserviceversion.yaml"] = _yaml(csv)
    files["metadata/annotations.yaml"] = _yaml(
        {
            "annotations": {
                "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
                "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
                "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
                "operators.operatorframework.io.bundle.package.v1": name,
                "operators.operatorframework.io.bundle.channels.v1": ",".join(bundle.channels),
                "operators.operatorframework.io.bundle.channel.default.v1": bundle.channels[0],
                "operators.operatorframework.io.test.config.v1": "tests/scorecard/",
                "operators.operatorframework.io.test.mediatype.v1": "scorecard+v1",
            }
        }
    )
    files["tests/scorecard/config.yaml"] = _yaml(
        {
            "apiVersion": "scorecard.operatorframework.io/v1alpha3",
            "kind": "Configuration",
            "metadata": {"name": "config"},
            "stages": [
                {
                    "parallel": True,
                    "tests": [
                        {
                            "entrypoint": ["scorecard-test", test],
                            "image": SCORECARD_IMAGE,
                            "labels": {"suite": suite, "test": f"{test}-test"},
                        }
                        for suite, test in SCORECARD_TESTS
                    ],
                }
            ],
        }
    )
    return dict(sorted(files.items()))


def _yaml(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=100)
