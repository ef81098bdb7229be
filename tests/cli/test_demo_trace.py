"""`setpoint demo` runs its operators with the reconcile trace on.

The demo runs every example operator in one `setpoint run`, which serves one metrics endpoint:
its controllers view lists the controllers of all of them, and they share one trace.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from setpoint.cli.demo.session import DemoSession

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).parents[2] / "examples"


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def test_the_demo_traces_every_operator_on_one_endpoint() -> None:
    session = DemoSession.start(EXAMPLES, run_pods=False)
    try:
        base = session.metrics_url.removesuffix("/metrics") + "/debug/setpoint"
        deadline = time.monotonic() + 180
        view: dict[str, Any] = {}
        while time.monotonic() < deadline:
            try:
                view = get(f"{base}/controllers")
            except (urllib.error.URLError, ConnectionError):
                view = {}
            if len(view.get("controllers", [])) > 1 and view["trace"]["lastSeq"] > 0:
                break
            time.sleep(0.5)
        assert view["trace"]["enabled"] is True and view["trace"]["capacity"] == 10_000
        names = {controller["name"] for controller in view["controllers"]}
        assert len(names) == len(view["controllers"]) > 1, names
        records = get(f"{base}/trace")["records"]
        assert {record["controller"] for record in records} - {None} > set()
    finally:
        session.stop()
