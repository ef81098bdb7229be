"""The console with 10,000 objects of a kind: page load and live-update latency.

    python -m bench.console_page_load [--json] [--quick]

A local cluster (in-memory) holds N ConfigMaps in one namespace and 100 in another; the
console runs on it (in this process), and headless Chromium (Debian's, through Selenium)
opens the Resources view of each, alternately, ``LOADS`` times. Reported, median and p90:

* ``shell_paint``: first contentful paint of the page (the server-rendered shell);
* ``rows_painted``: the first page of rows on screen (ms since navigation: the HTML, the
  script, ``/api/list?limit=100`` and the paint), with N objects and with 100 (their ratio
  says what paging saves), beside the peer ``kubectl get configmaps`` of the N objects (the
  whole list, which is what a user without the console waits for);
* ``live``: ``ROUNDS`` ``kubectl patch`` of an object on the page's first page: from the start
  of kubectl to the row repainted (the page records the wall-clock time of each change it
  paints), beside the peer ``kubectl get -w`` of that object receiving the same change
  (p50, p99);
* ``timeline``: the same for the object's Timeline view: from the start of kubectl to the
  entry with the patch's diff painted, and which source brought it (``audit``: the local
  cluster's audit feed; ``watch``: the console's own watch of the object, on a cluster without
  the feed).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Final

from bench.command_line import run_benchmark
from bench.results_table import render_table
from setpoint.client import Client
from setpoint.console import ConsoleServer, ConsoleSettings
from setpoint.testing.background_cluster import BackgroundCluster

log = logging.getLogger("bench.console_page_load")

LOADS: Final = 10
ROUNDS: Final = 40
CHROMIUM: Final = os.environ.get("SETPOINT_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER: Final = os.environ.get("SETPOINT_CHROMEDRIVER", "/usr/bin/chromedriver")
BIG, SMALL = "bench-big", "bench-small"


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 1),
        "p90": round(_percentile(values, 0.9), 1),
        "p99": round(_percentile(values, 0.99), 1),
    }


async def _fill(kubeconfig: Path, namespace: str, count: int) -> None:
    async with await Client.from_kubeconfig(str(kubeconfig), max_retries=3) as client:
        for start in range(0, count, 100):
            await asyncio.gather(
                *(
                    client.create(
                        {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "metadata": {"name": f"cm-{index:05d}", "namespace": namespace},
                            "data": {"index": str(index)},
                        }
                    )
                    for index in range(start, min(count, start + 100))
                )
            )


def _browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,900",
    ):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def _load(driver: Any, url: str) -> tuple[float, float]:
    """(first contentful paint, rows painted) in ms since navigation."""
    driver.get(url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = driver.execute_script("return window.consoleRowsPainted || null")
        if rows is not None:
            paint = driver.execute_script(
                "const e = performance.getEntriesByName('first-contentful-paint');"
                "return e.length ? e[0].startTime : null"
            )
            return float(paint or 0.0), float(rows)
        time.sleep(0.01)
    raise RuntimeError(f"{url}: no rows within 60 s")


def _kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def _timeline(driver: Any, kubeconfig: Path, base: str, rounds: int) -> dict[str, Any]:
    """kubectl patch -> the timeline entry with its diff painted."""
    name = "cm-00001"
    driver.get(f"{base}/timeline?apiVersion=v1&kind=ConfigMap&namespace={BIG}&name={name}")
    deadline = time.monotonic() + 30
    while driver.execute_script("return document.getElementById('view').dataset.loaded") != "true":
        if time.monotonic() > deadline:
            raise RuntimeError("the timeline did not load within 30 s")
        time.sleep(0.01)
    latencies, sources = [], set()
    for index in range(rounds):
        marker = f"t{index}-{time.time_ns()}"
        started = time.time()
        _kubectl(
            kubeconfig,
            "patch",
            "configmap",
            name,
            "-n",
            BIG,
            "--type=merge",
            "-p",
            json.dumps({"data": {"round": marker}}),
        )
        deadline = time.monotonic() + 10
        while True:
            painted = driver.execute_script("return window.consoleTimelinePainted || []")
            found = [p for p in painted if marker in p["diff"]]
            if found:
                latencies.append((found[0]["at"] / 1000 - started) * 1000)
                sources.add(found[0]["source"])
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"timeline round {index}: not painted within 10 s")
            time.sleep(0.005)
    return {"ms": _summary(latencies), "sources": sorted(sources)}


def _live(driver: Any, kubeconfig: Path, base: str, rounds: int) -> dict[str, Any]:
    """kubectl patch -> the row repainted on the page, and -> a ``kubectl get -w`` line."""
    name = "cm-00000"
    _load(driver, f"{base}/resources?apiVersion=v1&kind=ConfigMap&namespace={BIG}")
    watcher = subprocess.Popen(
        [
            "kubectl",
            "--kubeconfig",
            str(kubeconfig),
            "get",
            "configmap",
            name,
            "-n",
            BIG,
            "-w",
            "--output-watch-events",
            "-o",
            'jsonpath={.type} {.object.data.round}{"\\n"}',
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    seen: dict[str, float] = {}

    def read() -> None:
        assert watcher.stdout is not None
        for line in watcher.stdout:
            parts = line.split()
            if len(parts) == 2:
                seen[parts[1]] = time.time()

    threading.Thread(target=read, daemon=True).start()
    time.sleep(1.0)  # the watch is open
    page, peer = [], []
    for index in range(rounds):
        marker = f"r{index}"
        started = time.time()
        _kubectl(
            kubeconfig,
            "patch",
            "configmap",
            name,
            "-n",
            BIG,
            "--type=merge",
            "-p",
            json.dumps({"data": {"round": marker}}),
        )
        deadline = time.monotonic() + 10
        painted_at = None
        while time.monotonic() < deadline and painted_at is None:
            changes = driver.execute_script("return window.consoleChanges || []")
            fresh = [c for c in changes if c["name"] == name and c["at"] / 1000 >= started]
            if fresh:
                painted_at = fresh[-1]["at"] / 1000
            else:
                time.sleep(0.005)
        while marker not in seen and time.monotonic() < deadline:
            time.sleep(0.005)
        if painted_at is None or marker not in seen:
            raise RuntimeError(f"round {index}: the change was not seen within 10 s")
        page.append((painted_at - started) * 1000)
        peer.append((seen[marker] - started) * 1000)
        time.sleep(0.05)
    watcher.terminate()
    watcher.wait()
    return {
        "page_ms": _summary(page),
        "kubectl_watch_ms": _summary(peer),
        "ratio_p50": round(statistics.median(page) / statistics.median(peer), 2),
    }


async def _measure(objects: int) -> dict[str, Any]:
    cluster = BackgroundCluster(in_memory=True).start()
    try:
        cluster.create_namespace(BIG)
        cluster.create_namespace(SMALL)
        filled = time.perf_counter()
        await _fill(cluster.kubeconfig_path, BIG, objects)
        await _fill(cluster.kubeconfig_path, SMALL, 100)
        log.info("%d ConfigMaps created in %.1f s", objects + 100, time.perf_counter() - filled)
        server = ConsoleServer(ConsoleSettings(kubeconfig=cluster.kubeconfig_path))
        url = await server.start()
        try:
            figures = await asyncio.to_thread(_browse, cluster.kubeconfig_path, url, objects)
        finally:
            await server.stop()
    finally:
        cluster.stop()
    figures["objects"] = objects
    figures["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return figures


def _browse(kubeconfig: Path, url: str, objects: int) -> dict[str, Any]:
    base = url.split("/?", 1)[0]
    driver = _browser()
    try:
        driver.get(url)  # the token cookie
        big, small, shell, kubectl = [], [], [], []
        for _ in range(LOADS):
            paint, rows = _load(
                driver, f"{base}/resources?apiVersion=v1&kind=ConfigMap&namespace={BIG}"
            )
            shell.append(paint)
            big.append(rows)
            small.append(
                _load(driver, f"{base}/resources?apiVersion=v1&kind=ConfigMap&namespace={SMALL}")[1]
            )
            started = time.perf_counter()
            _kubectl(kubeconfig, "get", "configmaps", "-n", BIG)
            kubectl.append((time.perf_counter() - started) * 1000)
        live = _live(driver, kubeconfig, base, ROUNDS if objects >= 1000 else 10)
        timeline = _timeline(driver, kubeconfig, base, ROUNDS if objects >= 1000 else 10)
    finally:
        driver.quit()
    return {
        "shell_paint_ms": _summary(shell),
        "rows_painted_ms": _summary(big),
        "rows_painted_100_objects_ms": _summary(small),
        "kubectl_get_all_ms": _summary(kubectl),
        "ratio_rows_n_to_100": round(statistics.median(big) / statistics.median(small), 2),
        "ratio_rows_to_kubectl_get": round(statistics.median(big) / statistics.median(kubectl), 3),
        "live": live,
        "timeline": timeline,
    }


def _render(figures: dict[str, Any]) -> str:
    live = figures["live"]
    rows = [
        [
            "shell first paint",
            f"{figures['shell_paint_ms']['p50']}",
            f"{figures['shell_paint_ms']['p90']}",
            "",
        ],
        [
            f"rows painted, {figures['objects']} objects",
            f"{figures['rows_painted_ms']['p50']}",
            f"{figures['rows_painted_ms']['p90']}",
            f"{figures['ratio_rows_n_to_100']}x the 100-object page",
        ],
        [
            "rows painted, 100 objects",
            f"{figures['rows_painted_100_objects_ms']['p50']}",
            f"{figures['rows_painted_100_objects_ms']['p90']}",
            "",
        ],
        [
            f"peer: kubectl get ({figures['objects']} objects)",
            f"{figures['kubectl_get_all_ms']['p50']}",
            f"{figures['kubectl_get_all_ms']['p90']}",
            f"page/kubectl {figures['ratio_rows_to_kubectl_get']}",
        ],
        [
            "live: kubectl patch -> row repainted",
            f"{live['page_ms']['p50']}",
            f"p99 {live['page_ms']['p99']}",
            f"{live['ratio_p50']}x the peer",
        ],
        [
            "peer: kubectl patch -> kubectl get -w line",
            f"{live['kubectl_watch_ms']['p50']}",
            f"p99 {live['kubectl_watch_ms']['p99']}",
            "",
        ],
    ]
    timeline = figures["timeline"]
    rows.append(
        [
            f"timeline: kubectl patch -> entry painted ({', '.join(timeline['sources'])})",
            f"{timeline['ms']['p50']}",
            f"p99 {timeline['ms']['p99']}",
            "",
        ]
    )
    table = render_table(["measure (ms)", "p50", "p90 / p99", "ratio"], rows)
    return table + f"\nload average: {figures['load_average']}"


def _failures(figures: dict[str, Any]) -> list[str]:
    return []


def main(argv: list[str] | None = None) -> None:
    """Run from the command line."""
    run_benchmark(
        "bench.console_page_load", __doc__, _measure, (10_000, 300), _render, _failures, argv
    )


if __name__ == "__main__":
    main()
