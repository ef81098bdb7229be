"""Deployment rollout arithmetic, revision bookkeeping and status, as upstream computes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from setpoint.api.times import format_time
from setpoint.cluster.controllers.deployment.deployment_status import (
    find_condition,
    progress_recheck_delay,
    rollout_status,
)
from setpoint.cluster.controllers.deployment.revisions import (
    find_new_replica_set,
    history_to_delete,
    set_new_replica_set_annotations,
)
from setpoint.cluster.controllers.deployment.rollout_arithmetic import (
    IntOrPercentError,
    active_or_latest,
    max_surge,
    max_unavailable,
    new_rs_new_replicas,
    proportional_scale,
    resolve_fenceposts,
    scale_down_old_for_rolling_update,
    scaled_value,
    unhealthy_cleanup,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def _deployment(replicas: int = 3, surge: Any = "25%", unavailable: Any = "25%") -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "generation": 2, "annotations": {}},
        "spec": {
            "replicas": replicas,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
            },
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
        },
        "status": {},
    }


def _rs(
    name: str, replicas: int, available: int, age: int, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": format_time(NOW - timedelta(seconds=age)),
            "annotations": dict(annotations or {}),
        },
        "spec": {"replicas": replicas},
        "status": {
            "replicas": replicas,
            "availableReplicas": available,
            "readyReplicas": available,
        },
    }


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        ("25%", "25%", 3, (1, 0)),
        ("25%", "25%", 4, (1, 1)),
        ("25%", "25%", 10, (3, 2)),
        (0, 0, 5, (0, 1)),
        ("0%", "0%", 5, (0, 1)),
        (2, "50%", 5, (2, 2)),
    ],
)
def test_fenceposts_round_surge_up_and_unavailable_down(
    surge: Any, unavailable: Any, desired: int, expected: tuple[int, int]
) -> None:
    assert resolve_fenceposts(surge, unavailable, desired) == expected


def test_int_or_percent_rejects_other_strings() -> None:
    with pytest.raises(IntOrPercentError, match="not a percentage"):
        scaled_value("5", 10, True)


def test_recreate_has_no_surge_and_unavailable_is_capped() -> None:
    recreate = _deployment()
    recreate["spec"]["strategy"] = {"type": "Recreate"}
    assert max_surge(recreate) == 0
    assert max_unavailable(recreate) == 0
    assert max_unavailable(_deployment(replicas=2, unavailable=5)) == 2


def test_rolling_update_from_three_replicas_steps_within_the_fenceposts() -> None:
    deployment = _deployment(3)
    old = _rs("web-old", 3, 3, age=100)
    new = _rs("web-new", 0, 0, age=1)
    # Step 1: surge one new pod (3 + 1 = maxTotal 4).
    assert new_rs_new_replicas(deployment, [old, new], new) == 1
    new = _rs("web-new", 1, 0, age=1)
    assert new_rs_new_replicas(deployment, [old, new], new) == 1
    # The new pod is not available yet: maxUnavailable 0 forbids any scale-down.
    assert scale_down_old_for_rolling_update(deployment, [old, new], [old]) == {}
    # Once it is available, one old pod may go.
    new = _rs("web-new", 1, 1, age=1)
    assert scale_down_old_for_rolling_update(deployment, [old, new], [old]) == {"web-old": 2}


def test_unhealthy_old_pods_are_cleaned_up_first_oldest_first() -> None:
    oldest = _rs("a", 2, 1, age=300)
    older = _rs("b", 3, 1, age=200)
    assert unhealthy_cleanup([older, oldest], 2) == {"a": 1, "b": 2}
    assert unhealthy_cleanup([older, oldest], 5) == {"a": 1, "b": 1}


def test_proportional_scaling_spreads_a_resize_over_active_sets() -> None:
    deployment = _deployment(replicas=20, surge=3, unavailable=2)
    annotations = {"deployment.kubernetes.io/max-replicas": "13"}
    old = _rs("old", 8, 8, age=100, annotations=annotations)
    new = _rs("new", 5, 0, age=1, annotations=annotations)
    sizes, operation = proportional_scale(deployment, [old, new])
    assert operation == "up"
    assert sum(sizes.values()) == 23
    assert sizes == {"old": 14, "new": 9}


def test_active_or_latest() -> None:
    a, b = _rs("a", 0, 0, age=20), _rs("b", 0, 0, age=10)
    assert active_or_latest(None, [a, b]) is b
    assert active_or_latest(_rs("n", 2, 0, age=1), [a, b])["metadata"]["name"] == "n"
    assert active_or_latest(_rs("n", 2, 0, age=1), [_rs("c", 1, 1, age=5)]) is None


def test_new_replica_set_is_the_oldest_matching_template() -> None:
    deployment = _deployment()
    template = deployment["spec"]["template"]
    matching = _rs("m", 1, 1, age=50)
    matching["spec"]["template"] = {
        "metadata": {"creationTimestamp": None, "labels": {"app": "web", "pod-template-hash": "x"}},
        "spec": {"containers": []},
    }
    other = _rs("o", 1, 1, age=100)
    other["spec"]["template"] = {**template, "spec": {"containers": [{"name": "x"}]}}
    assert find_new_replica_set(deployment, [other, matching]) is matching


def test_rollback_keeps_the_revision_history() -> None:
    deployment = _deployment()
    deployment["metadata"]["annotations"] = {
        "kubernetes.io/change-cause": "rollback",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
    }
    rs = _rs("r", 1, 1, age=1, annotations={"deployment.kubernetes.io/revision": "1"})
    assert set_new_replica_set_annotations(deployment, rs, 3, exists=True)
    assert rs["metadata"]["annotations"] == {
        "deployment.kubernetes.io/revision": "3",
        "deployment.kubernetes.io/revision-history": "1",
        "kubernetes.io/change-cause": "rollback",
    }
    assert not set_new_replica_set_annotations(deployment, rs, 3, exists=True)
    assert set_new_replica_set_annotations(deployment, rs, 5, exists=True)
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1,3"
    fresh: dict[str, Any] = {"metadata": {}}
    set_new_replica_set_annotations(deployment, fresh, 1, exists=False)
    assert fresh["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "3"
    assert fresh["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "4"


def test_history_cleanup_deletes_scaled_down_sets_beyond_the_limit_lowest_revision_first() -> None:
    deployment = _deployment()
    deployment["spec"]["revisionHistoryLimit"] = 1
    sets = [
        _rs(f"r{i}", 0, 0, age=100 - i, annotations={"deployment.kubernetes.io/revision": str(i)})
        for i in (3, 1, 2)
    ]
    assert [rs["metadata"]["name"] for rs in history_to_delete(deployment, sets)] == ["r1", "r2"]


def test_status_conditions_progress_then_complete() -> None:
    deployment = _deployment(3)
    new = _rs("web-new", 3, 1, age=1)
    status = rollout_status(deployment, [new], new, NOW)
    assert status["replicas"] == 3
    assert status["updatedReplicas"] == 3
    assert status["availableReplicas"] == 1
    assert status["unavailableReplicas"] == 2
    assert status["observedGeneration"] == 2
    available = find_condition(status, "Available")
    assert available is not None
    assert available["reason"] == "MinimumReplicasUnavailable"
    assert available["message"] == "Deployment does not have minimum availability."
    progressing = find_condition(status, "Progressing")
    assert progressing is not None
    assert progressing["reason"] == "ReplicaSetUpdated"
    assert progressing["message"] == 'ReplicaSet "web-new" is progressing.'

    deployment["status"] = status
    done = _rs("web-new", 3, 3, age=1)
    later = NOW + timedelta(seconds=5)
    status = rollout_status(deployment, [done], done, later)
    assert find_condition(status, "Available")["reason"] == "MinimumReplicasAvailable"  # type: ignore[index]
    progressing = find_condition(status, "Progressing")
    assert progressing is not None
    assert progressing["reason"] == "NewReplicaSetAvailable"
    assert progressing["message"] == 'ReplicaSet "web-new" has successfully progressed.'
    assert progressing["lastTransitionTime"] == format_time(NOW)
    assert progressing["lastUpdateTime"] == format_time(later)
    assert "unavailableReplicas" in status and status["unavailableReplicas"] == 0


def test_progress_deadline_exceeded_after_the_deadline() -> None:
    deployment = _deployment(3)
    deployment["spec"]["progressDeadlineSeconds"] = 60
    new = _rs("web-new", 3, 0, age=1)
    status = rollout_status(deployment, [new], new, NOW)
    deployment["status"] = status
    assert progress_recheck_delay(deployment, status, NOW) == 61
    stuck = rollout_status(deployment, [new], new, NOW + timedelta(seconds=61))
    progressing = find_condition(stuck, "Progressing")
    assert progressing is not None
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert progressing["message"] == 'ReplicaSet "web-new" has timed out progressing.'
