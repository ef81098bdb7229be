"""cnat's At against the local cluster: the reference's acceptance scenarios.

Most tests use the session's cluster, whose kubelet simulates containers (a command exits 0
after a second). The last ones use a cluster started with ``run_pods=True``, where the command
really runs: its output is in the pod log, and a failing command fails the pod.
"""

from __future__ import annotations

import asyncio
import secrets
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest
import yaml
from cnat_operator.api.v1alpha1.at import At, AtSpec
from cnat_operator.controllers.at import InvalidSpec, parse_schedule, split_command
from cnat_operator.operator import op

from setpoint import Client, kinds
from setpoint.testing import (
    BackgroundCluster,
    FakeClock,
    install_crds,
    run_operator,
    wait_for,
    wait_for_event,
)

PAST = "2019-04-12T10:12:00Z"
#: Generous bounds: the machine running the tests may be loaded.
TIMEOUT = 30.0
#: Time given to a reconcile's follow-up runs before checking they did nothing more.
SETTLE_SECONDS = 1.0


def an_at(
    namespace: str, schedule: str = PAST, command: str = "echo YAY", name: str = "example-at"
) -> At:
    return At(
        metadata={"name": name, "namespace": namespace},
        spec=AtSpec(schedule=schedule, command=command),
    )


async def phase_of(client: Client, namespace: str, name: str = "example-at") -> str:
    at = await client.get(At, name, namespace=namespace)
    return at.status.phase if at.status else ""


async def wait_for_phase(
    client: Client, namespace: str, phase: str, name: str = "example-at"
) -> At:
    return await wait_for(
        lambda: client.get(At, name, namespace=namespace),
        lambda at: at.status is not None and at.status.phase == phase,
        timeout=TIMEOUT,
        what=f"At {name} to be {phase}",
    )


async def pod_names(client: Client, namespace: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in await client.list(*kinds.Pod, namespace=namespace))


async def no_pods(client: Client, namespace: str) -> bool:
    return not await client.list(*kinds.Pod, namespace=namespace)


# -- pure logic -------------------------------------------------------------------------------


def test_command_is_split_with_shell_rules() -> None:
    assert split_command("echo YAY") == ["echo", "YAY"]
    assert split_command("echo  YAY") == ["echo", "YAY"]  # the original gave ["echo", "", "YAY"]
    assert split_command("sh -c 'echo a  b; exit 3'") == ["sh", "-c", "echo a  b; exit 3"]
    for bad in ("", "   ", "echo 'unclosed"):
        with pytest.raises(InvalidSpec):
            split_command(bad)


def test_only_the_originals_utc_layout_is_a_schedule() -> None:
    assert parse_schedule(PAST).isoformat() == "2019-04-12T10:12:00+00:00"
    for bad in ("tomorrow", "2019-04-12T10:12:00+02:00", "2019-04-12T10:12:00.5Z",
                "2019-13-12T10:12:00Z", ""):  # fmt: skip
        with pytest.raises(InvalidSpec):
            parse_schedule(bad)


# -- against the session's cluster (simulated containers) -------------------------------------


async def test_a_past_schedule_runs_at_once_and_ends_done(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    await install_crds(client, At)
    # Left by someone else with a phase this operator does not know: it must stay untouched.
    odd = await client.create(an_at(namespace, name="odd"))
    await client.patch(odd, {"status": {"phase": "FOO"}}, subresource="status")
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        at = await client.create(an_at(namespace))
        done = await wait_for_phase(client, namespace, "DONE")
        assert done.status is not None and done.status.result == "Succeeded"
        assert done.status.message == "pod example-at-pod succeeded (exit code 0)"
        await wait_for_event(client, at, reason="Running", timeout=TIMEOUT)
        await wait_for_event(client, at, reason="Succeeded", type="Normal", timeout=TIMEOUT)

        pod = await client.get(*kinds.Pod, "example-at-pod", namespace=namespace)  # kept
        assert pod["metadata"]["labels"] == {"app": "example-at"}
        (owner,) = pod["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("At", "example-at", True)
        assert pod["spec"]["restartPolicy"] == "Never"
        (container,) = pod["spec"]["containers"]
        assert (container["name"], container["image"]) == ("busybox", "busybox")
        assert container["command"] == ["echo", "YAY"]

        # After DONE: a deleted pod is not recreated and a spec edit runs nothing again.
        await client.delete(pod)
        await client.patch(done, {"spec": {"command": "echo AGAIN"}})
        # A second At goes through the same (single) worker: once it is DONE, the events
        # above have been handled too.
        await client.create(an_at(namespace, name="second"))
        await wait_for_phase(client, namespace, "DONE", name="second")
        assert await pod_names(client, namespace) == ["second-pod"]
        assert await phase_of(client, namespace) == "DONE"
        assert await phase_of(client, namespace, "odd") == "FOO"

        # Deleting an At garbage-collects its pod.
        await client.delete(At, "second", namespace=namespace)
        await wait_for(
            lambda: no_pods(client, namespace), timeout=TIMEOUT, what="the pod to be deleted"
        )


async def test_a_future_schedule_waits_for_the_clock(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    clock = FakeClock()
    await install_crds(client, At)
    schedule = (clock.now() + timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace, clock=clock):
        at = await client.create(an_at(namespace, schedule=schedule))
        pending = await wait_for_phase(client, namespace, "PENDING")
        assert pending.status is not None and pending.status.message == f"runs at {schedule}"
        await wait_for_event(client, at, reason="Scheduled", timeout=TIMEOUT)
        assert await no_pods(client, namespace)

        clock.advance(29)  # not yet due: nothing fires
        assert await phase_of(client, namespace) == "PENDING"
        assert await no_pods(client, namespace)

        clock.advance(1)  # due: the requeue_at fires now
        pod = await wait_for(
            lambda: client.get(*kinds.Pod, "example-at-pod", namespace=namespace),
            timeout=TIMEOUT,
        )
        assert pod["spec"]["containers"][0]["command"] == ["echo", "YAY"]
        await wait_for_phase(client, namespace, "DONE")


async def test_a_schedule_edited_while_pending_is_honoured(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    clock = FakeClock()
    await install_crds(client, At)
    later = (clock.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    sooner = (clock.now() + timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace, clock=clock):
        await client.create(an_at(namespace, schedule=later))
        pending = await wait_for_phase(client, namespace, "PENDING")
        await client.patch(pending, {"spec": {"schedule": sooner}})
        await wait_for(
            lambda: client.get(At, "example-at", namespace=namespace),
            lambda at: at.status is not None and at.status.message == f"runs at {sooner}",
            timeout=TIMEOUT,
            what="the new schedule in status",
        )
        clock.advance(30)
        await wait_for_phase(client, namespace, "DONE")


async def test_an_invalid_schedule_is_reported_until_the_spec_is_fixed(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    await install_crds(client, At)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        at = await client.create(an_at(namespace, schedule="tomorrow"))
        event = await wait_for_event(
            client, at, reason="InvalidSpec", type="Warning", timeout=TIMEOUT
        )
        assert "'tomorrow' is not a UTC time" in event["note"]
        # Reported once: the run the status write wakes (as in controller-runtime) adds nothing.
        await asyncio.sleep(SETTLE_SECONDS)
        event = await wait_for_event(client, at, reason="InvalidSpec", type="Warning")
        assert event.get("series") is None, event["series"]
        reported = await client.get(At, "example-at", namespace=namespace)
        assert reported.status is not None and reported.status.phase == "PENDING"
        assert reported.status.message is not None and "tomorrow" in reported.status.message
        assert await no_pods(client, namespace)

        await client.patch(reported, {"spec": {"schedule": PAST}})  # the fix wakes it
        await wait_for_phase(client, namespace, "DONE")


# -- against a cluster whose pods run real processes -------------------------------------------


@pytest.fixture(scope="module")
def process_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundCluster]:
    """A local cluster whose kubelet runs each container's command as a local process."""
    path = tmp_path_factory.mktemp("cnat-run-pods") / "kubeconfig"
    with BackgroundCluster(in_memory=True, run_pods=True, kubeconfig_path=path) as cluster:
        yield cluster


@pytest.fixture
def process_namespace(process_cluster: BackgroundCluster) -> Iterator[str]:
    name = "cnat-" + secrets.token_hex(5)
    process_cluster.create_namespace(name)
    try:
        yield name
    finally:
        process_cluster.delete_namespace(name)


async def test_with_run_pods_the_command_runs_and_its_output_is_the_pod_log(
    process_cluster: BackgroundCluster, process_namespace: str, tmp_path: Path
) -> None:
    namespace, kubeconfig = process_namespace, str(process_cluster.kubeconfig_path)
    async with Client.from_kubeconfig(kubeconfig) as client:
        await install_crds(client, At)
        async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
            await client.create(an_at(namespace))
            await client.create(an_at(namespace, name="failing", command="sh -c 'exit 3'"))
            done = await wait_for_phase(client, namespace, "DONE")
            failed = await wait_for_phase(client, namespace, "DONE", name="failing")
            await wait_for_event(client, failed, reason="Failed", type="Warning", timeout=TIMEOUT)

    assert done.status is not None and done.status.result == "Succeeded"
    # restartPolicy Never: a failing command ends the pod, and the At records it.
    assert failed.status is not None and failed.status.result == "Failed"
    assert failed.status.message == "pod failing-pod failed (exit code 3)"

    url = f"{process_cluster.url}/api/v1/namespaces/{namespace}/pods/example-at-pod/log"
    headers = {"Authorization": f"Bearer {process_cluster.token}"}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as response:
        assert response.status == 200
        assert await response.text() == "YAY\n"

    logs = await asyncio.to_thread(
        subprocess.run,
        ["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(tmp_path / "kube-cache"),
         "logs", "example-at-pod", "-n", namespace],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout == "YAY\n"


async def test_with_run_pods_a_pod_deleted_while_running_is_recreated(
    process_cluster: BackgroundCluster, process_namespace: str
) -> None:
    namespace, kubeconfig = process_namespace, str(process_cluster.kubeconfig_path)
    async with Client.from_kubeconfig(kubeconfig) as client:
        await install_crds(client, At)
        async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
            await client.create(an_at(namespace, command="sleep 3600"))
            first = await wait_for(
                lambda: client.get(*kinds.Pod, "example-at-pod", namespace=namespace),
                lambda pod: (pod.get("status") or {}).get("phase") == "Running",
                timeout=TIMEOUT,
                what="example-at-pod to run",
            )
            await client.delete(first, grace_period_seconds=0)
            second = await wait_for(
                lambda: client.get(*kinds.Pod, "example-at-pod", namespace=namespace),
                lambda pod: pod["metadata"]["uid"] != first["metadata"]["uid"],
                timeout=TIMEOUT,
                what="a new example-at-pod",
            )
            assert second["spec"]["containers"][0]["command"] == ["sleep", "3600"]
            assert await phase_of(client, namespace) == "RUNNING"

            await client.delete(At, "example-at", namespace=namespace)
            await wait_for(
                lambda: no_pods(client, namespace), timeout=TIMEOUT, what="the pod to be deleted"
            )


def test_the_generated_role_is_least_privilege() -> None:
    """What the reconciler declares, as committed in config/ (kept fresh by tests/examples)."""
    group = "cnat.programming-kubernetes.info"
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
        ("", "pods"): ["get", "list", "watch", "create"],
        (group, "ats"): ["get", "list", "watch"],
        (group, "ats/status"): ["get", "update", "patch"],
        (group, "ats/finalizers"): ["update"],
    }
