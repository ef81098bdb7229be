"""``setpoint check bundle``: operator-sdk scorecard's ``basic`` and ``olm`` checks and the
registry's rules, run locally on a bundle directory (no cluster, no container images).

Each check gives a pass or a fail with suggestions, as the scorecard reports them:

- registry: exactly one ClusterServiceVersion; ``metadata/annotations.yaml`` with the
  ``registry+v1`` media type, a package and at least one channel (the default among them);
  every owned CRD present in ``manifests/``;
- ``basic-check-spec``: every ``alm-examples`` object has a ``spec``;
- ``olm-bundle-validation``: the CSV has the fields OLM needs (install strategy with at least
  one deployment, install modes, version);
- ``olm-crds-have-validation``: every owned CRD version has an ``openAPIV3Schema`` with
  ``spec`` properties;
- ``olm-crds-have-resources``: every owned CRD lists the kinds it creates (``resources``);
- ``olm-spec-descriptors`` / ``olm-status-descriptors``: every ``spec`` field of the examples,
  and every ``status`` field of the CRD's schema, has a descriptor;
- ``olm-webhook-definitions`` (with ``webhookdefinitions``): each has a known ``type``, a
  unique ``generateName`` that is a DNS subdomain, a ``deploymentName`` of the install
  strategy, ports in 1-65535, ``sideEffects`` None or NoneOnDryRun and
  ``admissionReviewVersions`` with v1 or v1beta1; admission webhooks have ``rules`` and a
  ``webhookPath``; a ``ConversionWebhook`` names owned CRDs in ``conversionCRDs`` and the CSV
  supports only the AllNamespaces install mode (as OLM requires).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["CheckResult", "check_bundle"]

MEDIA_TYPE_KEY = "operators.operatorframework.io.bundle.mediatype.v1"
PACKAGE_KEY = "operators.operatorframework.io.bundle.package.v1"
CHANNELS_KEY = "operators.operatorframework.io.bundle.channels.v1"
DEFAULT_CHANNEL_KEY = "operators.operatorframework.io.bundle.channel.default.v1"


@dataclass
class CheckResult:
    """One check: its name, whether it passed, and what to do when it did not."""

    name: str
    passed: bool = True
    suggestions: list[str] = field(default_factory=list)

    def fail(self, suggestion: str) -> None:
        self.passed = False
        self.suggestions.append(suggestion)


def _documents(path: Path) -> list[dict[str, Any]]:
    try:
        return [doc for doc in yaml.safe_load_all(path.read_text()) if isinstance(doc, dict)]
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML: {error}") from None


def _paths(value: Any, prefix: str = "") -> set[str]:
    paths: set[str] = set()
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else key
            paths.add(path)
            paths |= _paths(child, path)
    return paths


def _schema_paths(schema: dict[str, Any], prefix: str = "") -> set[str]:
    paths: set[str] = set()
    for key, child in schema.get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key
        paths.add(path)
        paths |= _schema_paths(child, path)
    return paths


def check_bundle(directory: Path) -> list[CheckResult]:
    """Run every check on the bundle in ``directory``."""
    manifests = directory / "manifests"
    registry = CheckResult("registry")
    if not manifests.is_dir():
        registry.fail(f"{manifests} is missing: a bundle keeps its manifests there")
        return [registry]
    csvs: list[dict[str, Any]] = []
    crds: dict[str, dict[str, Any]] = {}
    for path in sorted(manifests.glob("*.y*ml")):
        for doc in _documents(path):
            if doc.get("kind") == "ClusterServiceVersion":
                csvs.append(doc)
            elif doc.get("kind") == "CustomResourceDefinition":
                crds[doc.get("metadata", {}).get("name", "")] = doc
    if len(csvs) != 1:
        registry.fail(f"manifests/ must hold exactly one ClusterServiceVersion, found {len(csvs)}")
    annotations_file = directory / "metadata" / "annotations.yaml"
    annotations: dict[str, Any] = {}
    if annotations_file.is_file():
        loaded = _documents(annotations_file)
        annotations = (loaded[0].get("annotations") or {}) if loaded else {}
    else:
        registry.fail("metadata/annotations.yaml is missing")
    if annotations.get(MEDIA_TYPE_KEY) != "registry+v1":
        registry.fail(f"set {MEDIA_TYPE_KEY}: registry+v1 in metadata/annotations.yaml")
    if not annotations.get(PACKAGE_KEY):
        registry.fail(f"set {PACKAGE_KEY} (the package name) in metadata/annotations.yaml")
    channels = [c for c in str(annotations.get(CHANNELS_KEY, "")).split(",") if c]
    if not channels:
        registry.fail(f"list at least one channel in {CHANNELS_KEY}")
    default = annotations.get(DEFAULT_CHANNEL_KEY)
    if default and default not in channels:
        registry.fail(f"the default channel {default!r} is not among the channels {channels}")
    if len(csvs) != 1:
        return [registry]
    csv = csvs[0]
    spec = csv.get("spec", {})
    owned = spec.get("customresourcedefinitions", {}).get("owned", []) or []
    for entry in owned:
        if entry.get("name") not in crds:
            registry.fail(f"owned CRD {entry.get('name')} is not in manifests/: add its manifest")

    results = [registry]
    try:
        examples = json.loads(
            csv.get("metadata", {}).get("annotations", {}).get("alm-examples", "[]")
        )
    except json.JSONDecodeError as error:
        examples = []
        registry.fail(f"alm-examples is not valid JSON: {error}")

    basic = CheckResult("basic-check-spec")
    if not examples:
        basic.fail("add an example of each owned CRD to the CSV's alm-examples annotation")
    for example in examples:
        if not example.get("spec"):
            basic.fail(f"the {example.get('kind')} example has no spec: give it one")
    results.append(basic)

    bundle = CheckResult("olm-bundle-validation")
    install = spec.get("install", {})
    if install.get("strategy") != "deployment" or not install.get("spec", {}).get("deployments"):
        bundle.fail("spec.install needs strategy: deployment with at least one deployment")
    if not spec.get("installModes"):
        bundle.fail("spec.installModes is empty: say which namespaces the operator supports")
    if not spec.get("version"):
        bundle.fail("spec.version is missing")
    results.append(bundle)

    validation = CheckResult("olm-crds-have-validation")
    resources = CheckResult("olm-crds-have-resources")
    spec_descriptors = CheckResult("olm-spec-descriptors")
    status_descriptors = CheckResult("olm-status-descriptors")
    for entry in owned:
        crd = crds.get(entry.get("name", ""))
        kind = entry.get("kind")
        if not entry.get("resources"):
            resources.fail(
                f"owned CRD {entry.get('name')} lists no resources: name the kinds its "
                "reconciler creates (owns=...)"
            )
        if crd is None:
            continue
        version = next(
            (v for v in crd["spec"].get("versions", []) if v.get("name") == entry.get("version")),
            None,
        )
        schema = ((version or {}).get("schema") or {}).get("openAPIV3Schema") or {}
        spec_schema = schema.get("properties", {}).get("spec", {})
        if not spec_schema.get("properties"):
            validation.fail(f"{entry.get('name')} {entry.get('version')}: describe spec's fields")
        declared_spec = {d.get("path") for d in entry.get("specDescriptors", []) or []}
        for example in examples:
            if example.get("kind") != kind:
                continue
            for field_path in sorted(_paths(example.get("spec", {})) - declared_spec):
                spec_descriptors.fail(f"{kind}: add a specDescriptor for spec.{field_path}")
        declared_status = {d.get("path") for d in entry.get("statusDescriptors", []) or []}
        status_schema = schema.get("properties", {}).get("status", {})
        for field_path in sorted(_schema_paths(status_schema) - declared_status):
            status_descriptors.fail(f"{kind}: add a statusDescriptor for status.{field_path}")
    results += [validation, resources, spec_descriptors, status_descriptors]
    if spec.get("webhookdefinitions"):
        results.append(_check_webhooks(spec, {entry.get("name") for entry in owned}))
    return results


_WEBHOOK_TYPES = ("ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _port_problem(value: Any) -> bool:
    if isinstance(value, str):
        return not value
    return not (isinstance(value, int) and 1 <= value <= 65535)


def _check_webhooks(spec: dict[str, Any], owned: set[Any]) -> CheckResult:
    """``olm-webhook-definitions``: what OLM needs to install each webhook."""
    check = CheckResult("olm-webhook-definitions")
    install = spec.get("install", {}).get("spec", {})
    deployments = {d.get("name") for d in install.get("deployments", []) or []}
    names: set[str] = set()
    for index, webhook in enumerate(spec.get("webhookdefinitions") or []):
        label = f"webhookdefinitions[{index}]"
        kind = webhook.get("type")
        if kind not in _WEBHOOK_TYPES:
            check.fail(f"{label}.type {kind!r} must be one of {', '.join(_WEBHOOK_TYPES)}")
        name = str(webhook.get("generateName") or "")
        if not name or len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
            check.fail(f"{label}.generateName {name!r} must be a DNS subdomain (e.g. vfoo.kb.io)")
        elif name in names:
            check.fail(f"{label}.generateName {name!r} is used twice: make each unique")
        names.add(name)
        if webhook.get("deploymentName") not in deployments:
            check.fail(
                f"{label}.deploymentName {webhook.get('deploymentName')!r} is not a deployment "
                f"of the install strategy ({', '.join(sorted(map(str, deployments)))})"
            )
        for port in ("containerPort", "targetPort"):
            if port in webhook and _port_problem(webhook[port]):
                check.fail(f"{label}.{port} {webhook[port]!r} must be a port, 1-65535")
        if webhook.get("sideEffects") not in ("None", "NoneOnDryRun"):
            check.fail(f"{label}.sideEffects must be None or NoneOnDryRun")
        versions = webhook.get("admissionReviewVersions") or []
        if not {"v1", "v1beta1"} & set(versions):
            check.fail(f"{label}.admissionReviewVersions must include v1 (or v1beta1)")
        if kind == "ConversionWebhook":
            crds = webhook.get("conversionCRDs") or []
            if not crds:
                check.fail(f"{label}: a ConversionWebhook lists the CRDs it converts in "
                           "conversionCRDs")  # fmt: skip
            for crd in crds:
                if crd not in owned:
                    check.fail(f"{label}.conversionCRDs: {crd} is not an owned CRD of the CSV")
            supported = {
                m.get("type") for m in spec.get("installModes") or [] if m.get("supported")
            }
            if supported != {"AllNamespaces"}:
                check.fail(
                    "a CSV with a ConversionWebhook must support only the AllNamespaces install "
                    f"mode (supported: {', '.join(sorted(map(str, supported))) or 'none'})"
                )
        elif kind in _WEBHOOK_TYPES:
            if not webhook.get("rules"):
                check.fail(f"{label}: an admission webhook needs rules (what it is called for)")
            if not str(webhook.get("webhookPath") or "").startswith("/"):
                check.fail(f"{label}.webhookPath must be the handler's path, starting with /")
    return check
