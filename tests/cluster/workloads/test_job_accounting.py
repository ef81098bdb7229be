"""Job planning: pods to create, finished pods counted once, success and failure conditions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from setpoint.api.times import format_time
from setpoint.cluster.controllers.job.job_accounting import JOB_TRACKING_FINALIZER, plan_job

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def _job(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "pi"}, "spec": {"parallelism": 1, "backoffLimit": 6, **spec}}


def _pod(uid: str, phase: str = "Running", finished_ago: float = 0, tracked: bool = True) -> dict:  # type: ignore[type-arg]
    status: dict[str, Any] = {"phase": phase}
    if phase in ("Succeeded", "Failed"):
        status["containerStatuses"] = [
            {
                "name": "c",
                "state": {
                    "terminated": {"finishedAt": format_time(NOW - timedelta(seconds=finished_ago))}
                },
            }
        ]
    metadata: dict[str, Any] = {
        "name": f"pi-{uid}",
        "uid": uid,
        "creationTimestamp": format_time(NOW),
    }
    if tracked:
        metadata["finalizers"] = [JOB_TRACKING_FINALIZER]
    return {"metadata": metadata, "status": status}


def test_a_new_job_starts_its_pods() -> None:
    plan = plan_job(_job(completions=5, parallelism=2), [], NOW)
    assert plan.create == 2
    assert plan.status["startTime"] == format_time(NOW)
    assert plan.status["active"] == 2
    assert plan.status["ready"] == 0
    assert plan.status["terminating"] == 0


def test_a_finished_pod_is_counted_once_through_uncounted_then_the_counter() -> None:
    job = _job(completions=2)
    job["status"] = {"startTime": format_time(NOW)}
    done = _pod("a", "Succeeded")
    plan = plan_job(job, [done], NOW)
    assert plan.status["uncountedTerminatedPods"] == {"succeeded": ["a"]}
    assert plan.remove_finalizer == [done]
    assert "succeeded" not in plan.status
    assert plan.create == 1
    job["status"] = plan.status
    released = _pod("a", "Succeeded", tracked=False)
    plan = plan_job(job, [released, _pod("b")], NOW)
    assert plan.status["uncountedTerminatedPods"] == {}
    assert plan.status["succeeded"] == 1
    assert plan.create == 0


def test_completion_adds_success_criteria_then_complete() -> None:
    job = _job(completions=1)
    job["status"] = {"startTime": format_time(NOW), "succeeded": 1, "uncountedTerminatedPods": {}}
    plan = plan_job(job, [_pod("a", "Succeeded", tracked=False)], NOW)
    types = [(c["type"], c["reason"], c["message"]) for c in plan.status["conditions"]]
    assert types == [
        ("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
        ("Complete", "CompletionsReached", "Reached expected number of succeeded pods"),
    ]
    assert plan.status["completionTime"] == format_time(NOW)
    assert plan.events == [("Normal", "Completed", "Job completed")]


def test_backoff_limit_exceeded_fails_the_job() -> None:
    job = _job(backoffLimit=0)
    job["status"] = {"startTime": format_time(NOW)}
    failed = _pod("a", "Failed")
    plan = plan_job(job, [failed], NOW)
    assert [c["type"] for c in plan.status["conditions"]] == ["FailureTarget"]
    assert plan.status["conditions"][0]["reason"] == "BackoffLimitExceeded"
    assert plan.create == 0
    job["status"] = plan.status
    plan = plan_job(job, [_pod("a", "Failed", tracked=False)], NOW)
    failed_condition = plan.status["conditions"][-1]
    assert (failed_condition["type"], failed_condition["reason"], failed_condition["message"]) == (
        "Failed",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    assert plan.status["failed"] == 1
    assert "completionTime" not in plan.status
    assert plan.events == [
        ("Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    ]


def test_a_failed_pod_is_replaced_after_the_backoff() -> None:
    job = _job(backoffLimit=3)
    job["status"] = {"startTime": format_time(NOW), "failed": 1, "uncountedTerminatedPods": {}}
    plan = plan_job(job, [_pod("a", "Failed", finished_ago=4, tracked=False)], NOW)
    assert plan.create == 0
    assert plan.requeue_after == 6
    plan = plan_job(job, [_pod("a", "Failed", finished_ago=11, tracked=False)], NOW)
    assert plan.create == 1


def test_active_deadline_fails_the_job_and_deletes_active_pods() -> None:
    job = _job(activeDeadlineSeconds=30)
    job["status"] = {"startTime": format_time(NOW - timedelta(seconds=10))}
    running = _pod("a")
    plan = plan_job(job, [running], NOW)
    assert plan.requeue_after == 20
    plan = plan_job(job, [running], NOW + timedelta(seconds=20))
    assert plan.status["conditions"][0]["reason"] == "DeadlineExceeded"
    assert (
        plan.status["conditions"][0]["message"] == "Job was active longer than specified deadline"
    )
    assert plan.delete == [running]


def test_suspend_and_resume() -> None:
    job = _job(suspend=True)
    plan = plan_job(job, [_pod("a")], NOW)
    assert [p["metadata"]["name"] for p in plan.delete] == ["pi-a"]
    assert plan.create == 0
    (condition,) = plan.status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Suspended",
        "True",
        "JobSuspended",
    )
    assert plan.events == [("Normal", "Suspended", "Job suspended")]
    assert "startTime" not in plan.status
    job["status"] = plan.status
    job["spec"]["suspend"] = False
    later = NOW + timedelta(seconds=60)
    plan = plan_job(job, [], later)
    (condition,) = plan.status["conditions"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "JobResumed",
        "Job resumed",
    )
    assert plan.status["startTime"] == format_time(later)
    assert plan.create == 1
    assert plan.events == [("Normal", "Resumed", "Job resumed")]


def test_indexes_round_trip() -> None:
    from setpoint.cluster.controllers.job.job_accounting import format_indexes, parse_indexes

    assert format_indexes({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert parse_indexes("0-2,5,7-8") == {0, 1, 2, 5, 7, 8}
    assert format_indexes(set()) == ""


def test_indexed_job_creates_the_missing_indexes_and_counts_each_once() -> None:
    job = _job(completionMode="Indexed", completions=4, parallelism=2)
    plan = plan_job(job, [], NOW)
    assert plan.create_indexes == [0, 1]
    done = _pod("a", "Succeeded")
    done["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": "0"}
    again = _pod("b", "Succeeded")
    again["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": "0"}
    running = _pod("c")
    running["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": "1"}
    job["status"] = {"startTime": format_time(NOW)}
    plan = plan_job(job, [done, again, running], NOW)
    assert plan.status["completedIndexes"] == "0"
    assert plan.status["succeeded"] == 1
    assert plan.create_indexes == [2]


def test_on_failure_restarts_count_against_the_backoff_limit() -> None:
    job = _job(backoffLimit=2)
    job["spec"]["template"] = {"spec": {"restartPolicy": "OnFailure"}}
    job["status"] = {"startTime": format_time(NOW)}
    pod = _pod("a")
    pod["status"]["containerStatuses"] = [{"name": "c", "restartCount": 1}]
    assert "conditions" not in plan_job(job, [pod], NOW).status
    pod["status"]["containerStatuses"][0]["restartCount"] = 2
    plan = plan_job(job, [pod], NOW)
    assert plan.status["conditions"][0]["reason"] == "BackoffLimitExceeded"
    assert plan.delete == [pod]


def _failed_with(uid: str, code: int) -> dict:  # type: ignore[type-arg]
    pod = _pod(uid, "Failed")
    pod["metadata"]["namespace"] = "ns"
    pod["status"]["containerStatuses"] = [
        {"name": "main", "state": {"terminated": {"exitCode": code}}}
    ]
    return pod


def test_pod_failure_policy_fail_job_and_ignore() -> None:
    policy = {
        "rules": [
            {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}},
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
        ]
    }
    job = _job(backoffLimit=0, podFailurePolicy=policy)
    job["status"] = {"startTime": format_time(NOW)}
    plan = plan_job(job, [_failed_with("a", 3)], NOW)
    assert "conditions" not in plan.status  # ignored: not counted against backoffLimit 0
    assert plan.status["uncountedTerminatedPods"] == {}
    assert plan.create == 1
    plan = plan_job(job, [_failed_with("b", 42)], NOW)
    (condition,) = plan.status["conditions"]
    assert (condition["type"], condition["reason"], condition["message"]) == (
        "FailureTarget",
        "PodFailurePolicy",
        "Container main for pod ns/pi-b failed with exit code 42 matching FailJob rule at index 1",
    )


def test_success_policy_ends_an_indexed_job_early_without_counting_stopped_pods() -> None:
    job = _job(
        completionMode="Indexed",
        completions=3,
        parallelism=3,
        successPolicy={"rules": [{"succeededIndexes": "0"}]},
    )
    job["status"] = {"startTime": format_time(NOW)}
    leader = _pod("a", "Succeeded")
    leader["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": "0"}
    worker = _pod("b")
    worker["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": "1"}
    plan = plan_job(job, [leader, worker], NOW)
    (condition,) = plan.status["conditions"]
    assert (condition["type"], condition["reason"], condition["message"]) == (
        "SuccessCriteriaMet",
        "SuccessPolicy",
        "Matched rules at index 0",
    )
    assert plan.delete == [worker]
    job["status"] = plan.status
    stopped = _pod("b", "Failed")
    stopped["metadata"]["annotations"] = worker["metadata"]["annotations"]
    plan = plan_job(job, [_pod("a", "Succeeded", tracked=False), stopped], NOW)
    assert "failed" not in plan.status
    job["status"] = plan.status
    plan = plan_job(
        job, [_pod("a", "Succeeded", tracked=False), _pod("b", "Failed", tracked=False)], NOW
    )
    assert [c["type"] for c in plan.status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert plan.status["conditions"][1]["reason"] == "SuccessPolicy"
    assert "failed" not in plan.status


def _indexed_pod(uid: str, index: int, phase: str = "Running", failures: int = 0) -> dict:  # type: ignore[type-arg]
    pod = _pod(uid, phase, finished_ago=100, tracked=False)
    pod["metadata"]["annotations"] = {
        "batch.kubernetes.io/job-completion-index": str(index),
        "batch.kubernetes.io/job-index-failure-count": str(failures),
    }
    return pod


def test_backoff_limit_per_index_fails_only_that_index_then_the_job() -> None:
    job = _job(completionMode="Indexed", completions=2, parallelism=2, backoffLimitPerIndex=1)
    job["status"] = {"startTime": format_time(NOW), "uncountedTerminatedPods": {}}
    first_failure = [_indexed_pod("a", 0, "Failed", 0), _indexed_pod("b", 1)]
    plan = plan_job(job, first_failure, NOW)
    assert plan.create_indexes == [0]  # one retry left for index 0
    assert plan.index_failures == {0: 1}
    assert plan.status["failedIndexes"] == ""
    second_failure = [
        _indexed_pod("a", 0, "Failed", 0),
        _indexed_pod("c", 0, "Failed", 1),
        _indexed_pod("b", 1, "Succeeded"),
    ]
    plan = plan_job(job, second_failure, NOW)
    assert plan.status["failedIndexes"] == "0"
    assert plan.status["completedIndexes"] == "1"
    assert plan.create == 0
    (condition,) = [c for c in plan.status["conditions"] if c["type"] == "FailureTarget"]
    assert (condition["reason"], condition["message"]) == (
        "FailedIndexes",
        "Job has failed indexes",
    )
