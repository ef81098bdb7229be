"""Results: medians over runs, the ratios setpoint/Kopf and setpoint/raw, the table, the JSON.

``bench/results/latest.json`` holds ``{"machine": {...}, "results": [...], "ratios": [...]}``:
one result per scenario and contestant (the median of the runs for every figure; ``converged``
only if every run converged), and per scenario the ratios of setpoint's figures to each peer's.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import statistics
from datetime import UTC, datetime
from typing import Any, Final

from bench.peers.scenarios import Result

PACKAGES: Final = ("setpoint", "kopf", "kubernetes", "aiohttp", "msgspec", "psutil")
#: The figures compared between contestants (``requests`` as its total).
RATIO_FIGURES: Final = ("seconds", "requests", "peak_rss_mib", "cpu_seconds")


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
        "runs": len(runs),
    }


def _figure(result: dict[str, Any], name: str) -> float:
    if name == "requests":
        return float(sum(result["requests"].values()))
    return float(result[name])


def ratios(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per scenario and figure: setpoint's value over Kopf's and over raw's (None if absent)."""
    by_key = {(r["scenario"], r["contestant"]): r for r in results}
    rows = []
    for scenario in dict.fromkeys(r["scenario"] for r in results):
        ours = by_key.get((scenario, "setpoint"))
        if ours is None:
            continue
        row: dict[str, Any] = {"scenario": scenario}
        for figure in RATIO_FIGURES:
            for peer in ("kopf", "raw"):
                theirs = by_key.get((scenario, peer))
                value = None
                if theirs is not None and _figure(theirs, figure) > 0:
                    value = round(_figure(ours, figure) / _figure(theirs, figure), 3)
                row[f"{figure}_setpoint_over_{peer}"] = value
        rows.append(row)
    return rows


def _requests_text(requests: dict[str, int]) -> str:
    parts = [f"{count} {verb}" for verb, count in requests.items() if count]
    return ", ".join(parts) or "0"


def table(document: dict[str, Any]) -> str:
    """The results as a Markdown table (readable as plain text too)."""
    lines = [
        "| scenario | contestant | N | seconds | requests | writes/obj | peak RSS MiB "
        "| CPU s | API server CPU s | converged |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in document["results"]:
        lines.append(
            f"| {r['scenario']} | {r['contestant']} | {r['objects']:,} | {r['seconds']:.2f} "
            f"| {_requests_text(r['requests'])} | {r['writes_per_object']:g} "
            f"| {r['peak_rss_mib']:.0f} | {r['cpu_seconds']:.2f} "
            f"| {r['apiserver_cpu_seconds']:.2f} | {'yes' if r['converged'] else 'NO'} |"
        )
    lines += [
        "",
        "| scenario | time ÷ Kopf | time ÷ raw | requests ÷ Kopf | requests ÷ raw "
        "| RSS ÷ Kopf | RSS ÷ raw | CPU ÷ Kopf | CPU ÷ raw |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in document["ratios"]:
        cells = [
            "-" if row[f"{figure}_setpoint_over_{peer}"] is None
            else f"{row[f'{figure}_setpoint_over_{peer}']:.2f}"
            for figure in RATIO_FIGURES
            for peer in ("kopf", "raw")
        ]  # fmt: skip
        lines.append(f"| {row['scenario']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
