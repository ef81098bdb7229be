"""Job and CronJob controllers synced on an in-memory store with a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from setpoint.api.clock import FakeClock
from setpoint.cluster.controllers.cronjob.controller import CronJobController
from setpoint.cluster.controllers.job.controller import JobController

from .fake_context import FakeContext

START = datetime(2026, 1, 1, 11, 59, 30, tzinfo=UTC)


def _job(name: str = "pi", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 6,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}},
            **spec,
        },
    }


def _finish_pods(ctx: FakeContext, phase: str) -> None:
    for (namespace, name), pod in list(ctx.objects["pods"].items()):
        if not (pod.get("status") or {}).get("phase"):
            ctx.set_pod_phase(name, phase, False, namespace)


async def _sync_jobs(ctx: FakeContext, jobs: JobController, rounds: int = 5) -> None:
    for _ in range(rounds):
        for job in ctx.list("batch/jobs"):
            await jobs.sync(job["metadata"]["namespace"], job["metadata"]["name"])


async def test_job_runs_to_complete_and_pods_lose_the_tracking_finalizer() -> None:
    ctx = FakeContext(FakeClock(START))
    jobs = JobController(ctx)
    await ctx.create("batch/jobs", _job(completions=2))
    await _sync_jobs(ctx, jobs)
    pods = ctx.list("pods")
    assert len(pods) == 1
    assert pods[0]["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert pods[0]["metadata"]["generateName"] == "pi-"
    _finish_pods(ctx, "Succeeded")
    await _sync_jobs(ctx, jobs)
    _finish_pods(ctx, "Succeeded")
    await _sync_jobs(ctx, jobs)
    job = ctx.get("batch/jobs", "default", "pi")
    assert job is not None
    status = job["status"]
    assert status["succeeded"] == 2
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert status["completionTime"] == "2026-01-01T11:59:30Z"
    assert status["uncountedTerminatedPods"] == {}
    assert all(not p["metadata"].get("finalizers") for p in ctx.list("pods"))
    reasons = [e[2] for e in ctx.events]
    assert reasons.count("SuccessfulCreate") == 2
    assert reasons[-1] == "Completed"


async def test_job_reaches_the_backoff_limit_after_waiting_out_the_backoff() -> None:
    clock = FakeClock(START)
    ctx = FakeContext(clock)
    jobs = JobController(ctx)
    await ctx.create("batch/jobs", _job(backoffLimit=1))
    await _sync_jobs(ctx, jobs)
    _finish_pods(ctx, "Failed")
    await _sync_jobs(ctx, jobs)
    assert len(ctx.list("pods")) == 1
    clock.advance(11)
    await _sync_jobs(ctx, jobs)
    assert len(ctx.list("pods")) == 2
    _finish_pods(ctx, "Failed")
    await _sync_jobs(ctx, jobs)
    job = ctx.get("batch/jobs", "default", "pi")
    assert job is not None
    assert job["status"]["failed"] == 2
    failed = job["status"]["conditions"][-1]
    assert (failed["type"], failed["reason"]) == ("Failed", "BackoffLimitExceeded")
    assert (
        "job-controller",
        "Warning",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    ) in ctx.events


async def test_finished_job_is_deleted_after_its_ttl() -> None:
    clock = FakeClock(START)
    ctx = FakeContext(clock)
    jobs = JobController(ctx)
    await ctx.create("batch/jobs", _job(ttlSecondsAfterFinished=30))
    await _sync_jobs(ctx, jobs)
    _finish_pods(ctx, "Succeeded")
    await _sync_jobs(ctx, jobs)
    assert await jobs.sync("default", "pi") == 30
    clock.advance(30)
    await jobs.sync("default", "pi")
    assert ctx.get("batch/jobs", "default", "pi") is None


def _cronjob(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "hello", "namespace": "default"},
        "spec": {
            "schedule": "*/1 * * * *",
            "concurrencyPolicy": "Allow",
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {"spec": _job()["spec"]},
            **spec,
        },
    }


def _complete(ctx: FakeContext) -> None:
    for job in ctx.objects["batch/jobs"].values():
        job["status"] = {
            "startTime": job["metadata"]["creationTimestamp"],
            "completionTime": job["metadata"]["creationTimestamp"],
            "conditions": [{"type": "Complete", "status": "True"}],
        }


async def test_cronjob_creates_jobs_on_schedule_and_keeps_history() -> None:
    clock = FakeClock(START)
    ctx = FakeContext(clock)
    cronjobs = CronJobController(ctx)
    await ctx.create("batch/cronjobs", _cronjob())
    delay = await cronjobs.sync("default", "hello")
    # On a manual clock (FakeClock) no 100 ms margin: timers fire exactly when due.
    assert delay is not None and abs(delay - 30.0) < 1e-6
    assert ctx.list("batch/jobs") == []
    clock.advance(30.1)
    await cronjobs.sync("default", "hello")
    jobs = ctx.list("batch/jobs")
    assert [j["metadata"]["name"] for j in jobs] == ["hello-29454480"]
    assert jobs[0]["metadata"]["annotations"] == {
        "batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-01-01T12:00:00Z"
    }
    cronjob = ctx.get("batch/cronjobs", "default", "hello")
    assert cronjob is not None
    assert cronjob["status"]["lastScheduleTime"] == "2026-01-01T12:00:00Z"
    assert [ref["name"] for ref in cronjob["status"]["active"]] == ["hello-29454480"]
    _complete(ctx)
    for _ in range(5):
        clock.advance(60)
        await cronjobs.sync("default", "hello")
        _complete(ctx)
        await cronjobs.sync("default", "hello")
    assert len(ctx.list("batch/jobs")) == 3
    cronjob = ctx.get("batch/cronjobs", "default", "hello")
    assert cronjob is not None
    assert "active" not in cronjob["status"]
    assert cronjob["status"]["lastSuccessfulTime"]
    messages = [e[3] for e in ctx.events]
    assert "Created job hello-29454480" in messages
    assert "Saw completed job: hello-29454480, condition: Complete" in messages
    assert "Deleted job hello-29454480" in messages


async def test_forbid_skips_while_a_job_runs_and_replace_deletes_it() -> None:
    clock = FakeClock(START)
    ctx = FakeContext(clock)
    cronjobs = CronJobController(ctx)
    await ctx.create("batch/cronjobs", _cronjob(concurrencyPolicy="Forbid"))
    clock.advance(31)
    await cronjobs.sync("default", "hello")
    clock.advance(60)
    await cronjobs.sync("default", "hello")
    assert len(ctx.list("batch/jobs")) == 1
    assert any(e[2] == "JobAlreadyActive" for e in ctx.events)
    cronjob = ctx.objects["batch/cronjobs"][("default", "hello")]
    cronjob["spec"]["concurrencyPolicy"] = "Replace"
    clock.advance(60)
    await cronjobs.sync("default", "hello")
    names = [j["metadata"]["name"] for j in ctx.list("batch/jobs")]
    assert names == ["hello-29454482"]


async def test_suspended_cronjob_and_bad_schedule_create_nothing() -> None:
    clock = FakeClock(START)
    ctx = FakeContext(clock)
    cronjobs = CronJobController(ctx)
    await ctx.create("batch/cronjobs", _cronjob(suspend=True))
    clock.advance(120)
    assert await cronjobs.sync("default", "hello") is None
    assert ctx.list("batch/jobs") == []


async def test_indexed_job_pods_carry_their_index() -> None:
    ctx = FakeContext(FakeClock(START))
    jobs = JobController(ctx)
    await ctx.create("batch/jobs", _job(completionMode="Indexed", completions=3, parallelism=3))
    await _sync_jobs(ctx, jobs)
    pods = sorted(ctx.list("pods"), key=lambda p: p["metadata"]["generateName"])
    assert [p["metadata"]["generateName"] for p in pods] == ["pi-0-", "pi-1-", "pi-2-"]
    first = pods[0]
    assert first["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert first["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert first["spec"]["hostname"] == "pi-0"
    assert first["spec"]["containers"][0]["env"] == [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                }
            },
        }
    ]
    _finish_pods(ctx, "Succeeded")
    await _sync_jobs(ctx, jobs)
    job = ctx.get("batch/jobs", "default", "pi")
    assert job is not None
    assert job["status"]["completedIndexes"] == "0-2"
    assert job["status"]["succeeded"] == 3
    assert [c["type"] for c in job["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
