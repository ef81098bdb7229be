"""The tutorial's webhook scenarios (``cronjob_webhook_test.go``) and the multi-version
tutorial's conversion, called as the API server calls them: AdmissionReviews to the defaulter
and validator, ConversionReviews to ``/convert`` over HTTPS."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cronjob_operator.api.v1.cronjob import CronJob as CronJobV1
from cronjob_operator.api.v2.cronjob import CronJob as CronJobV2
from cronjob_operator.operator import op

from setpoint.api.patch import apply_json_patch
from setpoint.webhook import AdmissionRequest, Converter, Denied, WebhookServer
from setpoint.webhook.local_registration import make_local_certificates
from setpoint.webhook.paths import CONVERT_PATH

GROUP = "batch.tutorial.kubebuilder.io"
DEFAULTER, VALIDATOR = (webhook.handler for webhook in op.webhooks)
TOO_LONG = "this-name-is-way-too-long-and-should-fail-validation-because-it-is-way-too-long"


def cronjob(name: str = "test-cronjob", version: str = "v1", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schedule": "*/1 * * * *",
        "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}},
        **spec,
    }
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default", "uid": "u-1", "labels": {"a": "b"}},
        "spec": body,
    }


def admission(obj: dict[str, Any], old: dict[str, Any] | None = None) -> AdmissionRequest:
    return AdmissionRequest.from_review(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "r-1",
                "operation": "UPDATE" if old else "CREATE",
                "object": obj,
                "oldObject": old,
            },
        }
    )


async def test_the_operator_serves_kubebuilders_paths() -> None:
    assert [(w.path, w.mutating, w.operations) for w in op.webhooks] == [
        ("/mutate-batch-tutorial-kubebuilder-io-v1-cronjob", True, ("CREATE", "UPDATE")),
        ("/validate-batch-tutorial-kubebuilder-io-v1-cronjob", False, ("CREATE", "UPDATE")),
    ]


async def test_defaults_are_set_when_the_fields_are_empty() -> None:
    sent = cronjob()
    answer = await DEFAULTER(admission(sent))
    assert answer.allowed
    assert sorted(op["path"] for op in answer.patch) == [
        "/spec/concurrencyPolicy",
        "/spec/failedJobsHistoryLimit",
        "/spec/successfulJobsHistoryLimit",
        "/spec/suspend",
    ]
    spec = apply_json_patch(sent, answer.patch)["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)


async def test_fields_already_set_are_not_overwritten() -> None:
    sent = cronjob(
        concurrencyPolicy="Forbid",
        suspend=True,
        successfulJobsHistoryLimit=5,
        failedJobsHistoryLimit=2,
    )
    assert (await DEFAULTER(admission(sent))).patch == []


async def test_a_name_longer_than_52_characters_is_denied() -> None:
    with pytest.raises(Denied) as denied:
        await VALIDATOR(admission(cronjob(TOO_LONG)))
    assert (denied.value.code, denied.value.reason) == (422, "Invalid")
    assert denied.value.message == (
        f'CronJob.{GROUP} "{TOO_LONG}" is invalid: metadata.name: Invalid value: '
        f'"{TOO_LONG}": must be no more than 52 characters'
    )


async def test_a_name_of_52_characters_is_admitted() -> None:
    assert (await VALIDATOR(admission(cronjob("a" * 52)))).allowed


async def test_an_invalid_schedule_is_denied_with_the_parsers_message() -> None:
    with pytest.raises(Denied) as denied:
        await VALIDATOR(admission(cronjob(schedule="*/1 * * *")))
    assert denied.value.message == (
        f'CronJob.{GROUP} "test-cronjob" is invalid: spec.schedule: Invalid value: '
        '"*/1 * * *": expected exactly 5 fields, found 4: [*/1 * * *]'
    )


async def test_an_update_to_an_invalid_schedule_is_denied() -> None:
    old = cronjob()
    with pytest.raises(Denied, match=r"spec\.schedule: Invalid value"):
        await VALIDATOR(admission(cronjob(schedule="61 * * * *"), old))


async def test_both_errors_are_reported_together() -> None:
    with pytest.raises(Denied) as denied:
        await VALIDATOR(admission(cronjob(TOO_LONG, schedule="@weekdays")))
    assert denied.value.message == (
        f'CronJob.{GROUP} "{TOO_LONG}" is invalid: [metadata.name: Invalid value: '
        f'"{TOO_LONG}": must be no more than 52 characters, spec.schedule: Invalid value: '
        '"@weekdays": unrecognized descriptor: @weekdays]'
    )


async def test_descriptors_and_every_are_valid_schedules() -> None:
    for schedule in ("@hourly", "@every 1h30m", "0 9 * * MON-FRI"):
        assert (await VALIDATOR(admission(cronjob(schedule=schedule)))).allowed


# -- conversion through /convert ------------------------------------------------------------


@pytest.fixture
async def convert(tmp_path: Path) -> AsyncIterator[Any]:
    """POST a ConversionReview to the operator's converter served over HTTPS at /convert."""
    ca = make_local_certificates(tmp_path)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path)
    server.register_conversion(CONVERT_PATH, Converter(CronJobV1, [CronJobV2]))
    await server.start()
    context = ssl.create_default_context(cadata=ca.decode())
    try:
        async with aiohttp.ClientSession() as session:

            async def post(desired: str, *objects: dict[str, Any]) -> dict[str, Any]:
                review = {
                    "apiVersion": "apiextensions.k8s.io/v1",
                    "kind": "ConversionReview",
                    "request": {
                        "uid": "c-1",
                        "desiredAPIVersion": f"{GROUP}/{desired}",
                        "objects": list(objects),
                    },
                }
                url = f"https://127.0.0.1:{server.port}{CONVERT_PATH}"
                async with session.post(url, json=review, ssl=context) as response:
                    assert response.status == 200
                    answer: dict[str, Any] = await response.json()
                    assert answer["response"]["uid"] == "c-1"
                    return answer["response"]

            yield post
    finally:
        await server.stop()


async def test_v1_converts_to_v2_with_the_schedule_as_fields(convert: Any) -> None:
    answer = await convert("v2", cronjob(schedule="*/1 0 * * 1-5"))
    assert answer["result"] == {"status": "Success"}
    (converted,) = answer["convertedObjects"]
    assert converted["apiVersion"] == f"{GROUP}/v2"
    assert converted["spec"]["schedule"] == {"minute": "*/1", "hour": "0", "dayOfWeek": "1-5"}
    assert converted["metadata"] == cronjob()["metadata"]
    assert converted["spec"]["jobTemplate"] == cronjob()["spec"]["jobTemplate"]


async def test_v2_converts_to_v1_with_absent_fields_as_stars(convert: Any) -> None:
    v2 = cronjob(version="v2", schedule={"minute": "30", "month": "6"}, suspend=True)
    answer = await convert("v1", v2)
    (converted,) = answer["convertedObjects"]
    assert converted["spec"]["schedule"] == "30 * * 6 *"
    assert converted["spec"]["suspend"] is True


async def test_a_round_trip_gives_back_the_same_objects_in_the_same_order(convert: Any) -> None:
    originals = [
        cronjob("first", schedule="*/5 * * * *", concurrencyPolicy="Forbid"),
        cronjob("second", schedule="0 0 1 1 *", successfulJobsHistoryLimit=0),
    ]
    there = await convert("v2", *originals)
    back = await convert("v1", *there["convertedObjects"])
    assert back["convertedObjects"] == originals


async def test_a_schedule_v2_cannot_hold_fails_the_conversion(convert: Any) -> None:
    answer = await convert("v2", cronjob(schedule="@hourly"))
    assert answer["convertedObjects"] == []
    assert answer["result"] == {
        "status": "Failure",
        "message": "ConversionFailed: invalid schedule: not a standard 5-field schedule",
    }
