"""Markdown tables of saved benchmark results, for ``docs/benchmarks.md``.

python -m bench.apiserver --json > api.json
python -m bench.runtime --json > runtime.json
python -m bench.markdown_report api.json runtime.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.results_table import format_value


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table, value columns right-aligned."""
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join([":---", *["---:"] * (len(header) - 1)]) + "|")
    for row in rows:
        lines.append("| " + " | ".join(format_value(cell) for cell in row) + " |")
    return "\n".join(lines)


def apiserver_tables(figures: dict[str, Any]) -> str:
    """The API server table, ratios and aims."""
    targets = ("memory", "sqlite", "kmock")

    def row(label: str, key: str, ceiling: object = None) -> list[object]:
        return [label, *(figures[t].get(key) for t in targets), ceiling]

    ceiling = figures["ceiling"]
    rows: list[list[object]] = [
        row("creates/s, 1 in flight", "creates_per_s_1", ceiling["creates_per_s_1"]),
        row("creates/s, 16 in flight", "creates_per_s_16", ceiling["creates_per_s_16"]),
        row("list of 10,000 (ms)", "list_10k_ms"),
        row("objects in the list phase", "list_objects"),
        row("list of those (ms)", "list_ms"),
        row("the same in pages of 500 (ms)", "list_paged_ms"),
        row("watch fan-out, 10 watchers (events/s)", "watch_fanout_events_per_s"),
        row("  creates/s meanwhile (4 in flight)", "watch_writes_per_s"),
        row("objects stored at the end", "stored_objects"),
        row("RSS at 100,000 (MiB)", "rss_100k_mib"),
        row("RSS at the end (MiB)", "rss_at_stored_mib"),
        row("RSS at start (MiB)", "rss_baseline_mib"),
        row("JSON bytes per object", "json_bytes_per_object"),
        row("RSS growth per object (bytes)", "rss_bytes_per_object"),
        row("RSS growth per JSON byte", "rss_per_json_byte"),
    ]
    header = ["", "setpoint in-memory", "setpoint SQLite", "KMock", "HTTP ceiling"]
    parts = [
        markdown_table(header, rows),
        markdown_table(["ratio", "value"], list(figures["ratios"].items())),
    ]
    return "\n\n".join(parts)


def apiserver_aims(figures: dict[str, Any]) -> str:
    """The API server's aims: the figure each is judged on, and whether it is met."""
    ratios, aims = figures["ratios"], figures["aims"]
    memory, sqlite = figures["memory"], figures["sqlite"]
    rows: list[list[object]] = [
        ["in-memory creates/s (16 in flight) ≥ 50 % of the HTTP ceiling",
         f"{format_value(ratios['memory_over_ceiling'] * 100)} %",
         aims["memory_creates_ge_50pct_ceiling"]],
        ["in-memory creates/s ≥ 10x KMock's (16 in flight; 1 in flight)",
         f"{format_value(ratios['memory_over_kmock'])}x; "
         f"{format_value(ratios['memory_over_kmock_1'])}x",
         aims["memory_creates_ge_10x_kmock"]],
        ["SQLite creates/s (16 in flight) ≥ 25 % of the HTTP ceiling",
         f"{format_value(ratios['sqlite_over_ceiling'] * 100)} %",
         aims["sqlite_creates_ge_25pct_ceiling"]],
        ["list of 10,000 objects < 250 ms (in-memory; SQLite)",
         f"{format_value(memory['list_10k_ms'])} ms; {format_value(sqlite['list_10k_ms'])} ms",
         _both(aims["memory_list_10k_lt_250ms"], aims["sqlite_list_10k_lt_250ms"])],
        ["RSS per stored object ≤ 2x its JSON size (in-memory; SQLite)",
         f"{format_value(memory['rss_per_json_byte'])}x; "
         f"{format_value(sqlite['rss_per_json_byte'])}x",
         _both(aims["memory_rss_le_2x_json"], aims["sqlite_rss_le_2x_json"])],
    ]  # fmt: skip
    return markdown_table(["aim", "measured", "met"], rows)


def runtime_aims(figures: dict[str, Any]) -> str:
    """The runtime's aims: the figure each is judged on, and whether it is met."""
    aims = figures["aims"]
    rows: list[list[object]] = [
        ["cache ≤ 1.5x the objects' JSON size in RSS (10,000; 100,000)",
         f"{format_value(figures['cache_rss_per_json_byte_10k'])}x; "
         f"{format_value(figures['cache_rss_per_json_byte_100k'])}x",
         _both(aims["cache_10k_le_1_5x_json"], aims["cache_100k_le_1_5x_json"])],
        ["(plain dicts take 4-5x)",
         f"{format_value(figures['dict_rss_per_json_byte_10k'])}x; "
         f"{format_value(figures['dict_rss_per_json_byte_100k'])}x", None],
        ["event-to-reconcile p99 ≤ 50 ms at 200 events/s",
         f"{format_value(figures['latency_p99_ms'])} ms", aims["latency_p99_le_50ms"]],
        ["work queue ≥ 100,000 ops/s (1 worker; 8 workers)",
         f"{format_value(figures['queue_ops_per_s_1'])}; "
         f"{format_value(figures['queue_ops_per_s_8'])}",
         _both(aims["queue_1_ge_100k_ops"], aims["queue_8_ge_100k_ops"])],
        ["syncing 10,000 Pods never blocks the loop > 100 ms at a time",
         f"{format_value(figures['max_loop_block_ms'])} ms", aims["loop_block_le_100ms"]],
    ]  # fmt: skip
    return markdown_table(["aim", "measured", "met"], rows)


def _both(first: bool | None, second: bool | None) -> str:
    if first and second:
        return "yes"
    if first is False and second is False:
        return "no"
    return f"{format_value(first)}; {format_value(second)}"


def runtime_tables(figures: dict[str, Any]) -> str:
    """The runtime table and aims."""
    keys = [
        ("work queue ops/s, 1 worker", "queue_ops_per_s_1"),
        ("work queue ops/s, 8 workers", "queue_ops_per_s_8"),
        ("JSON bytes per ConfigMap (with managedFields)", "json_bytes_per_object_10k"),
        ("cache RSS per JSON byte, 10,000", "cache_rss_per_json_byte_10k"),
        ("cache RSS per JSON byte, 100,000", "cache_rss_per_json_byte_100k"),
        ("dicts RSS per JSON byte, 10,000", "dict_rss_per_json_byte_10k"),
        ("dicts RSS per JSON byte, 100,000", "dict_rss_per_json_byte_100k"),
        ("cache RSS bytes per object, 10,000", "cache_rss_bytes_per_object_10k"),
        ("dicts RSS bytes per object, 10,000", "dict_rss_bytes_per_object_10k"),
        ("cache RSS per JSON byte w/o managedFields, 10,000",
         "cache_rss_per_json_byte_without_managed_fields_10k"),
        ("cache RSS per JSON byte w/o managedFields, 100,000",
         "cache_rss_per_json_byte_without_managed_fields_100k"),
        ("cache / dicts memory, 10,000", "cache_over_dict_10k"),
        ("event-to-reconcile p50 (ms)", "latency_p50_ms"),
        ("event-to-reconcile p99 (ms)", "latency_p99_ms"),
        ("event-to-reconcile max (ms)", "latency_max_ms"),
        ("reconciles measured", "latency_samples"),
        ("writer rate (patches/s)", "writer_rate_per_s"),
        ("patch round trip p50 (ms), included above", "write_round_trip_p50_ms"),
        ("patch round trip p99 (ms), included above", "write_round_trip_p99_ms"),
        ("Kopf peer, event-to-handler p50 (ms)", "kopf_latency_p50_ms"),
        ("Kopf peer, event-to-handler p99 (ms)", "kopf_latency_p99_ms"),
        ("Kopf handler calls measured", "kopf_latency_samples"),
        ("setpoint p99 / Kopf p99", "latency_p99_over_kopf"),
        ("max event-loop block, 10,000-Pod sync (ms)", "max_loop_block_ms"),
        ("Pods synced", "pods_synced"),
        ("Pod sync time (s)", "pod_sync_seconds"),
    ]  # fmt: skip
    rows = [[label, figures.get(key)] for label, key in keys]
    return markdown_table(["", "value"], rows)


def main(argv: list[str]) -> None:
    """Command-line entry point."""
    if len(argv) != 2:
        sys.exit(__doc__)
    apiserver = json.loads(Path(argv[0]).read_text())
    runtime = json.loads(Path(argv[1]).read_text())
    sections = [
        f"<!-- API server results, run {apiserver['run']['date']} -->",
        apiserver_tables(apiserver),
        "<!-- API server aims -->",
        apiserver_aims(apiserver),
        f"<!-- runtime results, run {runtime['run']['date']} -->",
        runtime_tables(runtime),
        "<!-- runtime aims -->",
        runtime_aims(runtime),
    ]
    sys.stdout.write("\n\n".join(sections) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
