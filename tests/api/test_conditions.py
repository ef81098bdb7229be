"""Status conditions: transitions, in-place updates, validation."""

from datetime import UTC, datetime
from typing import Any

import pytest

from setpoint.api import (
    find_condition,
    find_status_condition,
    is_condition_false,
    is_condition_true,
    remove_condition,
    remove_status_condition,
    set_condition,
    set_status_condition,
    status_condition_met,
)

T1 = datetime(2024, 1, 1, 0, 0, 0, tzinfo=UTC)
T2 = datetime(2024, 1, 1, 0, 5, 0, tzinfo=UTC)


def test_new_condition_has_all_fields() -> None:
    conditions: list[Any] = []
    changed = set_condition(
        conditions,
        type="Ready",
        status="True",
        reason="AllGood",
        message="ok",
        observed_generation=2,
        now=T1,
    )
    assert changed is True
    assert conditions == [
        {
            "type": "Ready",
            "status": "True",
            "observedGeneration": 2,
            "lastTransitionTime": "2024-01-01T00:00:00Z",
            "reason": "AllGood",
            "message": "ok",
        }
    ]


def test_transition_time_changes_only_with_status() -> None:
    conditions: list[Any] = []
    set_condition(conditions, type="Ready", status="False", reason="Waiting", now=T1)
    assert set_condition(
        conditions, type="Ready", status="False", reason="StillWaiting", message="m", now=T2
    )
    condition = find_condition(conditions, "Ready")
    assert condition is not None
    assert condition["lastTransitionTime"] == "2024-01-01T00:00:00Z"
    assert (condition["reason"], condition["message"]) == ("StillWaiting", "m")
    assert set_condition(conditions, type="Ready", status="True", reason="Done", now=T2)
    assert condition["lastTransitionTime"] == "2024-01-01T00:05:00Z"
    assert len(conditions) == 1


def test_unchanged_condition_reports_no_change() -> None:
    conditions: list[Any] = []
    set_condition(
        conditions, type="Ready", status="True", reason="Ok", observed_generation=1, now=T1
    )
    assert (
        set_condition(
            conditions, type="Ready", status="True", reason="Ok", observed_generation=1, now=T2
        )
        is False
    )
    assert (
        set_condition(
            conditions, type="Ready", status="True", reason="Ok", observed_generation=2, now=T2
        )
        is True
    )
    assert set_condition(conditions, type="Ready", status="True", reason="Ok", now=T2) is True
    assert "observedGeneration" not in conditions[0]


def test_now_may_be_a_string_and_is_normalized() -> None:
    conditions: list[Any] = []
    set_condition(
        conditions,
        type="Ready",
        status="Unknown",
        reason="Pending",
        now="2024-01-01T01:00:00.5+01:00",
    )
    assert conditions[0]["lastTransitionTime"] == "2024-01-01T00:00:00Z"


def test_default_now_is_current_time() -> None:
    conditions: list[Any] = []
    before = datetime.now(UTC).replace(microsecond=0)
    set_condition(conditions, type="Ready", status="True", reason="Ok")
    stamp = datetime.strptime(conditions[0]["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=UTC
    )
    assert stamp >= before


def test_queries_and_removal() -> None:
    conditions: list[Any] = []
    set_condition(conditions, type="Ready", status="True", reason="Ok", now=T1)
    set_condition(conditions, type="Degraded", status="False", reason="Fine", now=T1)
    assert is_condition_true(conditions, "Ready")
    assert not is_condition_true(conditions, "Degraded")
    assert is_condition_false(conditions, "Degraded")
    assert not is_condition_true(conditions, "Missing")
    assert not is_condition_true(None, "Ready")
    assert remove_condition(conditions, "Ready") is True
    assert remove_condition(conditions, "Ready") is False
    assert [c["type"] for c in conditions] == ["Degraded"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"type": "Ready", "status": "true", "reason": "Ok"}, "status"),
        ({"type": "Ready", "status": "Yes", "reason": "Ok"}, "status"),
        ({"type": "Ready", "status": "True", "reason": "not camel"}, "reason"),
        ({"type": "Ready", "status": "True", "reason": ""}, "reason"),
        ({"type": "Ready", "status": "True", "reason": "1Bad"}, "reason"),
        ({"type": "", "status": "True", "reason": "Ok"}, "type"),
        ({"type": "bad type", "status": "True", "reason": "Ok"}, "type"),
        (
            {"type": "Ready", "status": "True", "reason": "Ok", "observed_generation": -1},
            "observedGeneration",
        ),
    ],
)
def test_validation_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    conditions: list[Any] = []
    with pytest.raises(ValueError, match=field):
        set_condition(conditions, **kwargs)
    assert conditions == []


def test_reason_allows_upstream_characters() -> None:
    conditions: list[Any] = []
    assert set_condition(
        conditions, type="example.com/Synced", status="True", reason="A_b,c:D1", now=T1
    )


def test_object_level_helpers_create_status() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "w"}}
    assert set_status_condition(obj, type="Ready", status="True", reason="Ok", now=T1)
    assert obj["status"]["conditions"][0]["type"] == "Ready"
    found = find_status_condition(obj, "Ready")
    assert found is not None and found["status"] == "True"
    assert find_status_condition({}, "Ready") is None
    assert remove_status_condition(obj, "Ready") is True
    assert remove_status_condition({}, "Ready") is False
    with pytest.raises(ValueError, match=r"status\.conditions must be a list"):
        set_status_condition(
            {"status": {"conditions": {}}}, type="Ready", status="True", reason="Ok"
        )


def test_status_condition_met_follows_kubectl_wait() -> None:
    obj: dict[str, Any] = {"metadata": {"generation": 2}}
    set_status_condition(
        obj, type="Ready", status="True", reason="Ok", observed_generation=2, now=T1
    )
    assert status_condition_met(obj, "Ready")
    assert status_condition_met(obj, "ready", "true")  # case-insensitive, like kubectl
    assert not status_condition_met(obj, "Ready", "False")
    assert not status_condition_met(obj, "Missing")
    obj["metadata"]["generation"] = 3  # the spec changed after the condition was written
    assert not status_condition_met(obj, "Ready")


def test_status_condition_met_falls_back_to_status_observed_generation() -> None:
    obj: dict[str, Any] = {"metadata": {"generation": 5}, "status": {"observedGeneration": 4}}
    set_status_condition(obj, type="Ready", status="True", reason="Ok", now=T1)
    assert not status_condition_met(obj, "Ready")
    obj["status"]["observedGeneration"] = 5
    assert status_condition_met(obj, "Ready")
    del obj["metadata"]["generation"]
    obj["status"]["observedGeneration"] = 1
    assert status_condition_met(obj, "Ready")
