"""The operator soak: an operator and its API server under steady churn, for minutes.

    python -m bench.operator_soak [--minutes 10] [--objects 1000] [--patch-rate 50]
                                  [--recreate-rate 2] [--warmup-minutes 2] [--max-growth 10]

``make soak`` runs it with the defaults. It starts ``setpoint cluster serve --in-memory`` (with
its controllers: the garbage collector removes the children of deleted Widgets), installs the
Widget CRD of ``python -m bench`` and creates ``--objects`` Widgets, then starts that benchmark's
setpoint operator (``bench/peers/contestants/setpoint_widgets.py``: a child ConfigMap per Widget
and a status) and waits until every Widget converged. Then, for ``--minutes``, it merge-patches
the spec of ``--patch-rate`` Widgets a second (round robin) and deletes and recreates
``--recreate-rate`` Widgets a second, and every ``--sample-seconds`` prints one JSON line: the
RSS and open file descriptors of both processes, the operator's threads and its asyncio task
count (``setpoint_asyncio_tasks`` on its ``/metrics``). At the end the churn stops, it waits
until every Widget has its child with the current spec and no child is left without its Widget,
and prints a summary line: each figure's growth from the start of the run after the warm-up to
its end (medians of the first and of the last three samples). The exit code is 1 when a growth
exceeds ``--max-growth`` percent or the Widgets did not converge. Samples are taken during
churn, so connection and task counts include whatever is in flight at that moment.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import aiohttp

from bench.peers import widgets
from bench.peers.cluster import Cluster
from bench.peers.processes import CONTESTANTS, Running
from bench.server_process import free_port

log = logging.getLogger("bench.operator_soak")

NAMESPACE: Final = "soak"
MIB: Final = 1024 * 1024
#: Patches and recreates are sent in ticks of this length, each tick's requests concurrently; a
#: tick that takes longer delays the next one (the achieved rates are reported) rather than
#: piling up a backlog.
TICK_SECONDS: Final = 0.1
CONVERGE_POLL_SECONDS: Final = 2.0
_TASKS_LINE: Final = re.compile(r"^setpoint_asyncio_tasks (\S+)$", re.MULTILINE)
#: Samples whose median is the start (and the end) of the run after the warm-up.
EDGE_SAMPLES: Final = 3
#: The figures whose growth is judged, and the summary keys they get.
GROWTH_FIGURES: Final = (
    "operator_rss_mib", "server_rss_mib", "operator_fds", "server_fds", "operator_tasks",
)  # fmt: skip


@dataclass
class Settings:
    minutes: float = 10.0
    objects: int = 1000
    patch_rate: float = 50.0
    recreate_rate: float = 2.0
    warmup_minutes: float = 2.0
    sample_seconds: float = 30.0
    max_growth_percent: float = 10.0
    converge_timeout: float = 600.0
    workdir: Path | None = None


@dataclass
class Sample:
    minutes: float
    patches: int
    recreates: int
    operator_rss_mib: float
    operator_fds: int
    operator_threads: int
    operator_tasks: int
    server_rss_mib: float
    server_fds: int


@dataclass
class Churn:
    patches: int = 0
    recreates: int = 0
    #: Answers other than 2xx, by "verb code" (a patch racing a recreate can get a 404).
    unexpected: Counter[str] | None = None

    def __post_init__(self) -> None:
        self.unexpected = Counter()


def emit(document: dict[str, Any]) -> None:
    print(json.dumps(document), flush=True)


async def _request(
    cluster: Cluster, method: str, path: str, body: Any = None, patch: bool = False
) -> int:
    headers = {"Content-Type": widgets.MERGE_PATCH if patch else "application/json"}
    data = None if body is None else json.dumps(body)
    async with cluster.session.request(
        method, cluster.url + path, data=data, headers=headers
    ) as response:
        await response.read()
        return response.status


async def _patch(cluster: Cluster, name: str, churn: Churn, serial: int) -> None:
    path = f"{widgets.widgets_path(NAMESPACE)}/{name}"
    code = await _request(cluster, "PATCH", path, {"spec": {"message": f"soak {serial}"}}, True)
    churn.patches += 1
    if code != 200:
        assert churn.unexpected is not None
        churn.unexpected[f"patch {code}"] += 1


async def _recreate(cluster: Cluster, name: str, index: int, churn: Churn) -> None:
    path = widgets.widgets_path(NAMESPACE)
    code = await _request(cluster, "DELETE", f"{path}/{name}")
    assert churn.unexpected is not None
    if code not in (200, 202):
        churn.unexpected[f"delete {code}"] += 1
    for _ in range(50):  # a Widget has no finalizer: 409 only while the delete is under way
        code = await _request(cluster, "POST", path, widgets.widget(NAMESPACE, name, index))
        if code != 409:
            break
        await asyncio.sleep(0.1)
    churn.recreates += 1
    if code != 201:
        churn.unexpected[f"create {code}"] += 1


def _metrics_tasks(text: str) -> int:
    match = _TASKS_LINE.search(text)
    return int(float(match[1])) if match else -1


async def _sample(
    cluster: Cluster, operator: Running, metrics_url: str, started: float, churn: Churn
) -> Sample:
    async with aiohttp.ClientSession() as http, http.get(metrics_url) as response:
        tasks = _metrics_tasks(await response.text())
    op = operator.process
    server = cluster.process()
    return Sample(
        minutes=round((time.monotonic() - started) / 60, 2),
        patches=churn.patches,
        recreates=churn.recreates,
        operator_rss_mib=round(op.memory_info().rss / MIB, 1),
        operator_fds=op.num_fds(),
        operator_threads=op.num_threads(),
        operator_tasks=tasks,
        server_rss_mib=round(server.memory_info().rss / MIB, 1),
        server_fds=server.num_fds(),
    )


async def _wait_converged(cluster: Cluster, objects: int, within: float) -> tuple[bool, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        state = await widgets.convergence(cluster, NAMESPACE)
        done = (
            state.widgets == objects
            and state.converged == objects
            and state.children == objects
            and state.orphans == 0
        )
        if done or loop.time() > deadline:
            return done, state
        await asyncio.sleep(CONVERGE_POLL_SECONDS)


async def _churn(
    cluster: Cluster,
    operator: Running,
    metrics_url: str,
    names: list[str],
    settings: Settings,
) -> tuple[list[Sample], Churn, float]:
    churn = Churn()
    samples: list[Sample] = []
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    end = started + settings.minutes * 60
    next_sample = started
    patch_credit = recreate_credit = 0.0
    patch_serial = recreate_serial = 0
    tick_start = loop.time()
    while time.monotonic() < end:
        if time.monotonic() >= next_sample:
            sample = await _sample(cluster, operator, metrics_url, started, churn)
            samples.append(sample)
            emit({"sample": True, **asdict(sample)})
            next_sample += settings.sample_seconds
        if operator.poll_exit():
            raise RuntimeError(f"the operator exited with code {operator.popen.returncode}")
        elapsed = loop.time() - tick_start
        tick_start = loop.time()
        patch_credit += settings.patch_rate * max(elapsed, TICK_SECONDS)
        recreate_credit += settings.recreate_rate * max(elapsed, TICK_SECONDS)
        calls = []
        while patch_credit >= 1:
            patch_credit -= 1
            name = names[patch_serial % len(names)]
            calls.append(_patch(cluster, name, churn, patch_serial))
            patch_serial += 1
        while recreate_credit >= 1:
            recreate_credit -= 1
            # From the other end of the list, so a Widget is rarely patched while recreated.
            index = len(names) - 1 - recreate_serial % len(names)
            calls.append(_recreate(cluster, names[index], index, churn))
            recreate_serial += 1
        await asyncio.gather(*calls)
        # Behind schedule: carry at most one tick of credit (rates fall; no backlog).
        patch_credit = min(patch_credit, settings.patch_rate * TICK_SECONDS)
        recreate_credit = min(recreate_credit, max(1.0, settings.recreate_rate * TICK_SECONDS))
        await asyncio.sleep(max(0.0, tick_start + TICK_SECONDS - loop.time()))
    samples.append(await _sample(cluster, operator, metrics_url, started, churn))
    emit({"sample": True, **asdict(samples[-1])})
    return samples, churn, time.monotonic() - started


def growth(samples: list[Sample], warmup_minutes: float) -> dict[str, Any]:
    """Each figure at the start and at the end of the run after the warm-up, and its growth (%).

    The start and the end are the medians of the first and of the last three samples (fewer in a
    short run), so one sample that catches a burst of reconciles in flight decides nothing.
    """
    after = [s for s in samples if s.minutes >= warmup_minutes]
    if len(after) < 2:
        after = samples
    edge = max(1, min(EDGE_SAMPLES, len(after) // 2))
    head, tail = after[:edge], after[-edge:]
    result: dict[str, Any] = {"first_minutes": head[0].minutes, "last_minutes": tail[-1].minutes}
    for key in GROWTH_FIGURES:
        first = statistics.median(getattr(s, key) for s in head)
        last = statistics.median(getattr(s, key) for s in tail)
        result[f"{key}_first"] = first
        result[f"{key}_last"] = last
        result[f"{key}_growth_percent"] = (
            round(100 * (last - first) / first, 1) if first > 0 else None
        )
    return result


async def run_soak(settings: Settings) -> int:
    """The whole soak; the exit code."""
    with contextlib.ExitStack() as stack:
        if settings.workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="soak-")))
        else:
            workdir = settings.workdir
            workdir.mkdir(parents=True, exist_ok=True)
        cluster = Cluster(workdir, controllers=True)
        await cluster.start()
        try:
            return await _with_cluster(cluster, workdir, settings)
        finally:
            await cluster.close()
    raise AssertionError("unreachable")


async def _with_cluster(cluster: Cluster, workdir: Path, settings: Settings) -> int:
    await widgets.install(cluster)
    await widgets.create_namespace(cluster, NAMESPACE)
    names = [f"w{i:05d}" for i in range(settings.objects)]
    await widgets.create_widgets(cluster, NAMESPACE, names)
    metrics_port = free_port()
    operator = Running(
        CONTESTANTS["setpoint"],
        NAMESPACE,
        cluster.kubeconfig,
        workdir / "operator.log",
        metrics_address=f"127.0.0.1:{metrics_port}",
    )
    metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    try:
        began = time.monotonic()
        converged, state = await _wait_converged(
            cluster, settings.objects, settings.converge_timeout
        )
        emit(
            {
                "phase": "initial",
                "objects": settings.objects,
                "converged": converged,
                "seconds": round(time.monotonic() - began, 1),
            }
        )
        if not converged:
            emit({"summary": True, "ok": False, "reason": f"no initial convergence: {state}"})
            return 1
        samples, churn, seconds = await _churn(cluster, operator, metrics_url, names, settings)
        began = time.monotonic()
        converged, state = await _wait_converged(
            cluster, settings.objects, settings.converge_timeout
        )
        final_seconds = time.monotonic() - began
    finally:
        await operator.stop()
    figures = growth(samples, settings.warmup_minutes)
    grown = [
        key
        for key in GROWTH_FIGURES
        if (figures[f"{key}_growth_percent"] or 0) > settings.max_growth_percent
    ]
    ok = converged and not grown
    emit(
        {
            "summary": True,
            "ok": ok,
            "minutes": round(seconds / 60, 2),
            "objects": settings.objects,
            "warmup_minutes": settings.warmup_minutes,
            "patches": churn.patches,
            "patches_per_second": round(churn.patches / seconds, 1),
            "recreates": churn.recreates,
            "recreates_per_second": round(churn.recreates / seconds, 2),
            "unexpected_answers": dict(churn.unexpected or {}),
            **figures,
            "grown_beyond_limit": grown,
            "converged": converged,
            "converge_seconds_after_churn": round(final_seconds, 1),
            "widgets": state.widgets,
            "converged_widgets": state.converged,
            "children": state.children,
            "orphans": state.orphans,
        }
    )
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--patch-rate", type=float, default=50.0, help="spec patches per second")
    parser.add_argument("--recreate-rate", type=float, default=2.0, help="deletes+creates/s")
    parser.add_argument("--warmup-minutes", type=float, default=2.0)
    parser.add_argument("--sample-seconds", type=float, default=30.0)
    parser.add_argument("--max-growth", type=float, default=10.0, help="percent; exit 1 above")
    parser.add_argument("--converge-timeout", type=float, default=600.0, help="seconds")
    parser.add_argument("--workdir", type=Path, help="keep the logs there (default: a temp dir)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    settings = Settings(
        minutes=args.minutes,
        objects=args.objects,
        patch_rate=args.patch_rate,
        recreate_rate=args.recreate_rate,
        warmup_minutes=args.warmup_minutes,
        sample_seconds=args.sample_seconds,
        max_growth_percent=args.max_growth,
        converge_timeout=args.converge_timeout,
        workdir=args.workdir,
    )
    sys.exit(asyncio.run(run_soak(settings)))


if __name__ == "__main__":
    main()
