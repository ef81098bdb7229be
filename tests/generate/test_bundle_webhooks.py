"""`setpoint generate bundle` of an operator with webhooks writes OLM's ``webhookdefinitions``,
and `setpoint check bundle` checks them as OLM would refuse them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import setpoint
from setpoint.generate.bundle import BundleOptions, bundle_files
from setpoint.generate.bundle_check import check_bundle
from setpoint.generate.project import GenerateOptions
from setpoint.webhook import Denied
from tests.webhook.cronjob_versions import CronJobV1, CronJobV2

GROUP = "batch.tutorial.kubebuilder.io"
op = setpoint.Operator("cron")


@op.reconciler(for_=CronJobV1)
async def reconcile(ctx: setpoint.Context, request: setpoint.Request) -> None:
    return None


@op.defaulter(CronJobV1)
def default(cronjob: CronJobV1) -> None:
    cronjob.spec.suspend = bool(cronjob.spec.suspend)


@op.validator(CronJobV1)
class Validator:
    def validate_create(self, cronjob: CronJobV1) -> None:
        if not cronjob.spec.schedule:
            raise Denied("no schedule")


op.conversion(CronJobV1, CronJobV2)


def _bundle(tmp_path: Path, operator: setpoint.Operator = op) -> Path:
    files = bundle_files(
        [operator], [CronJobV1, CronJobV2], GenerateOptions(target="cron.operator"), BundleOptions()
    )
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return tmp_path


def _csv_path(out: Path) -> Path:
    return out / "manifests" / "cron.clusterserviceversion.yaml"


def _csv(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(_csv_path(out).read_text())
    return loaded


def test_the_csv_defines_each_webhook_as_operator_sdk_does(tmp_path: Path) -> None:
    spec = _csv(_bundle(tmp_path))["spec"]
    rules = [
        {
            "apiGroups": [GROUP],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["cronjobs"],
        }
    ]
    common = {
        "deploymentName": "cron-controller-manager",
        "containerPort": 443,
        "targetPort": 9443,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    assert spec["webhookdefinitions"] == [
        {
            "type": "MutatingAdmissionWebhook",
            "generateName": "mcronjob-v1.kb.io",
            **common,
            "failurePolicy": "Fail",
            "rules": rules,
            "webhookPath": "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob",
        },
        {
            "type": "ValidatingAdmissionWebhook",
            "generateName": "vcronjob-v1.kb.io",
            **common,
            "failurePolicy": "Fail",
            "rules": [{**rules[0], "operations": ["CREATE"]}],
            "webhookPath": "/validate-batch-tutorial-kubebuilder-io-v1-cronjob",
        },
        {
            "type": "ConversionWebhook",
            "generateName": "ccronjob.kb.io",
            **common,
            "webhookPath": "/convert",
            "conversionCRDs": [f"cronjobs.{GROUP}"],
        },
    ]
    # A conversion webhook: OLM installs the operator in AllNamespaces mode only.
    assert [m["type"] for m in spec["installModes"] if m["supported"]] == ["AllNamespaces"]
    # Every version of the kind lists what its reconciler creates.
    assert all(entry["resources"] == [] for entry in spec["customresourcedefinitions"]["owned"])


def test_the_generated_definitions_pass_the_webhook_check(tmp_path: Path) -> None:
    results = {r.name: r for r in check_bundle(_bundle(tmp_path))}
    check = results["olm-webhook-definitions"]
    assert check.passed and check.suggestions == []


def test_a_bundle_without_webhooks_has_neither_definitions_nor_their_check(tmp_path: Path) -> None:
    plain = setpoint.Operator("cron")
    plain.reconciler(for_=CronJobV1)(reconcile)
    out = _bundle(tmp_path, plain)
    spec = _csv(out)["spec"]
    assert "webhookdefinitions" not in spec
    assert {"type": "OwnNamespace", "supported": True} in spec["installModes"]
    assert "olm-webhook-definitions" not in [r.name for r in check_bundle(out)]


@pytest.mark.parametrize(
    ("change", "suggestion"),
    [
        ({"type": "Webhook"}, "webhookdefinitions[0].type 'Webhook' must be one of "
         "ValidatingAdmissionWebhook, MutatingAdmissionWebhook, ConversionWebhook"),
        ({"generateName": "Bad_Name"}, "webhookdefinitions[0].generateName 'Bad_Name' must be a "
         "DNS subdomain (e.g. vfoo.kb.io)"),
        ({"generateName": "vcronjob-v1.kb.io"}, "webhookdefinitions[1].generateName "
         "'vcronjob-v1.kb.io' is used twice: make each unique"),
        ({"deploymentName": "other"}, "webhookdefinitions[0].deploymentName 'other' is not a "
         "deployment of the install strategy (cron-controller-manager)"),
        ({"targetPort": 70000}, "webhookdefinitions[0].targetPort 70000 must be a port, 1-65535"),
        ({"sideEffects": "Some"}, "webhookdefinitions[0].sideEffects must be None or NoneOnDryRun"),
        ({"admissionReviewVersions": ["v2"]}, "webhookdefinitions[0].admissionReviewVersions "
         "must include v1 (or v1beta1)"),
        ({"rules": []}, "webhookdefinitions[0]: an admission webhook needs rules (what it is "
         "called for)"),
        ({"webhookPath": "mutate"}, "webhookdefinitions[0].webhookPath must be the handler's "
         "path, starting with /"),
    ],
)  # fmt: skip
def test_a_definition_olm_would_refuse_is_named_with_what_to_do(
    tmp_path: Path, change: dict[str, Any], suggestion: str
) -> None:
    out = _bundle(tmp_path)
    csv = _csv(out)
    csv["spec"]["webhookdefinitions"][0].update(change)
    _csv_path(out).write_text(yaml.safe_dump(csv))
    (check,) = [r for r in check_bundle(out) if r.name == "olm-webhook-definitions"]
    assert (check.passed, check.suggestions) == (False, [suggestion])


def test_a_conversion_webhook_needs_owned_crds_and_all_namespaces_only(tmp_path: Path) -> None:
    out = _bundle(tmp_path)
    csv = _csv(out)
    conversion = csv["spec"]["webhookdefinitions"][2]
    conversion["conversionCRDs"] = ["widgets.example.com"]
    csv["spec"]["installModes"][0]["supported"] = True
    _csv_path(out).write_text(yaml.safe_dump(csv))
    (check,) = [r for r in check_bundle(out) if r.name == "olm-webhook-definitions"]
    assert check.suggestions == [
        "webhookdefinitions[2].conversionCRDs: widgets.example.com is not an owned CRD of the CSV",
        "a CSV with a ConversionWebhook must support only the AllNamespaces install mode "
        "(supported: AllNamespaces, OwnNamespace)",
    ]
