"""Smoke test of ``bench.openapi``: it runs in ``--quick`` mode and prints its JSON figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_openapi_benchmark_quick_run() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.openapi", "--quick", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads(result.stdout)
    assert {
        "index_first_ms",
        "api_v1_cached_p50_ms",
        "apis_apps_v1_cached_p50_ms",
        "crd_document_ms",
        "v2_protobuf_first_ms",
    } <= set(figures)
