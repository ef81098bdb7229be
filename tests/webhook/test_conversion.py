"""Conversion through the hub, answered as a ConversionReview (kubebuilder's multi-version
tutorial: ``schedule`` is a string in v1 and fields in v2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from setpoint.webhook import Converter, WebhookServer
from tests.webhook.cronjob_versions import GROUP, CronJobV1, CronJobV2
from tests.webhook.serving import serving, write_certificate

CONVERTER = Converter(CronJobV1, [CronJobV2])
METADATA = {"name": "c", "namespace": "default", "labels": {"l": "1"}, "uid": "u"}


def v1(schedule: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CronJob",
        "metadata": METADATA,
        "spec": {"schedule": schedule, "suspend": True},
    }


def conversion_review(desired: str, *objects: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "r1", "desiredAPIVersion": desired, "objects": list(objects)},
    }


def test_objects_convert_both_ways_keeping_order_and_metadata() -> None:
    answer = CONVERTER.review(conversion_review(f"{GROUP}/v2", v1("*/1 * * * *"), v1("0 3 * * 1")))
    response = answer["response"]
    assert response["uid"] == "r1"
    assert response["result"] == {"status": "Success"}
    first, second = response["convertedObjects"]
    assert first == {
        "apiVersion": f"{GROUP}/v2",
        "kind": "CronJob",
        "metadata": METADATA,
        "spec": {
            "schedule": {
                "minute": "*/1",
                "hour": "*",
                "dayOfMonth": "*",
                "month": "*",
                "dayOfWeek": "*",
            },
            "suspend": True,
        },
    }
    assert second["spec"]["schedule"]["dayOfWeek"] == "1"
    back = CONVERTER.review(conversion_review(f"{GROUP}/v1", first))["response"]
    assert back["convertedObjects"] == [v1("*/1 * * * *")]


def test_a_failed_conversion_answers_failure_with_the_message() -> None:
    answer = CONVERTER.review(
        conversion_review(f"{GROUP}/v2", {**v1("x"), "apiVersion": f"{GROUP}/v9"})
    )
    assert answer["response"]["result"]["status"] == "Failure"
    assert (
        "no model for apiVersion 'batch.tutorial.kubebuilder.io/v9'"
        in (answer["response"]["result"]["message"])
    )
    assert answer["response"]["convertedObjects"] == []


def test_spokes_must_convert_to_and_from_the_hub() -> None:
    with pytest.raises(TypeError, match="must define convert_to"):
        Converter(CronJobV2, [CronJobV1])


async def test_the_server_answers_convert_and_a_raising_function_is_a_failure(
    tmp_path: Path,
) -> None:
    certificate = write_certificate(tmp_path)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path)
    server.register_conversion("/convert", CONVERTER)
    async with serving(server, certificate) as caller:
        code, answer = await caller.post(
            "/convert", conversion_review(f"{GROUP}/v2", v1("0 1 * * *"))
        )
        assert code == 200
        assert answer["response"]["convertedObjects"][0]["spec"]["schedule"]["hour"] == "1"
        # convert_from raises ValueError on a 3-field schedule: a Failure, not a crash.
        code, answer = await caller.post("/convert", conversion_review(f"{GROUP}/v2", v1("* * *")))
        assert code == 200
        assert answer["response"]["result"] == {
            "status": "Failure",
            "message": "ValueError: spec.schedule '* * *' must have 5 fields",
        }
        code, _ = await caller.post("/convert", {"kind": "AdmissionReview"})
        assert code == 400
