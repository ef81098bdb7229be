"""The cluster clock from outside: ``/debug/setpoint/clock`` and ``setpoint cluster clock``.
Time never goes back; a real clock can be read, not set; a CronJob fires when the clock is
advanced past its schedule."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from setpoint.api.clock import FakeClock
from setpoint.cli.main import cli
from setpoint.cluster.local_cluster import LocalCluster
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api
from tests.cluster.serve_process import ServeProcess

CLOCK = "/debug/setpoint/clock"
START = datetime(2026, 12, 24, 17, 0, tzinfo=UTC)


@pytest.fixture
async def manual() -> AsyncIterator[tuple[FakeClock, RawAPI]]:
    clock = FakeClock(START)
    async with (
        LocalCluster(clock=clock, https_port=None) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        yield clock, api


async def test_the_clock_is_read_advanced_and_set_but_never_goes_back(
    manual: tuple[FakeClock, RawAPI],
) -> None:
    clock, api = manual
    reply = await api.request("GET", CLOCK)
    assert reply.status == 200
    assert reply.body == {
        "kind": "ClusterClock",
        "apiVersion": "setpoint.dev/v1alpha1",
        "mode": "manual",
        "now": "2026-12-24T17:00:00Z",
    }
    reply = await api.request("PUT", CLOCK, {"advance": "1h30m"})
    assert (reply.status, reply.body["now"]) == (200, "2026-12-24T18:30:00Z")
    assert clock.now() == datetime(2026, 12, 24, 18, 30, tzinfo=UTC)
    reply = await api.request("PUT", CLOCK, {"now": "2026-12-25T00:00:00Z"})
    assert (reply.status, reply.body["now"]) == (200, "2026-12-25T00:00:00Z")

    reply = await api.request("PUT", CLOCK, {"now": "2026-12-24T00:00:00Z"})
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert reply.body["message"] == (
        "now: the cluster clock cannot go back: 2026-12-24T00:00:00Z is before 2026-12-25T00:00:00Z"
    )
    for body, message in (
        ({"advance": "-1h"}, "advance: the cluster clock cannot go back (-1h)"),
        ({"advance": "soon"}, "advance: 'soon' is not a duration (e.g. 2h, 90s, 1h30m, 3d)"),
        (
            {"now": "tomorrow"},
            "now: 'tomorrow' is not an RFC 3339 time (e.g. 2026-12-24T18:00:00Z)",
        ),
        (
            {"now": "2027-01-01T00:00:00"},
            "now: '2027-01-01T00:00:00' has no time zone (add Z for UTC)",
        ),
        ({"now": "2027-01-01T00:00:00Z", "advance": "1h"}, None),
    ):
        reply = await api.request("PUT", CLOCK, body)
        assert reply.status == 400, body
        if message is not None:
            assert reply.body["message"] == message
    assert clock.now() == datetime(2026, 12, 25, tzinfo=UTC)  # nothing moved


async def test_a_real_clock_is_read_only_and_the_clock_needs_credentials() -> None:
    async with LocalCluster(https_port=None) as cluster:
        async with raw_api(cluster.url, cluster.token) as api:
            reply = await api.request("GET", CLOCK)
            assert (reply.status, reply.body["mode"]) == (200, "real")
            reply = await api.request("PUT", CLOCK, {"advance": "1h"})
            assert reply.status == 405
            assert "serve the cluster with --clock manual" in reply.body["message"]
        async with raw_api(cluster.url, "wrong-token") as stranger:
            assert (await stranger.request("GET", CLOCK)).status == 401


async def test_a_cronjob_fires_when_the_clock_is_advanced_past_its_schedule(
    manual: tuple[FakeClock, RawAPI],
) -> None:
    _, api = manual
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly"},
        "spec": {
            "schedule": "0 2 * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "image": "busybox"}],
                        }
                    }
                }
            },
        },
    }
    path = "/apis/batch/v1/namespaces/default/cronjobs"
    assert (await api.request("POST", path, cronjob)).status == 201

    async def jobs() -> list[dict[str, Any]]:
        return list(
            (await api.request("GET", "/apis/batch/v1/namespaces/default/jobs")).body["items"]
        )

    assert await jobs() == []
    reply = await api.request("PUT", CLOCK, {"advance": "9h"})  # 17:00 -> 02:00 next day
    assert reply.status == 200
    found = await eventually(jobs, "the 02:00 Job")
    scheduled = found[0]["metadata"]["annotations"][
        "batch.kubernetes.io/cronjob-scheduled-timestamp"
    ]
    assert scheduled == "2026-12-25T02:00:00Z"


@pytest.fixture(scope="module")
def manual_cluster() -> Iterator[BackgroundCluster]:
    cluster = BackgroundCluster(clock=FakeClock(START)).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def _cli(cluster: BackgroundCluster, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["cluster", "clock", *args, "--kubeconfig", str(cluster.kubeconfig_path)]
    )


def test_setpoint_cluster_clock_shows_advances_and_sets(manual_cluster: BackgroundCluster) -> None:
    result = _cli(manual_cluster)
    assert (result.exit_code, result.output) == (0, "2026-12-24T17:00:00Z (manual)\n")
    result = _cli(manual_cluster, "advance", "2h")
    assert (result.exit_code, result.output) == (0, "2026-12-24T19:00:00Z (manual)\n")
    result = _cli(manual_cluster, "set", "2026-12-31T23:59:00Z")
    assert (result.exit_code, result.output) == (0, "2026-12-31T23:59:00Z (manual)\n")
    result = _cli(manual_cluster, "set", "2026-12-24T18:00:00Z")
    assert result.exit_code == 1
    assert result.output == (
        "Error: now: the cluster clock cannot go back: 2026-12-24T18:00:00Z is before "
        "2026-12-31T23:59:00Z\n"
    )
    result = _cli(manual_cluster, "advance", "later")
    assert result.exit_code == 2
    assert "'later' is not a duration" in result.output


def test_serve_clock_manual_serves_a_clock_that_stands_still(tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "kubeconfig", "--in-memory", "--clock", "manual")
    try:
        server.wait_for_kubeconfig()
        kubeconfig = str(tmp_path / "kubeconfig")
        first = CliRunner().invoke(cli, ["cluster", "clock", "--kubeconfig", kubeconfig])
        assert first.exit_code == 0, first.output
        assert first.output.endswith(" (manual)\n")
        time.sleep(1.1)  # real time passes; the cluster's does not
        again = CliRunner().invoke(cli, ["cluster", "clock", "--kubeconfig", kubeconfig])
        assert again.output == first.output
    finally:
        assert server.terminate() == 0
