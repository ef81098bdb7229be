"""TDSet against the local cluster, across a day on a fake clock: the reference's scenarios.

The operator runs on a ``FakeClock`` set to the hour a test needs; the cluster's Deployment
controller and kubelet (simulated) run on real time, so Deployments really become available.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from tdset_operator.api.v1.tdset import SchedulingRange, TDSet
from tdset_operator.operator import op
from tdset_operator.schedule import covers, desired_replicas, next_boundary, time_zone

from setpoint import Client, kinds
from setpoint.client.errors import Invalid
from setpoint.testing import FakeClock, install_crds, run_operator, wait_for, wait_for_event

#: Generous bounds: the machine running the tests may be loaded.
TIMEOUT = 30.0
#: Time given to a reconcile's follow-up runs before checking they did nothing more.
SETTLE_SECONDS = 1.0
EVENING = [
    {"startTime": 18, "endTime": 19, "replica": 5},
    {"startTime": 19, "endTime": 21, "replica": 3},
]


def at(hour: int, minute: int = 0, day: int = 15) -> datetime:
    return datetime(2026, 1, day, hour, minute, tzinfo=UTC)


def tdset(
    namespace: str, name: str = "example-tdset", ranges: list[dict[str, int]] = EVENING, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "schedule.rs/v1",
        "kind": "TDSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "container": {"image": "nginx", "port": 80},
            "schedulingConfig": ranges,
            "defaultReplica": 2,
            **spec,
        },
    }


def ranges(*triples: tuple[int, int, int]) -> list[SchedulingRange]:
    return [
        SchedulingRange.model_validate({"startTime": s, "endTime": e, "replica": r})
        for s, e, r in triples
    ]


async def wait_for_replicas(
    client: Client, namespace: str, replicas: int, name: str = "example-tdset"
) -> dict[str, Any]:
    deployment: dict[str, Any] = await wait_for(
        lambda: client.get(*kinds.Deployment, name, namespace=namespace),
        lambda d: d["spec"]["replicas"] == replicas,
        timeout=TIMEOUT,
        what=f"Deployment {name} at {replicas} replicas",
    )
    return deployment


def condition(obj: TDSet, type_: str) -> dict[str, Any]:
    assert obj.status is not None
    (found,) = [c for c in obj.status.conditions if c["type"] == type_]
    return found


async def wait_for_tdset(
    client: Client, namespace: str, check: Callable[[TDSet], bool], what: str
) -> TDSet:
    found: TDSet = await wait_for(
        lambda: client.get(TDSet, "example-tdset", namespace=namespace),
        lambda obj: obj.status is not None and check(obj),
        timeout=TIMEOUT,
        what=what,
    )
    return found


def is_available(obj: TDSet) -> bool:
    return any(
        c["type"] == "Available" and c["status"] == "True"
        for c in (obj.status.conditions if obj.status else [])
    )


# -- pure logic -------------------------------------------------------------------------------


def test_ranges_cross_midnight_and_reach_hour_23() -> None:
    night = ranges((22, 2, 4))[0]
    assert [h for h in range(24) if covers(night, h)] == [0, 1, 22, 23]
    assert [h for h in range(24) if covers(ranges((23, 0, 1))[0], h)] == [23]
    assert all(covers(ranges((5, 5, 1))[0], h) for h in range(24))  # the whole day
    overlapping = ranges((18, 20, 5), (19, 21, 3))
    assert desired_replicas(overlapping, 2, 19) == 5  # the first entry wins


def test_the_next_boundary_is_the_next_hour_a_range_starts_or_ends() -> None:
    evening = ranges((18, 19, 5), (19, 21, 3))
    assert next_boundary(evening, at(18, 30), UTC) == at(19)
    assert next_boundary(evening, at(19), UTC) == at(21)
    assert next_boundary(evening, at(21), UTC) == at(18, day=16)
    assert next_boundary([], at(21), UTC) is None
    # In Paris (UTC+1 in January), 18:00 local is 17:00 UTC.
    assert next_boundary(evening, at(16), time_zone("Europe/Paris")) == at(17)
    # Across the spring DST change (29 March 2026, 02:00 -> 03:00 in Paris): 04:00 local is
    # 02:00 UTC, not 03:00.
    spring = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)
    assert next_boundary(ranges((4, 6, 1)), spring, time_zone("Europe/Paris")) == datetime(
        2026, 3, 29, 2, 0, tzinfo=UTC
    )


# -- against the local cluster ----------------------------------------------------------------


async def test_replicas_follow_the_hours_of_the_day(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    clock = FakeClock(at(18, 30))
    await install_crds(client, TDSet)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace, clock=clock):
        created = await client.create(tdset(namespace))
        deployment = await wait_for_replicas(client, namespace, 5)
        labels = {
            "app.kubernetes.io/name": "TDSet",
            "app.kubernetes.io/instance": "example-tdset",
            "app.kubernetes.io/version": "v1",
            "app.kubernetes.io/part-of": "tdset-operator",
            "app.kubernetes.io/created-by": "controller-manager",
        }
        assert deployment["spec"]["selector"] == {"matchLabels": labels}
        assert deployment["spec"]["template"]["metadata"]["labels"] == labels
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert container["name"] == "example-tdset"
        assert container["imagePullPolicy"] == "IfNotPresent"
        assert container["ports"] == [{"name": "tdset", "containerPort": 80, "protocol": "TCP"}]
        (owner,) = deployment["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"]) == ("TDSet", "example-tdset")
        assert owner["controller"] is True
        await wait_for_event(client, created, reason="Created", timeout=TIMEOUT)

        # The Deployment controller and the kubelet make the replicas available: Available.
        ready = await wait_for_tdset(client, namespace, is_available, "Available=True")
        available = condition(ready, "Available")
        assert available["reason"] == "DeploymentAvailable"
        assert available["message"] == "5 of 5 replicas available (schedulingConfig[0] at 18:00)"
        assert condition(ready, "Progressing")["status"] == "False"
        assert ready.status is not None and ready.status.desired_replicas == 5
        deployment = await client.get(*kinds.Deployment, "example-tdset", namespace=namespace)
        assert deployment["status"]["availableReplicas"] == deployment["spec"]["replicas"] == 5

        clock.set(at(19))
        await wait_for_replicas(client, namespace, 3)
        await wait_for_event(client, created, reason="Scaled", timeout=TIMEOUT)
        clock.set(at(21))
        await wait_for_replicas(client, namespace, 2)
        ready = await wait_for_tdset(
            client,
            namespace,
            lambda obj: (
                is_available(obj)
                and "the default at 21:00" in condition(obj, "Available")["message"]
            ),
            "Available=True with the default",
        )
        assert ready.status is not None and ready.status.available_replicas == 2


async def test_a_range_crossing_midnight_and_hour_23(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    clock = FakeClock(at(21, 30))
    await install_crds(client, TDSet)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace, clock=clock):
        night = [{"startTime": 22, "endTime": 2, "replica": 4}]
        await client.create(tdset(namespace, "night", night, defaultReplica=1))
        late = [{"startTime": 23, "endTime": 0, "replica": 6}]
        await client.create(tdset(namespace, "late", late, defaultReplica=1))
        await wait_for_replicas(client, namespace, 1, "night")
        await wait_for_replicas(client, namespace, 1, "late")

        clock.set(at(22))
        await wait_for_replicas(client, namespace, 4, "night")
        clock.set(at(23))
        await wait_for_replicas(client, namespace, 6, "late")
        clock.set(at(0, day=16))
        await wait_for_replicas(client, namespace, 1, "late")
        clock.set(at(2, day=16))
        await wait_for_replicas(client, namespace, 1, "night")


async def test_a_time_zone_moves_the_hours_and_a_bad_one_is_reported(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    clock = FakeClock(at(17, 30))  # 18:30 in Paris
    await install_crds(client, TDSet)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace, clock=clock):
        created = await client.create(tdset(namespace, timeZone="Mars/Olympus_Mons"))
        event = await wait_for_event(
            client, created, reason="InvalidTimeZone", type="Warning", timeout=TIMEOUT
        )
        assert "Mars/Olympus_Mons" in event["note"]
        # Reported once: the run the status write wakes (as in controller-runtime) adds nothing.
        await asyncio.sleep(SETTLE_SECONDS)
        event = await wait_for_event(client, created, reason="InvalidTimeZone", type="Warning")
        assert event.get("series") is None, event["series"]
        degraded = await wait_for_tdset(
            client,
            namespace,
            lambda obj: any(c["type"] == "Degraded" for c in obj.status.conditions),  # type: ignore[union-attr]
            "Degraded",
        )
        assert condition(degraded, "Degraded")["status"] == "True"

        await client.patch(degraded, {"spec": {"timeZone": "Europe/Paris"}})
        await wait_for_replicas(client, namespace, 5)
        clock.set(at(18))  # 19:00 in Paris
        await wait_for_replicas(client, namespace, 3)
        fixed = await wait_for_tdset(
            client, namespace, lambda obj: condition(obj, "Degraded")["status"] == "False", "fixed"
        )
        assert condition(fixed, "Degraded")["reason"] == "AsExpected"


async def test_a_manual_scale_is_reverted_and_a_deleted_deployment_recreated(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    clock = FakeClock(at(12))
    await install_crds(client, TDSet)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace, clock=clock):
        await client.create(tdset(namespace))
        first = await wait_for_replicas(client, namespace, 2)

        await client.scale(*kinds.Deployment, "example-tdset", 7, namespace=namespace)
        await wait_for_replicas(client, namespace, 2)

        await client.delete(first)
        second = await wait_for(
            lambda: client.get(*kinds.Deployment, "example-tdset", namespace=namespace),
            lambda d: d["metadata"]["uid"] != first["metadata"]["uid"],
            timeout=TIMEOUT,
            what="a new Deployment",
        )
        assert second["spec"]["replicas"] == 2

        await client.delete(TDSet, "example-tdset", namespace=namespace)
        await wait_for(
            lambda: no_deployments(client, namespace),
            timeout=TIMEOUT,
            what="the Deployment to be garbage-collected",
        )


async def no_deployments(client: Client, namespace: str) -> bool:
    return not await client.list(*kinds.Deployment, namespace=namespace)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"defaultReplica": 0}, "spec.defaultReplica"),
        ({"schedulingConfig": [{"startTime": 24, "endTime": 2, "replica": 1}]},
         "spec.schedulingConfig[0].startTime"),
        ({"schedulingConfig": [{"startTime": 1, "endTime": 2, "replica": -1}]},
         "spec.schedulingConfig[0].replica"),
        ({"intervalMint": 0}, "spec.intervalMint"),
        ({"intervalMint": 1441}, "spec.intervalMint"),
        ({"container": None}, "spec.container"),
    ],
)  # fmt: skip
async def test_the_crd_rejects_what_the_original_rejects(
    client: Client, namespace: str, change: dict[str, Any], field: str
) -> None:
    await install_crds(client, TDSet)
    body = tdset(namespace)
    body["spec"].update(change)
    body["spec"] = {key: value for key, value in body["spec"].items() if value is not None}
    with pytest.raises(Invalid) as raised:
        await client.create(body)
    assert field in str(raised.value)


def test_the_next_boundary_ignores_hours_no_range_uses() -> None:
    assert next_boundary(ranges((9, 17, 4)), at(17), UTC) == at(9, day=16)
    assert next_boundary(ranges((9, 17, 4)), at(8, 59), UTC) == at(9)
    assert next_boundary(ranges((9, 17, 4)), at(9) - timedelta(microseconds=1), UTC) == at(9)


def test_the_generated_role_is_least_privilege() -> None:
    """What the reconciler declares, as committed in config/ (kept fresh by tests/examples)."""
    group = "schedule.rs"
    role_file = Path(__file__).parents[1] / "config" / "rbac" / "role.yaml"
    (role,) = [doc for doc in yaml.safe_load_all(role_file.read_text()) if doc]
    rules = {
        (rule["apiGroups"][0], resource): rule["verbs"]
        for rule in role["rules"]
        for resource in rule["resources"]
    }
    assert rules == {
        ("", "events"): ["create", "patch"],
        ("events.k8s.io", "events"): ["create", "patch"],
        ("apps", "deployments"): ["get", "list", "watch", "create", "update"],
        (group, "tdsets"): ["get", "list", "watch"],
        (group, "tdsets/status"): ["get", "update", "patch"],
        (group, "tdsets/finalizers"): ["update"],
    }
