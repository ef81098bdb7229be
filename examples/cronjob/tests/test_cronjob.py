"""The CronJob operator against the local cluster: its webhooks called by the API server for
the real kubectl, and its controller creating Jobs on schedule (on a fake clock)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from cronjob_operator.api.v1.cronjob import CronJob
from cronjob_operator.api.v2.cronjob import CronJob as CronJobV2
from cronjob_operator.controllers.cronjob import SCHEDULED_TIME_ANNOTATION
from cronjob_operator.operator import op
from cronjob_operator.schedule import TooManyMissedRuns, next_schedule

from setpoint import Client, kinds
from setpoint.api.times import format_time
from setpoint.client import Invalid
from setpoint.testing import FakeClock, install_crds, run_operator, wait_for

GROUP = "batch.tutorial.kubebuilder.io"
#: Generous bounds: the machine running the tests may be loaded.
TIMEOUT = 30.0


def cronjob(namespace: str, name: str = "hello", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedule": "*/1 * * * *",
            "jobTemplate": {
                "metadata": {"labels": {"app": "hello"}},
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "hello", "image": "busybox"}],
                            "restartPolicy": "OnFailure",
                        }
                    }
                },
            },
            **spec,
        },
    }


async def kubectl(kubeconfig: str, cache: Path, *args: str, stdin: str = "") -> tuple[int, str]:
    """The real kubectl, without blocking this loop (the operator's webhooks serve on it)."""
    process = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache), *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(process.communicate(stdin.encode()), 60)
    return int(process.returncode or 0), output.decode()


@pytest.fixture
async def webhooks(client: Client, kubeconfig: str, namespace: str) -> AsyncIterator[None]:
    """The operator with its webhooks registered against the session cluster."""
    await install_crds(client, _crd())
    async with run_operator(
        op, kubeconfig=kubeconfig, namespace=namespace, webhook_port=0, webhooks_local=True
    ):
        yield


def _crd() -> dict[str, Any]:
    from setpoint.api.resources import crd_manifest

    return crd_manifest(CronJob, CronJobV2)


async def test_kubectl_apply_of_an_invalid_cronjob_is_denied_with_the_handlers_message(
    webhooks: None, kubeconfig: str, namespace: str, tmp_path: Path, client: Client
) -> None:
    bad = cronjob(namespace, schedule="*/1 * * *")
    code, output = await kubectl(
        kubeconfig, tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump(bad)
    )
    # The handler's causes, as kubectl prints a 422 that has them.
    assert (code, output.strip()) == (
        1,
        'The CronJob "hello" is invalid: spec.schedule: Invalid value: "*/1 * * *": '
        "expected exactly 5 fields, found 4: [*/1 * * *]",
    )
    with pytest.raises(Invalid) as refused:
        await client.create(cronjob(namespace, "x" * 53))
    assert refused.value.status["message"] == (
        f'admission webhook "vcronjob-v1.kb.io" denied the request: CronJob.{GROUP} "{"x" * 53}" '
        f'is invalid: metadata.name: Invalid value: "{"x" * 53}": must be no more than 52 '
        "characters"
    )
    assert refused.value.status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": f'Invalid value: "{"x" * 53}": must be no more than 52 characters',
            "field": "metadata.name",
        }
    ]


async def test_kubectl_apply_of_a_cronjob_shows_the_defaults(
    webhooks: None, kubeconfig: str, namespace: str, tmp_path: Path, client: Client
) -> None:
    code, output = await kubectl(
        kubeconfig, tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump(cronjob(namespace))
    )
    assert code == 0, output
    assert output.strip() == f"cronjob.{GROUP}/hello created"
    stored = await client.get(f"{GROUP}/v1", "CronJob", "hello", namespace=namespace)
    spec = stored["spec"]
    assert spec["concurrencyPolicy"] == "Allow"
    assert spec["suspend"] is False
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)


async def test_jobs_are_created_at_the_scheduled_times_and_reported_in_status(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    await install_crds(client, _crd())
    created = await client.create(cronjob(namespace))
    start = datetime.fromisoformat(created["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    clock = FakeClock(start + timedelta(seconds=1))
    first_run = start.replace(second=0) + timedelta(minutes=1)
    async with run_operator(
        op, kubeconfig=kubeconfig, namespace=namespace, clock=clock, webhook_port=-1
    ):

        async def status() -> dict[str, Any]:
            obj = await client.get(f"{GROUP}/v1", "CronJob", "hello", namespace=namespace)
            return obj.get("status") or {}

        ready = await wait_for(status, lambda s: bool(s.get("conditions")), timeout=TIMEOUT)
        (condition,) = ready["conditions"]
        assert (condition["type"], condition["status"], condition["reason"]) == (
            "Ready", "True", "Scheduled",
        )  # fmt: skip
        assert condition["message"] == f"next run at {format_time(first_run)}"
        assert list(await client.list(*kinds.Job, namespace=namespace)) == []

        clock.set(first_run + timedelta(seconds=5))
        name = f"hello-{int(first_run.timestamp())}"
        job = await wait_for(
            lambda: client.get(*kinds.Job, name, namespace=namespace), timeout=TIMEOUT
        )
        assert job["metadata"]["annotations"][SCHEDULED_TIME_ANNOTATION] == format_time(first_run)
        assert job["metadata"]["labels"]["app"] == "hello"
        (owner,) = job["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJob", "hello", True)
        reported = await wait_for(status, lambda s: bool(s.get("active")), timeout=TIMEOUT)
        assert [ref["name"] for ref in reported["active"]] == [name]
        assert reported["lastScheduleTime"] == format_time(first_run)

        # Suspended: no more runs, and the condition says so.
        await client.patch(created, {"spec": {"suspend": True}})
        suspended = await wait_for(
            status, lambda s: s["conditions"][0]["reason"] == "Suspended", timeout=TIMEOUT
        )
        assert suspended["conditions"][0]["status"] == "False"


def test_the_run_due_is_the_latest_one_missed_and_the_next_follows_it() -> None:
    now = datetime(2026, 1, 15, 10, 7, 30, tzinfo=UTC)
    missed, following = next_schedule(
        "*/5 * * * *", earliest=datetime(2026, 1, 15, 9, 58, tzinfo=UTC), now=now
    )
    assert missed == datetime(2026, 1, 15, 10, 5, tzinfo=UTC)
    assert following == datetime(2026, 1, 15, 10, 10, tzinfo=UTC)


def test_nothing_is_due_before_the_first_run() -> None:
    now = datetime(2026, 1, 15, 10, 7, 30, tzinfo=UTC)
    missed, following = next_schedule("0 * * * *", earliest=now - timedelta(minutes=1), now=now)
    assert (missed, following) == (None, datetime(2026, 1, 15, 11, 0, tzinfo=UTC))


def test_a_starting_deadline_drops_runs_older_than_it() -> None:
    now = datetime(2026, 1, 15, 10, 7, 30, tzinfo=UTC)
    earliest = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)
    missed, _ = next_schedule("5 * * * *", earliest=earliest, now=now)
    assert missed == datetime(2026, 1, 15, 10, 5, tzinfo=UTC)
    missed, _ = next_schedule("5 * * * *", earliest=earliest, now=now, starting_deadline_seconds=60)
    assert missed is None


def test_more_than_100_missed_runs_is_an_error() -> None:
    now = datetime(2026, 1, 15, 10, 0, tzinfo=UTC)
    with pytest.raises(TooManyMissedRuns, match=r"Too many missed start times \(> 100\)"):
        next_schedule("* * * * *", earliest=now - timedelta(hours=2), now=now)


@pytest.mark.parametrize("policy", ["Forbid", "Replace", "Allow"])
async def test_concurrency_policy_decides_what_happens_to_a_run_while_a_job_is_active(
    client: Client, kubeconfig: str, namespace: str, policy: str
) -> None:
    # The Job's container has no command: it runs until deleted, so the first Job stays active.
    await install_crds(client, _crd())
    created = await client.create(cronjob(namespace, concurrencyPolicy=policy))
    start = datetime.fromisoformat(created["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    first_run = start.replace(second=0) + timedelta(minutes=1)
    second_run = first_run + timedelta(minutes=1)
    clock = FakeClock(first_run + timedelta(seconds=5))
    first, second = (f"hello-{int(run.timestamp())}" for run in (first_run, second_run))

    async def jobs() -> dict[str, dict[str, Any]]:
        listed = await client.list(*kinds.Job, namespace=namespace)
        return {job["metadata"]["name"]: job for job in listed}

    async def next_run_is(moment: datetime) -> bool:
        obj = await client.get(f"{GROUP}/v1", "CronJob", "hello", namespace=namespace)
        conditions = (obj.get("status") or {}).get("conditions") or [{}]
        return conditions[0].get("message") == f"next run at {format_time(moment)}"

    async with run_operator(
        op, kubeconfig=kubeconfig, namespace=namespace, clock=clock, webhook_port=-1
    ):
        await wait_for(jobs, lambda found: first in found, timeout=TIMEOUT)
        await wait_for(
            lambda: client.get(f"{GROUP}/v1", "CronJob", "hello", namespace=namespace),
            lambda obj: bool((obj.get("status") or {}).get("active")),
            timeout=TIMEOUT,
        )
        clock.set(second_run + timedelta(seconds=5))
        # The reconcile at the second run has happened once the next run is the third.
        await wait_for(lambda: next_run_is(second_run + timedelta(minutes=1)), timeout=TIMEOUT)
        if policy == "Forbid":
            assert sorted(await jobs()) == [first]
        elif policy == "Replace":
            found = await wait_for(jobs, lambda found: second in found, timeout=TIMEOUT)
            replaced = found.get(first)
            assert replaced is None or replaced["metadata"].get("deletionTimestamp")
        else:
            found = await wait_for(jobs, lambda found: second in found, timeout=TIMEOUT)
            assert not found[first]["metadata"].get("deletionTimestamp")


async def test_finished_jobs_beyond_the_history_limit_are_deleted(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    await install_crds(client, _crd())
    body = cronjob(namespace, successfulJobsHistoryLimit=0)
    # A command that ends: the (simulated) container exits 0 after a second.
    containers = body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    containers[0]["args"] = ["/bin/sh", "-c", "date"]
    created = await client.create(body)
    start = datetime.fromisoformat(created["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    first_run = start.replace(second=0) + timedelta(minutes=1)
    name = f"hello-{int(first_run.timestamp())}"
    clock = FakeClock(first_run + timedelta(seconds=5))

    async def job() -> dict[str, Any] | None:
        found = {
            j["metadata"]["name"]: j for j in await client.list(*kinds.Job, namespace=namespace)
        }
        return found.get(name)

    async with run_operator(
        op, kubeconfig=kubeconfig, namespace=namespace, clock=clock, webhook_port=-1
    ):
        await wait_for(job, timeout=TIMEOUT)
        # Complete, then deleted: no successful Job is kept.
        await wait_for(lambda: _gone_or_deleting(job), timeout=TIMEOUT, what=f"Job {name} deleted")
        status = (await client.get(f"{GROUP}/v1", "CronJob", "hello", namespace=namespace))[
            "status"
        ]
        assert status["lastScheduleTime"] == format_time(first_run)


async def _gone_or_deleting(probe: Any) -> bool:
    found = await probe()
    return found is None or bool(found["metadata"].get("deletionTimestamp"))
