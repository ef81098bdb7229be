"""The in-memory backend keeps ~1 KiB objects in at most twice their JSON size."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Run in a fresh interpreter so that nothing else the test session allocated is counted.
MEASURE = """
import gc, psutil
from setpoint.cluster.apiserver.storage import MemoryStorage
N = 100_000
def obj(i):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i}", "namespace": "default",
                         "labels": {"app": "demo", "tier": "backend"},
                         "uid": f"6d3f0c4e-0000-4000-8000-{i:012d}",
                         "creationTimestamp": "2026-11-22T02:00:00Z"},
            "data": {"config.yaml": "key: value\\n" * 60}}
storage = MemoryStorage()
process = psutil.Process()
gc.collect()
before = process.memory_info().rss
size = 0
for i in range(N):
    size += len(storage.create(f"/core/configmaps/default/cm-{i:06d}", obj(i)).value)
gc.collect()
print(process.memory_info().rss - before, size)
"""


@pytest.mark.slow
def test_rss_per_object_is_at_most_twice_its_json_size() -> None:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE], capture_output=True, text=True, check=True
    ).stdout
    grown, json_bytes = map(int, out.split())
    assert json_bytes / 100_000 > 800, "the objects are about 1 KiB of JSON"
    assert grown <= 2 * json_bytes, f"RSS grew {grown / json_bytes:.2f}x the JSON size"
