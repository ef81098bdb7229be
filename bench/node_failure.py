"""From a node's kubelet stopping to its pods running elsewhere, on the cluster clock.

    python -m bench.node_failure [--json] [--quick]

A ``LocalCluster`` with three nodes and a ``FakeClock`` runs a Deployment; the kubelet of the
node holding most of its pods is stopped (``setpoint cluster node stop`` sets the same
annotation). The clock is then advanced one simulated second at a time, with
:data:`REAL_PAUSE_SECONDS` of real time after each step for the controllers to act, until
every replica is ``Running`` on another node. Two Deployments are measured in the same run:
one with the tolerations pods get by default (``node.kubernetes.io/unreachable`` for 300 s,
from the DefaultTolerationSeconds admission) and one whose pods tolerate it for 10 s.

Reported for each, in simulated seconds (the cluster clock) from the stop: when the node was
seen ``Unknown``, when its pods were evicted, when all replicas ran elsewhere; the wall seconds
of the whole; and the ratio of the simulated time to the least kube-controller-manager's
timeline allows (``--node-monitor-grace-period`` 50 s, then the toleration). The node
lifecycle controller acts one real second after it first finds a node silent (so that a
FakeClock's jump does not beat the kubelet's renewal): at one simulated second per
:data:`REAL_PAUSE_SECONDS` plus the polling, that real second shows as tens of simulated ones.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

from bench.command_line import run_benchmark
from bench.results_table import render_table
from setpoint.api.clock import FakeClock
from setpoint.cluster.local_cluster import LocalCluster

NODES: Final = 3
#: ``--node-monitor-grace-period`` (1.32): a silent node goes Unknown after this long.
GRACE_SECONDS: Final = 50
STEP_SECONDS: Final = 1.0
REAL_PAUSE_SECONDS: Final = 0.02
LIMIT_SIMULATED_SECONDS: Final = 1200
DEPLOYMENTS: Final = "/apis/apps/v1/namespaces/default/deployments"
PODS: Final = "/api/v1/namespaces/default/pods"


def _deployment(name: str, replicas: int, toleration: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "nginx"}]}
    if toleration is not None:
        spec["tolerations"] = [
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": toleration,
            }
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


async def _pods(api: Any, name: str) -> list[dict[str, Any]]:
    return list((await api.request("GET", f"{PODS}?labelSelector=app%3D{name}")).body["items"])


async def _unknown(api: Any, node: str) -> bool:
    found = (await api.request("GET", f"/api/v1/nodes/{node}")).body
    ready = next(c for c in found["status"]["conditions"] if c["type"] == "Ready")
    return bool(ready["status"] == "Unknown")


def _running(pods: list[dict[str, Any]], away_from: str | None = None) -> int:
    return sum(
        1
        for pod in pods
        if not pod["metadata"].get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase") == "Running"
        and pod["spec"].get("nodeName") != away_from
    )


async def _scenario(replicas: int, toleration: int | None) -> dict[str, Any]:
    from tests.cluster.raw_api import raw_api

    clock = FakeClock()
    name = "web"
    async with (
        LocalCluster(clock=clock, nodes=NODES, https_port=None) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        await api.request("POST", DEPLOYMENTS, _deployment(name, replicas, toleration))
        while True:  # polling the API, as a client would
            pods = await _pods(api, name)
            if _running(pods) == replicas:
                break
            await asyncio.sleep(0.05)
        per_node: dict[str, int] = {}
        for pod in pods:
            per_node[pod["spec"]["nodeName"]] = per_node.get(pod["spec"]["nodeName"], 0) + 1
        failing = max(per_node, key=lambda node: per_node[node])
        began_wall = time.perf_counter()
        began = clock.now()
        reply = await api.request(
            "PATCH",
            f"/api/v1/nodes/{failing}",
            {"metadata": {"annotations": {"setpoint.dev/kubelet": "stopped"}}},
            content_type="application/merge-patch+json",
        )
        assert reply.status == 200, reply.body
        unknown_at: float | None = None
        evicted_at: float | None = None
        while True:
            now = (clock.now() - began).total_seconds()
            pods = await _pods(api, name)
            if unknown_at is None and await _unknown(api, failing):
                unknown_at = now
            if evicted_at is None and any(
                p["metadata"].get("deletionTimestamp") and p["spec"].get("nodeName") == failing
                for p in pods
            ):
                evicted_at = now
            if _running(pods, away_from=failing) == replicas:
                break
            if now > LIMIT_SIMULATED_SECONDS:
                raise RuntimeError(f"pods not replaced within {LIMIT_SIMULATED_SECONDS} s")
            clock.advance(STEP_SECONDS)
            await asyncio.sleep(REAL_PAUSE_SECONDS)
        simulated = (clock.now() - began).total_seconds()
        wall = time.perf_counter() - began_wall
    upstream = GRACE_SECONDS + (300 if toleration is None else toleration)
    return {
        "replicas": replicas,
        "moved": per_node[failing],
        "toleration_seconds": 300 if toleration is None else toleration,
        "node_unknown_at": unknown_at,
        "evicted_at": evicted_at,
        "simulated_seconds": simulated,
        "wall_seconds": round(wall, 2),
        "upstream_least_seconds": upstream,
        "ratio_to_upstream": round(simulated / upstream, 3),
    }


async def measure(replicas: int) -> dict[str, Any]:
    """The figures of one run (see the module docstring)."""
    return {
        "default_tolerations": await _scenario(replicas, None),
        "toleration_10s": await _scenario(replicas, 10),
        "step_seconds": STEP_SECONDS,
        "real_pause_seconds": REAL_PAUSE_SECONDS,
    }


def render(figures: dict[str, Any]) -> str:
    """The human table."""
    rows = []
    for key, label in (("default_tolerations", "default (300 s)"), ("toleration_10s", "10 s")):
        one = figures[key]
        rows.append(
            [
                label,
                f"{one['moved']}/{one['replicas']}",
                one["node_unknown_at"],
                one["evicted_at"],
                one["simulated_seconds"],
                one["wall_seconds"],
                one["upstream_least_seconds"],
                one["ratio_to_upstream"],
            ]
        )
    return render_table(
        [
            "toleration",
            "pods moved",
            "Unknown at s",
            "evicted at s",
            "all running elsewhere s",
            "wall s",
            "upstream least s",
            "ratio",
        ],
        rows,
    )


def failures(figures: dict[str, Any]) -> list[str]:
    """Nothing is judged: the figures are reported."""
    return []


if __name__ == "__main__":
    run_benchmark("bench.node_failure", __doc__, measure, (12, 3), render, failures)
