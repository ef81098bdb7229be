"""``python -m bench``: the counters it reads, its regression gate, its output shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.peers.check import regressions
from bench.peers.cluster import Requests
from bench.peers.processes import CONTESTANTS, DEFAULT_CONTESTANTS, SETPOINT_IGNORE_OWN_WRITES
from bench.peers.reconciles import reconciles_in
from bench.peers.report import ratios, table

ROOT = Path(__file__).resolve().parents[2]
VERBS = {"get", "list", "watch", "create", "update", "patch", "delete"}


def _sample(name: str, client: str, verb: str, resource: str, value: int, code: str = "200") -> str:
    """One exposition line as the cluster's /metrics writes it."""
    scope = (
        "" if not resource else ("namespace" if verb in ("LIST", "WATCH", "POST") else "resource")
    )
    code_label = f'code="{code}",' if name == "apiserver_request_total" else ""
    return (
        f'{name}{{client="{client}",{code_label}component="apiserver",group="",'
        f'resource="{resource}",scope="{scope}",subresource="",verb="{verb}",'
        f'version="{"v1" if resource else ""}"}} {value}'
    )


WATCH_OPEN = _sample("apiserver_longrunning_requests", "setpoint", "WATCH", "configmaps", 1)
WATCH_ENDED = _sample("apiserver_request_total", "setpoint", "WATCH", "configmaps", 1, code="0")
METRICS = "\n".join(
    [
        _sample("apiserver_request_total", "setpoint", "LIST", "configmaps", 1),
        _sample("apiserver_request_total", "setpoint", "GET", "", 3),
        _sample("apiserver_request_total", "setpoint", "APPLY", "configmaps", 5),
        _sample("apiserver_request_total", "kopf", "POST", "configmaps", 7, code="201"),
        WATCH_OPEN,
    ]
)


def test_requests_by_verb_count_apply_as_patch_and_leave_discovery_apart() -> None:
    counted = Requests.parse(METRICS)
    assert counted.by_verb(("setpoint",)) == {
        "get": 0, "list": 1, "watch": 1, "create": 0, "update": 0, "patch": 5, "delete": 0,
    }  # fmt: skip
    assert counted.non_resource(("setpoint",)) == 3
    assert counted.by_verb(("kopf",))["create"] == 7


def test_a_watch_that_ends_is_not_counted_twice() -> None:
    before = Requests.parse(METRICS)
    ended = METRICS.replace(WATCH_OPEN, WATCH_ENDED)
    assert Requests.parse(ended).since(before).by_verb(("setpoint",))["watch"] == 0


def _document(seconds: float, requests: float, converged: bool = True) -> dict[str, object]:
    row = {
        "scenario": "fanout",
        "seconds_setpoint_over_kopf": seconds,
        "requests_setpoint_over_raw": requests,
    }
    result = {"scenario": "fanout", "contestant": "setpoint", "converged": converged}
    return {"results": [result], "ratios": [row]}


def test_the_gate_tolerates_noise_but_not_regressions() -> None:
    baseline = _document(0.30, 1.00)
    assert regressions(baseline, _document(0.40, 1.05)) == []
    slower = regressions(baseline, _document(0.50, 1.00))
    assert len(slower) == 1 and "seconds_setpoint_over_kopf" in slower[0]
    chattier = regressions(baseline, _document(0.30, 1.20))
    assert len(chattier) == 1 and "requests_setpoint_over_raw" in chattier[0]
    assert regressions(baseline, _document(0.30, 1.00, converged=False))


def _result(
    contestant: str, seconds: float, cpu: float, settled: float | None
) -> dict[str, object]:
    return {
        "scenario": "fanout", "contestant": contestant, "objects": 10, "seconds": seconds,
        "requests": {"patch": 20}, "writes_per_object": 2.0, "peak_rss_mib": 40.0,
        "cpu_seconds": cpu, "settled_cpu_seconds": settled, "apiserver_cpu_seconds": 0.1,
        "converged": True,
    }  # fmt: skip


def test_the_ignore_own_writes_mode_is_a_contestant_compared_with_the_default() -> None:
    opted_in = CONTESTANTS[SETPOINT_IGNORE_OWN_WRITES]
    assert dict(opted_in.env) == {"BENCH_IGNORE_OWN_WRITES": "1"}
    assert (
        opted_in.argv("ns", Path("kubeconfig"))[:4]
        == CONTESTANTS["setpoint"].argv("ns", Path("kubeconfig"))[:4]
    )
    assert SETPOINT_IGNORE_OWN_WRITES not in DEFAULT_CONTESTANTS
    results = [
        _result("setpoint", 2.0, 1.1, 1.2),
        _result(SETPOINT_IGNORE_OWN_WRITES, 2.0, 1.0, 1.0),
        _result("kopf", 8.0, 4.0, 4.0),
        _result("raw", 2.0, 1.0, None),
    ]
    (row,) = ratios(results)
    assert row["seconds_setpoint_over_kopf"] == 0.25
    assert row[f"cpu_seconds_setpoint_over_{SETPOINT_IGNORE_OWN_WRITES}"] == 1.1
    assert row[f"settled_cpu_seconds_setpoint_over_{SETPOINT_IGNORE_OWN_WRITES}"] == 1.2
    assert row["settled_cpu_seconds_setpoint_over_kopf"] == 0.3
    assert "settled_cpu_seconds_setpoint_over_raw" not in row  # raw does not watch
    text = table({"results": results, "ratios": [row]})
    assert "| fanout | 1.00 | 1.00 | 1.00 | 1.10 | 1.20 |" in text  # default ÷ opt-in


def test_reconciles_are_summed_over_every_result_of_every_controller() -> None:
    metrics = "\n".join(
        [
            "# HELP controller_runtime_reconcile_total Total number of reconciliations",
            'controller_runtime_reconcile_total{controller="widget",result="success"} 1998.0',
            'controller_runtime_reconcile_total{controller="widget",result="error"} 2.0',
            'controller_runtime_reconcile_total{controller="other",result="requeue"} 0.0',
            'controller_runtime_reconcile_errors_total{controller="widget"} 2.0',
        ]
    )
    assert reconciles_in(metrics) == 2000


@pytest.mark.slow
@pytest.mark.timeout(320)
def test_a_quick_run_writes_the_promised_shape(tmp_path: Path) -> None:
    out = tmp_path / "latest.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--quick",
            "--contestants",
            "setpoint,raw",
            "--scenarios",
            "fanout,idle",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    document = json.loads(out.read_text())
    assert {"cpu_model", "cores", "python", "packages"} <= document["machine"].keys()
    pairs = {(r["scenario"], r["contestant"]) for r in document["results"]}
    assert pairs == {("fanout", "setpoint"), ("fanout", "raw"), ("idle", "setpoint")}
    for result in document["results"]:
        assert set(result["requests"]) == VERBS
        assert result["converged"] is True
        assert result["objects"] == 100
    fanout = {r["contestant"]: r for r in document["results"] if r["scenario"] == "fanout"}
    assert fanout["raw"]["requests"]["list"] == 1
    assert fanout["raw"]["writes_per_object"] == 2
    ratios = {row["scenario"]: row for row in document["ratios"]}
    assert ratios["fanout"]["seconds_setpoint_over_raw"] > 0
