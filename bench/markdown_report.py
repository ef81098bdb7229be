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
    rows = [
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
        markdown_table(["aim", "met"], list(figures["aims"].items())),
    ]
    return "\n\n".join(parts)


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
    return "\n\n".join(
        [
            markdown_table(["", "value"], rows),
            markdown_table(["aim", "met"], list(figures["aims"].items())),
        ]
    )


def main(argv: list[str]) -> None:
    """Command-line entry point."""
    if len(argv) != 2:
        sys.exit(__doc__)
    apiserver = json.loads(Path(argv[0]).read_text())
    runtime = json.loads(Path(argv[1]).read_text())
    sys.stdout.write(apiserver_tables(apiserver) + "\n\n" + runtime_tables(runtime) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
