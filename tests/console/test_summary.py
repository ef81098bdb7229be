"""An object's row: phase, replicas and conditions at a glance."""

from __future__ import annotations

from setpoint.console.summary import age_seconds, object_row


def test_bad_conditions_come_first_and_say_so() -> None:
    row = object_row(
        {
            "metadata": {"name": "d", "namespace": "n", "uid": "u"},
            "spec": {"replicas": 3},
            "status": {
                "readyReplicas": 1,
                "conditions": [
                    {"type": "Available", "status": "True"},
                    {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate"},
                    {"type": "Progressing", "status": "Unknown"},
                ],
            },
        }
    )
    assert row["replicas"] == "1/3"
    assert [(c["type"], c["healthy"]) for c in row["conditions"]] == [
        ("ReplicaFailure", False),
        ("Available", True),
        ("Progressing", None),
    ]


def test_state_stands_in_for_phase_and_missing_parts_stay_missing() -> None:
    row = object_row(
        {"metadata": {"name": "at"}, "spec": {"replicas": True}, "status": {"state": "DONE"}}
    )
    assert row["phase"] == "DONE"
    assert row["replicas"] is None  # a bool is not a replica count
    assert row["conditions"] == [] and row["namespace"] is None


def test_age_of_a_malformed_timestamp_is_unknown() -> None:
    assert age_seconds("yesterday") is None
    assert age_seconds(None) is None
    assert age_seconds("2020-01-01T00:00:00Z") > 0  # type: ignore[operator]


def test_a_pod_s_ready_column_counts_its_ready_containers() -> None:
    row = object_row(
        {
            "metadata": {"name": "p"},
            "status": {
                "phase": "Running",
                "containerStatuses": [{"name": "a", "ready": True}, {"name": "b", "ready": False}],
            },
        }
    )
    assert (row["phase"], row["replicas"]) == ("Running", "1/2")
