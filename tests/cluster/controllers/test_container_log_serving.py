"""Logs as a kubelet keeps them.

A line of any length survives and the container never blocks on its pipe; a 200 MiB log with a
1 MiB last line answers ``tailLines=1`` fast, without loading the file and without stalling
other requests. The file format, rotation, ``tailLines``/``sinceTime``/``limitBytes`` are unit
tested on files.
"""

from __future__ import annotations

import asyncio
import io
import statistics
import threading
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from setpoint.api.clock import SYSTEM_CLOCK
from setpoint.cluster.apiserver.http.pod_endpoints import LogOptions
from setpoint.cluster.controllers.kubelet.container_logs import (
    FOLLOW_POLL_SECONDS,
    read_log,
    record_nanoseconds,
    render,
    since_offset,
    tail_offset,
)
from setpoint.cluster.controllers.kubelet.log_files import (
    MAX_RECORD_BYTES,
    ContainerLogWriter,
    log_time,
    parse_size,
)
from setpoint.cluster.controllers.kubelet.process_pod import Instance, ProcessContainer
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.test_pod_isolation import pod
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/default/pods"
MIB = 1024 * 1024


@pytest.fixture
async def cluster_api() -> AsyncIterator[tuple[LocalCluster, RawAPI]]:
    async with (
        LocalCluster(run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        yield cluster, api


async def phase_is(api: RawAPI, name: str, *phases: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        status = (await api.request("GET", f"{PODS}/{name}")).body.get("status") or {}
        return status if status.get("phase") in phases else None

    return await eventually(probe, f"pod {name} {phases}")


async def test_a_line_over_64_kib_is_kept_whole_and_the_container_never_blocks(
    cluster_api: tuple[LocalCluster, RawAPI],
) -> None:
    _, api = cluster_api
    # 200 KiB in one line, then 2 MiB more (more than any pipe holds), then the end.
    script = (
        "head -c 204800 /dev/zero | tr '\\0' a; echo; "
        "head -c 2097152 /dev/zero | tr '\\0' c | fold -w 1023; echo; echo end"
    )
    await api.request("POST", PODS, pod("long", script))

    await phase_is(api, "long", "Succeeded")
    answer = await api.request("GET", f"{PODS}/long/log")

    lines = answer.raw.split(b"\n")
    assert lines[0] == b"a" * 204800
    assert lines[-2:] == [b"end", b""]
    assert answer.raw.count(b"c") == 2097152
    tail = await api.request("GET", f"{PODS}/long/log?tailLines=2")
    assert tail.raw == b"cc\nend\n"  # 2 MiB mod 1023 = 2


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def _write_big_log(path: Path, total: int, last_line: int) -> None:
    moment = log_time(datetime(2026, 1, 1, tzinfo=UTC))
    record = f"{moment} stdout F {'x' * 1000}\n".encode()
    block = record * 1024
    with path.open("wb") as log_file:
        written = 0
        while written < total - last_line:
            log_file.write(block)
            written += len(block)
        log_file.write(f"{moment} stdout F ".encode() + b"y" * last_line + b"\n")


async def test_tail_of_a_200_mib_log_with_a_1_mib_line_is_fast_and_stalls_nothing(
    cluster_api: tuple[LocalCluster, RawAPI],
) -> None:
    cluster, api = cluster_api
    await api.request("POST", PODS, pod("big", "sleep 300"))
    await phase_is(api, "big", "Running")
    uid = (await api.request("GET", f"{PODS}/big")).body["metadata"]["uid"]
    kubelet: Any = cluster.server.pod_runtime if cluster.server else None
    path = kubelet.container_log_path(uid, "app")
    await asyncio.to_thread(_write_big_log, path, 200 * MIB, MIB)

    rss_before = _rss_bytes()
    peak = [rss_before]
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            peak[0] = max(peak[0], _rss_bytes())
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        tails = []
        for _ in range(3):
            began = time.perf_counter()
            answer = await api.request("GET", f"{PODS}/big/log?tailLines=1")
            tails.append(time.perf_counter() - began)
            assert answer.raw == b"y" * MIB + b"\n"

        async def health() -> float:
            began = time.perf_counter()
            assert (await api.request("GET", "/healthz")).status == 200
            return time.perf_counter() - began

        async def concurrent() -> list[float]:
            readers = [
                asyncio.create_task(api.request("GET", f"{PODS}/big/log?tailLines=1"))
                for _ in range(4)
            ]
            latencies = []
            while not all(r.done() for r in readers):
                latencies.append(await health())
                await asyncio.sleep(0.005)
            await asyncio.gather(*readers)
            return latencies

        health_latencies = await concurrent()
    finally:
        sampling.set()
        sampler.join()

    assert min(tails) < 0.100, tails
    assert statistics.median(health_latencies) < 0.050, health_latencies
    assert peak[0] - rss_before < 20 * MIB, (peak[0] - rss_before) / MIB


# -- the file format, unit by unit ---------------------------------------------------------


def _writer(path: Path, **kwargs: Any) -> tuple[ContainerLogWriter, list[datetime]]:
    moments = [datetime(2026, 1, 1, tzinfo=UTC)]

    def now() -> datetime:
        moments[0] += timedelta(milliseconds=1)
        return moments[0]

    return ContainerLogWriter(path, now, **kwargs), moments


def test_a_long_line_is_stored_as_pieces_and_read_back_whole(tmp_path: Path) -> None:
    writer, _ = _writer(tmp_path / "0.log")
    writer.write("stdout", b"b" * (MAX_RECORD_BYTES * 2 + 5))
    writer.write("stdout", b"\nshort\npartial")
    writer.close()
    data = (tmp_path / "0.log").read_bytes()

    tags = [line.split(b" ", 3)[2] for line in data.split(b"\n")[:-1]]
    assert tags == [b"P", b"P", b"F", b"F", b"P"]
    assert b"".join(render(data, False)) == b"b" * (MAX_RECORD_BYTES * 2 + 5) + b"\nshort\npartial"
    log_file = io.BytesIO(data)
    start = tail_offset(log_file, len(data), 2)
    assert b"".join(render(data[start:], False)) == b"short\npartial"
    start = tail_offset(log_file, len(data), 3)
    assert b"".join(render(data[start:], False)).startswith(b"bbbb")
    assert tail_offset(log_file, len(data), 0) == len(data)
    assert tail_offset(log_file, len(data), 100) == 0


def test_since_finds_the_first_record_at_or_after_a_time(tmp_path: Path) -> None:
    writer, _ = _writer(tmp_path / "0.log")
    for number in range(1000):
        writer.write("stderr", f"line {number}\n".encode())
    writer.close()
    data = (tmp_path / "0.log").read_bytes()
    log_file = io.BytesIO(data)
    first = record_nanoseconds(data.split(b" ", 1)[0])

    start = since_offset(log_file, len(data), first + 500 * 1_000_000)

    assert b"".join(render(data[start:], False)).split(b"\n")[:2] == [b"line 500", b"line 501"]
    assert since_offset(log_file, len(data), 0) == 0
    assert since_offset(log_file, len(data), first + 10**12) == len(data)


def test_the_log_rotates_by_size_and_keeps_max_files(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    writer, moments = _writer(path, max_size=1000, max_files=3)
    for number in range(100):
        moments[0] += timedelta(seconds=1)  # a distinct rotated name per rotation
        writer.write("stdout", f"{number:04d} {'z' * 60}\n".encode())
    writer.close()

    rotated = sorted(p.name for p in tmp_path.iterdir() if p.name != "0.log")
    assert len(rotated) == 2
    assert all(name.startswith("0.log.2026") for name in rotated)
    assert path.stat().st_size < 1000
    assert b"0099 " in path.read_bytes()


def test_sizes_are_quantities() -> None:
    assert parse_size("10Mi") == 10 * MIB
    assert parse_size("512Ki") == 512 * 1024
    assert parse_size("1G") == 10**9
    assert parse_size("2048") == 2048
    with pytest.raises(ValueError, match="is not a size"):
        parse_size("ten")


async def test_follow_reads_across_rotations_until_the_instance_ends(tmp_path: Path) -> None:
    container = ProcessContainer({"name": "app"}, tmp_path, init=False)
    instance = Instance(datetime.now(UTC), container.log_path(0))
    container.instances.append(instance)
    writer, _ = _writer(instance.log_path, max_size=2000, max_files=3)
    options = LogOptions(container="app", follow=True, timestamps=False)
    received: list[bytes] = []

    async def follow() -> None:
        async for chunk in read_log(container, options, SYSTEM_CLOCK):
            received.append(chunk)

    follower = asyncio.create_task(follow())
    for number in range(200):
        writer.write("stdout", f"line {number:03d} {'w' * 40}\n".encode())
        if number % 20 == 0:
            await asyncio.sleep(FOLLOW_POLL_SECONDS * 2)  # the follower catches up
    writer.close()
    await asyncio.sleep(FOLLOW_POLL_SECONDS * 2)
    instance.finished_at = datetime.now(UTC)
    await asyncio.wait_for(follower, 10)

    lines = b"".join(received).decode().splitlines()
    numbers = [int(line.split()[1]) for line in lines]
    assert numbers == list(range(200))
    rotated = await asyncio.to_thread(lambda: list(tmp_path.glob("logs/app/0.log.*")))
    assert len(rotated) == 2  # rotated several times, the oldest deleted


async def test_limit_bytes_and_timestamps(tmp_path: Path) -> None:
    container = ProcessContainer({"name": "app"}, tmp_path, init=False)
    instance = Instance(datetime.now(UTC), container.log_path(0))
    container.instances.append(instance)
    writer, _ = _writer(instance.log_path)
    writer.write("stdout", b"first\nsecond\n")
    writer.close()

    async def answer(**options: Any) -> bytes:
        chunks = read_log(container, LogOptions(container="app", **options), SYSTEM_CLOCK)
        return b"".join([chunk async for chunk in chunks])

    assert await answer(limit_bytes=8) == b"first\nse"
    stamped = (await answer(timestamps=True, tail_lines=1)).decode()
    assert stamped == "2026-01-01T00:00:00.001Z second\n"  # one read, one time


async def test_log_options_out_of_range_are_422_as_upstream(
    cluster_api: tuple[LocalCluster, RawAPI],
) -> None:
    _, api = cluster_api
    await api.request("POST", PODS, pod("opts", "echo one; sleep 60"))
    await phase_is(api, "opts", "Running")

    async def logged() -> bool:
        # Running means started: the line may reach the log a moment later.
        return (await api.request("GET", f"{PODS}/opts/log")).raw == b"one\n"

    await eventually(logged, "the container's line in its log")
    negative = await api.request("GET", f"{PODS}/opts/log?tailLines=-1&limitBytes=0")
    both = await api.request(
        "GET", f"{PODS}/opts/log?sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z"
    )
    recent = await api.request("GET", f"{PODS}/opts/log?sinceSeconds=3600")
    future = await api.request("GET", f"{PODS}/opts/log?sinceTime=2100-01-01T00:00:00Z")

    assert negative.status == 422
    assert negative.body["message"] == (
        'PodLogOptions "opts" is invalid: [tailLines: Invalid value: -1: must be greater than '
        "or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]"
    )
    assert both.status == 422
    assert "at most one of `sinceTime` or `sinceSeconds` may be specified" in both.body["message"]
    assert recent.raw == b"one\n"
    assert future.raw == b""
