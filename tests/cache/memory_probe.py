"""Quick RSS measurement of the compact cache (a probe, not a test; the benchmark is bench/).

    .venv/bin/python -m tests.cache.memory_probe [COUNT] [--with-managed-fields]

Builds COUNT ConfigMaps of about 1 KiB of JSON, loads them page by page into a
``MutableStore`` (as the reflector does), and prints the retained RSS per object and per JSON
byte; then the same for plain ``json.loads`` dicts kept in a dict. Each variant runs in a fresh
subprocess so that one does not inherit the other's heap.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from typing import Any

import msgspec
import psutil

PAGE = 500  # items per list page, as the reflector lists
DATA_BYTES = 700  # payload per ConfigMap; with metadata the object is about 1 KiB of JSON


def make(i: int, managed_fields: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": f"config-{i:06d}",
        "namespace": f"team-{i % 20}",
        "uid": f"8c7a3b52-{i:04x}-4b7e-9f1d-{i:012x}"[:36],
        "resourceVersion": str(100000 + i),
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {"app": f"app-{i % 50}", "tier": "backend"},
    }
    if managed_fields:
        metadata["managedFields"] = [
            {
                "manager": "kubectl-client-side-apply",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-01-01T00:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:payload": {}}, "f:metadata": {"f:labels": {}}},
            }
        ]
    payload = (f"{i:08d}" * (DATA_BYTES // 8 + 1))[:DATA_BYTES]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata,
            "data": {"payload": payload}}  # fmt: skip


def pages(count: int, managed_fields: bool) -> tuple[list[bytes], int]:
    bodies = []
    json_bytes = 0
    for start in range(0, count, PAGE):
        items = [make(i, managed_fields) for i in range(start, min(count, start + PAGE))]
        json_bytes += sum(len(msgspec.json.encode(item)) for item in items)
        envelope = {
            "kind": "ConfigMapList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "1"},
        }
        bodies.append(msgspec.json.encode({**envelope, "items": items}))
    return bodies, json_bytes


def measure(variant: str, count: int, managed_fields: bool) -> dict[str, float]:
    from setpoint.cache import MutableStore
    from setpoint.cache.cached_object import ObjectDecoder
    from setpoint.cache.wire import decode_list_page

    bodies, json_bytes = pages(count, managed_fields)
    encoded = msgspec.json.encode(bodies)  # keep the input out of the measured heap
    del bodies
    gc.collect()
    process = psutil.Process()
    before = process.memory_info().rss
    kept: Any
    if variant == "compact":
        store = MutableStore()
        decoder = ObjectDecoder()
        for body in msgspec.json.decode(encoded, type=list[bytes]):
            for item in decode_list_page(body).items or ():
                store.upsert(decoder.decode(item))
        kept = store
    else:
        objects: dict[tuple[str, str], dict[str, Any]] = {}
        for body in msgspec.json.decode(encoded, type=list[bytes]):
            for item in json.loads(body)["items"]:
                objects[(item["metadata"]["namespace"], item["metadata"]["name"])] = item
        kept = objects
    del encoded
    gc.collect()
    retained = process.memory_info().rss - before
    assert len(kept) == count
    return {"bytes_per_object": retained / count, "rss_per_json_byte": retained / json_bytes,
            "json_bytes_per_object": json_bytes / count}  # fmt: skip


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    count = int(args[0]) if args else 10_000
    managed = "--with-managed-fields" in sys.argv
    if "--variant" in sys.argv:
        variant = sys.argv[sys.argv.index("--variant") + 1]
        print(json.dumps(measure(variant, count, managed)))
        return
    for variant in ("compact", "dict"):
        cmd = [sys.executable, "-m", "tests.cache.memory_probe", str(count), "--variant", variant]
        if managed:
            cmd.append("--with-managed-fields")
        result = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)
        print(f"{variant:8s} {count} objects: {result['json_bytes_per_object']:.0f} JSON bytes, "
              f"{result['bytes_per_object']:.0f} RSS bytes per object, "
              f"{result['rss_per_json_byte']:.2f}x the JSON size")  # fmt: skip


if __name__ == "__main__":
    main()
