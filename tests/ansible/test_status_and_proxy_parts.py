"""Conditions as Operator SDK writes them; the proxy's owner encoding and request paths."""

from __future__ import annotations

from setpoint.ansible.kubeconfig import Owner, decode_owner, encode_owner
from setpoint.ansible.proxy import RequestInfo, parse_request_path
from setpoint.ansible.status import (
    AnsibleResult,
    failed_conditions,
    running_conditions,
    succeeded_conditions,
)

RESULT = AnsibleResult.from_stats(
    {"ok": {"localhost": 3}, "changed": {"localhost": 1}, "failures": {}, "skipped": {}},
    "2026-11-27T15:00:00.123400+00:00",
)


def by_type(conditions: list[dict]) -> dict[str, dict]:
    return {condition["type"]: condition for condition in conditions}


def test_a_successful_run() -> None:
    running = by_type(running_conditions(None))
    assert running == {
        "Running": {
            "type": "Running",
            "status": "True",
            "reason": "Running",
            "message": "Running reconciliation",
            "lastTransitionTime": running["Running"]["lastTransitionTime"],
        }
    }
    done = by_type(succeeded_conditions(list(running.values()), RESULT))
    assert done["Running"]["reason"] == "Successful"
    assert done["Running"]["message"] == "Awaiting next reconciliation"
    assert done["Running"]["ansibleResult"] == {
        "ok": 3,
        "changed": 1,
        "skipped": 0,
        "failures": 0,
        "completion": "2026-11-27T15:00:00.1234+00:00",
    }
    assert (done["Successful"]["status"], done["Successful"]["message"]) == (
        "True",
        "Last reconciliation succeeded",
    )
    assert done["Failure"]["status"] == "False"
    # the next run sets Successful to False while it runs
    again = by_type(running_conditions(list(done.values())))
    assert again["Successful"]["status"] == "False"
    assert again["Running"]["reason"] == "Running"


def test_a_failed_run() -> None:
    failed = by_type(failed_conditions(running_conditions(None), "boom\nbang", RESULT))
    assert failed["Failure"]["status"] == "True"
    assert failed["Failure"]["reason"] == "Failed"
    assert failed["Failure"]["message"] == "boom\nbang"
    assert failed["Failure"]["ansibleResult"]["ok"] == 3
    assert failed["Running"]["status"] == "False"
    assert failed["Successful"]["status"] == "False"


def test_unchanged_conditions_keep_their_transition_time() -> None:
    first = succeeded_conditions(None, RESULT)
    for condition in first:
        condition["lastTransitionTime"] = "2020-01-01T00:00:00Z"
    second = by_type(succeeded_conditions(first, RESULT))
    assert second["Successful"]["lastTransitionTime"] == "2020-01-01T00:00:00Z"


def test_owner_round_trip() -> None:
    owner = Owner("cache.example.com/v1alpha1", "Memcached", "sample", "uid-1", "ns")
    assert decode_owner(encode_owner(owner)) == owner
    assert owner.group_kind == "Memcached.cache.example.com"
    assert decode_owner("not base64 json") is None
    assert decode_owner("admin") is None


def test_request_paths() -> None:
    assert parse_request_path("/apis/apps/v1/namespaces/ns/deployments/web/status") == (
        RequestInfo("apps/v1", "deployments", "ns", "web", "status")
    )
    assert parse_request_path("/api/v1/namespaces/ns/configmaps") == RequestInfo(
        "v1", "configmaps", "ns"
    )
    assert parse_request_path("/api/v1/namespaces/ns") == RequestInfo(
        "v1", "namespaces", None, "ns"
    )
    assert parse_request_path("/api/v1/nodes") == RequestInfo("v1", "nodes")
    assert parse_request_path("/version") is None
    assert parse_request_path("/apis/apps/v1") is None
