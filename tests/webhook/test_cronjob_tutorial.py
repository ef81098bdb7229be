"""kubebuilder's CronJob tutorial webhooks, ported, with the tutorial's own test scenarios
(``internal/webhook/v1/cronjob_webhook_test.go``): defaulting of ``concurrencyPolicy``,
``suspend`` and the history limits; validation of the name length and the schedule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

import setpoint
from setpoint.api.patch import apply_json_patch
from setpoint.api.resources import CustomResource
from setpoint.webhook import AdmissionRequest, Denied

GROUP = "batch.tutorial.kubebuilder.io"
#: validation.DNS1035LabelMaxLength - 11: the Job names the controller derives must fit.
MAX_NAME_LENGTH = 52


class CronJobSpec(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schedule: str = ""
    concurrency_policy: str | None = Field(default=None, alias="concurrencyPolicy")
    suspend: bool | None = None
    successful_jobs_history_limit: int | None = Field(
        default=None, alias="successfulJobsHistoryLimit"
    )
    failed_jobs_history_limit: int | None = Field(default=None, alias="failedJobsHistoryLimit")


class CronJob(CustomResource, group=GROUP, version="v1", kind="CronJob"):
    spec: CronJobSpec = Field(default_factory=CronJobSpec)


op = setpoint.Operator("project")


@op.defaulter(CronJob)
def default_cronjob(cronjob: CronJob) -> None:
    spec = cronjob.spec
    if spec.concurrency_policy is None:
        spec.concurrency_policy = "Allow"
    if spec.suspend is None:
        spec.suspend = False
    if spec.successful_jobs_history_limit is None:
        spec.successful_jobs_history_limit = 3
    if spec.failed_jobs_history_limit is None:
        spec.failed_jobs_history_limit = 1


def _invalid(cronjob: CronJob, field: str, value: str, detail: str) -> Denied:
    return Denied(
        f'CronJob.{GROUP} "{cronjob.metadata.name}" is invalid: {field}: Invalid value: '
        f'"{value}": {detail}',
        reason="Invalid",
        code=422,
    )


def _validate(cronjob: CronJob) -> None:
    name = cronjob.metadata.name or ""
    if len(name) > MAX_NAME_LENGTH:
        raise _invalid(cronjob, "metadata.name", name, "must be no more than 52 characters")
    fields = cronjob.spec.schedule.split()
    if len(fields) != 5:
        raise _invalid(
            cronjob,
            "spec.schedule",
            cronjob.spec.schedule,
            f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]",
        )


@op.validator(CronJob)
class CronJobValidator:
    def validate_create(self, cronjob: CronJob) -> None:
        _validate(cronjob)

    def validate_update(self, old: CronJob, new: CronJob) -> None:
        _validate(new)


DEFAULTER, VALIDATOR = (webhook.handler for webhook in op.webhooks)


def cronjob(name: str = "test-cronjob", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedule": "*/1 * * * *", **spec},
    }


def request(obj: dict[str, Any], old: dict[str, Any] | None = None) -> AdmissionRequest:
    return AdmissionRequest.from_review(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "operation": "UPDATE" if old else "CREATE",
                "object": obj,
                "oldObject": old,
            },
        }
    )


async def test_defaults_are_applied_when_fields_are_empty() -> None:
    sent = cronjob()
    answer = await DEFAULTER(request(sent))
    assert apply_json_patch(sent, answer.patch)["spec"] == {
        "schedule": "*/1 * * * *",
        "concurrencyPolicy": "Allow",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
    }


async def test_fields_already_set_are_not_overwritten() -> None:
    sent = cronjob(
        concurrencyPolicy="Forbid",
        suspend=True,
        successfulJobsHistoryLimit=5,
        failedJobsHistoryLimit=2,
    )
    answer = await DEFAULTER(request(sent))
    assert answer.patch == []


async def test_a_too_long_name_is_denied() -> None:
    name = "this-name-is-way-too-long-and-should-fail-validation-because-it-is-way-too-long"
    with pytest.raises(Denied) as denied:
        await VALIDATOR(request(cronjob(name)))
    assert denied.value.code == 422
    assert denied.value.message.endswith(
        "metadata.name: Invalid value: " + f'"{name}": must be no more than 52 characters'
    )


async def test_a_valid_name_is_admitted() -> None:
    answer = await VALIDATOR(request(cronjob("valid-name")))
    assert answer.allowed


@pytest.mark.parametrize("schedule", ["invalid-cron-schedule", "* * *"])
async def test_an_invalid_schedule_is_denied(schedule: str) -> None:
    with pytest.raises(Denied, match=r"spec\.schedule: Invalid value"):
        await VALIDATOR(request(cronjob(schedule=schedule)))


async def test_a_valid_schedule_is_admitted() -> None:
    answer = await VALIDATOR(request(cronjob(schedule="*/5 * * * *")))
    assert answer.allowed


async def test_updates_are_validated() -> None:
    old = cronjob()
    assert (await VALIDATOR(request(cronjob(schedule="0 0 * * *"), old))).allowed
    with pytest.raises(Denied, match="expected exactly 5 fields, found 1"):
        await VALIDATOR(request(cronjob(schedule="invalid"), old))
