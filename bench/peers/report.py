"""Results: medians over runs, the ratios setpoint/Kopf and setpoint/raw, the table, the JSON.

``bench/results/latest.json`` holds ``{"machine": {...}, "results": [...], "ratios": [...]}``:
one result per scenario and contestant (the median of the runs for every figure; ``converged``
only if every run converged), and per scenario the ratios of setpoint's figures (its default
options) to each peer's, and to setpoint's with the ``ignore_own_writes`` opt-in when that ran.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import statistics
from datetime import UTC, datetime
from typing import Any, Final

from bench.peers.processes import SETPOINT_IGNORE_OWN_WRITES
from bench.peers.scenarios import Result

PACKAGES: Final = ("setpoint", "kopf", "kubernetes", "aiohttp", "msgspec", "psutil")
#: The figures compared between contestants (``requests`` as its total).
RATIO_FIGURES: Final = ("seconds", "requests", "peak_rss_mib", "cpu_seconds")
#: Compared too where both contestants have it (fan-out of watching contestants).
SETTLED_CPU: Final = "settled_cpu_seconds"
#: The contestants setpoint (default options) is compared with, when they ran.
PEERS: Final = ("kopf", "raw", SETPOINT_IGNORE_OWN_WRITES)


def machine() -> dict[str, Any]:
    """CPU model, cores, Python and package versions, time of the run."""
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions: dict[str, str] = {}
    for package in PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return {
        "cpu_model": model,
        "cores": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def median_result(runs: list[Result]) -> dict[str, Any]:
    """One result from several runs of the same scenario and contestant."""
    first = runs[0]
    return {
        "scenario": first.scenario,
        "contestant": first.contestant,
        "objects": first.objects,
        "seconds": round(statistics.median(r.seconds for r in runs), 3),
        "requests": {
            verb: int(statistics.median(r.requests[verb] for r in runs)) for verb in first.requests
        },
        "writes_per_object": round(statistics.median(r.writes_per_object for r in runs), 3),
        "peak_rss_mib": round(statistics.median(r.peak_rss_mib for r in runs), 1),
        "cpu_seconds": round(statistics.median(r.cpu_seconds for r in runs), 3),
        "converged": all(r.converged for r in runs),
        "apiserver_cpu_seconds": round(statistics.median(r.apiserver_cpu_seconds for r in runs), 3),
        "other_requests": int(statistics.median(r.other_requests for r in runs)),
        "settled_cpu_seconds": (
            round(statistics.median(settled), 3)
            if (settled := [r.settled_cpu_seconds for r in runs if r.settled_cpu_seconds])
            else None
        ),
        "runs": len(runs),
    }


def _figure(result: dict[str, Any], name: str) -> float | None:
    if name == "requests":
        return float(sum(result["requests"].values()))
    value = result.get(name)
    return None if value is None else float(value)


def ratios(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per scenario and figure: setpoint's value over each of `PEERS`' (None if absent)."""
    by_key = {(r["scenario"], r["contestant"]): r for r in results}
    rows = []
    for scenario in dict.fromkeys(r["scenario"] for r in results):
        ours = by_key.get((scenario, "setpoint"))
        if ours is None:
            continue
        row: dict[str, Any] = {"scenario": scenario}
        for figure in (*RATIO_FIGURES, SETTLED_CPU):
            for peer in PEERS:
                theirs = by_key.get((scenario, peer))
                value = None
                if theirs is not None:
                    mine, other = _figure(ours, figure), _figure(theirs, figure)
                    if mine is not None and other:
                        value = round(mine / other, 3)
                if figure in RATIO_FIGURES or value is not None:
                    row[f"{figure}_setpoint_over_{peer}"] = value
        rows.append(row)
    return rows


def _ratio_text(row: dict[str, Any], figure: str, peer: str) -> str:
    value = row.get(f"{figure}_setpoint_over_{peer}")
    return "-" if value is None else f"{value:.2f}"


def _requests_text(requests: dict[str, int]) -> str:
    parts = [f"{count} {verb}" for verb, count in requests.items() if count]
    return ", ".join(parts) or "0"


def table(document: dict[str, Any]) -> str:
    """The results as a Markdown table (readable as plain text too)."""
    lines = [
        "| scenario | contestant | N | seconds | requests | writes/obj | peak RSS MiB "
        "| CPU s | CPU s settled | API server CPU s | converged |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in document["results"]:
        settled = r.get("settled_cpu_seconds")
        lines.append(
            f"| {r['scenario']} | {r['contestant']} | {r['objects']:,} | {r['seconds']:.2f} "
            f"| {_requests_text(r['requests'])} | {r['writes_per_object']:g} "
            f"| {r['peak_rss_mib']:.0f} | {r['cpu_seconds']:.2f} "
            f"| {'-' if settled is None else f'{settled:.2f}'} "
            f"| {r['apiserver_cpu_seconds']:.2f} | {'yes' if r['converged'] else 'NO'} |"
        )
    lines += [
        "",
        "| scenario | time ÷ Kopf | time ÷ raw | requests ÷ Kopf | requests ÷ raw "
        "| RSS ÷ Kopf | RSS ÷ raw | CPU ÷ Kopf | CPU ÷ raw | settled CPU ÷ Kopf |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in document["ratios"]:
        cells = [
            _ratio_text(row, figure, peer) for figure in RATIO_FIGURES for peer in ("kopf", "raw")
        ]
        cells.append(_ratio_text(row, SETTLED_CPU, "kopf"))
        lines.append(f"| {row['scenario']} | " + " | ".join(cells) + " |")
    opt_in = [
        row for row in document["ratios"]
        if row.get(f"seconds_setpoint_over_{SETPOINT_IGNORE_OWN_WRITES}") is not None
    ]  # fmt: skip
    if opt_in:
        lines += [
            "",
            "| scenario | default ÷ ignore_own_writes: time | requests | RSS | CPU | settled CPU |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for row in opt_in:
            cells = [
                _ratio_text(row, figure, SETPOINT_IGNORE_OWN_WRITES)
                for figure in (*RATIO_FIGURES, SETTLED_CPU)
            ]
            lines.append(f"| {row['scenario']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
