"""Fault injection in the local cluster, and the runtime under it: 429/503 are retried after
Retry-After, resets and 500s are retried when safe, rest_client metrics count it all, and an
operator converges with a fifth of its requests failing, without duplicate children."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import CollectorRegistry

from setpoint.client.client import Client
from setpoint.client.errors import ApiError, ConnectionFailed
from setpoint.client.metrics import REGISTRY
from setpoint.cluster.apiserver.http.fault_injection import (
    FaultRule,
    FaultSpecError,
    parse_fault_spec,
)
from setpoint.cluster.local_cluster import LocalCluster
from setpoint.testing import run_operator
from tests.faults.support import convergence, parent, wait_converged, write_operator

pytestmark = pytest.mark.slow


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    """Sum of the samples of ``name`` whose labels include ``labels``."""
    total = 0.0
    for metric in registry.collect():
        for s in metric.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                total += s.value
    return total


def test_a_spec_reads_as_rules_and_bad_ones_say_what_is_wrong() -> None:
    rules, seed = parse_fault_spec("429=0.1:2,reset=0.05;verbs=create|update;resources=pods;seed=7")
    assert seed == 7
    assert rules == [
        FaultRule("429", 0.1, frozenset({"create", "update"}), frozenset({"pods"}), 2.0),
        FaultRule("reset", 0.05, frozenset({"create", "update"}), frozenset({"pods"})),
    ]
    for bad, words in (
        ("boom=0.1", "unknown fault 'boom'"),
        ("503=2", "fraction must be in [0, 1]"),
        ("503=0.1;verbs=fly", "unknown verbs fly"),
        ("503", "expected FAULT=FRACTION"),
        ("", "empty fault spec"),
    ):
        with pytest.raises(FaultSpecError, match=words.replace("[", r"\[").replace("]", r"\]")):
            parse_fault_spec(bad)


async def test_the_cli_refuses_a_bad_spec_in_one_line() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "setpoint", "cluster", "serve", "--faults", "429=x",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert "Invalid value for --faults: expected FAULT=FRACTION[:PARAM] with numbers" in (
        stderr.decode()
    )


async def test_injected_answers_look_like_the_api_servers() -> None:
    async with LocalCluster(in_memory=True, controllers=False, https_port=None) as cluster:
        headers = {"Authorization": f"Bearer {cluster.token}"}
        url = f"{cluster.url}/api/v1/namespaces/default/configmaps"
        async with aiohttp.ClientSession(headers=headers) as session:
            cluster.faults.set("429=1:3;verbs=list")
            async with session.get(url) as response:
                assert response.status == 429
                assert response.headers["Retry-After"] == "3"
                body = await response.json()
            assert body["reason"] == "TooManyRequests" and body["code"] == 429
            assert body["message"] == "Too many requests, please try again later."
            assert body["details"]["retryAfterSeconds"] == 3
            # Discovery, /version and other verbs are not affected by this rule.
            async with session.get(f"{cluster.url}/api/v1") as response:
                assert response.status == 200
            cluster.faults.set("503=1:0;resources=configmaps")
            async with session.get(url) as response:
                assert response.status == 503 and "Retry-After" not in response.headers
                assert (await response.json())["reason"] == "ServiceUnavailable"
            cluster.faults.set("500=1;resources=secrets")
            async with session.get(url) as response:
                assert response.status == 200
            async with session.get(f"{cluster.url}/api/v1/namespaces/default/secrets") as response:
                assert response.status == 500
                assert (await response.json())["reason"] == "InternalError"
            cluster.faults.set("reset=1;verbs=create")
            with pytest.raises(aiohttp.ClientError):
                async with session.post(url, json=parent("reset", "1")) as response:
                    await response.read()
            cluster.faults.clear()
            async with session.get(f"{url}/reset") as response:
                assert response.status == 404  # a reset request never took effect
        assert cluster.faults.total("reset") == 1 and cluster.faults.total("429") == 1
        assert cluster.faults.total() == 4


async def test_the_client_retries_after_retry_after_and_counts_it() -> None:
    async with (
        LocalCluster(in_memory=True, controllers=False) as cluster,
        await Client.from_kubeconfig(str(cluster.kubeconfig_path)) as client,
    ):
        host = client.transport.host
        before_429 = sample(REGISTRY, "rest_client_requests_total", code="429", host=host)
        before_retries = sample(
            REGISTRY, "rest_client_request_retries_total", code="429", host=host
        )
        cluster.faults.set("429=0.5:1;verbs=get|create;seed=3")
        loop = asyncio.get_running_loop()
        started = loop.time()
        for index in range(6):  # creates are retried too: a 429 was never acted on
            await client.create(parent(f"c{index}", "1"), namespace="default")
        for index in range(6):
            await client.get("v1", "ConfigMap", f"c{index}", namespace="default")
        elapsed = loop.time() - started
        injected = cluster.faults.total("429")
        assert injected > 0
        retried = (
            sample(REGISTRY, "rest_client_request_retries_total", code="429", host=host)
            - before_retries
        )
        answered = sample(REGISTRY, "rest_client_requests_total", code="429", host=host)
        assert answered - before_429 == injected == retried
        assert elapsed >= injected * 1.0  # every retry waited Retry-After (1 s) at least

        cluster.faults.set("503=0.3:0,500=0.2;verbs=get;seed=5")
        for index in list(range(6)) * 2:  # reads are retried after 5xx even without Retry-After
            await client.get("v1", "ConfigMap", f"c{index}", namespace="default")
        for code in ("503", "500"):
            assert cluster.faults.total(code) > 0
            assert sample(REGISTRY, "rest_client_request_retries_total", code=code, host=host) > 0
        # A reset on a kept-alive connection is retried once by aiohttp itself; a second one
        # reaches the client's policy, which retries reads (label code="<error>").
        cluster.faults.set("reset=0.4;verbs=get;seed=6")
        for index in list(range(6)) * 2:
            await client.get("v1", "ConfigMap", f"c{index}", namespace="default")
        assert cluster.faults.total("reset") > 0
        assert sample(REGISTRY, "rest_client_request_retries_total", code="<error>", host=host) > 0

        cluster.faults.set("500=1;verbs=create")
        with pytest.raises(ApiError) as refused:
            await client.create(parent("never", "1"), namespace="default")
        assert refused.value.code == 500  # a POST without Retry-After is not repeated
        cluster.faults.set("reset=1;verbs=create")
        with pytest.raises(ConnectionFailed):
            await client.create(parent("never", "1"), namespace="default")


async def test_an_operator_converges_with_a_fifth_of_its_requests_failing(
    tmp_path: Path,
) -> None:
    target = str(write_operator(tmp_path))
    names = {f"w{index}": str(index) for index in range(30)}
    async with (
        LocalCluster(in_memory=True, controllers=False) as cluster,
        await Client.from_kubeconfig(str(cluster.kubeconfig_path)) as client,
    ):
        await client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "faulty"}}
        )
        for name, size in names.items():
            await client.create(parent(name, size), namespace="faulty")
        cluster.faults.set("429=0.05:1,500=0.05,503=0.05:1,reset=0.05,latency=0.1:0.05;seed=20")
        retries_before = sample(REGISTRY, "rest_client_request_retries_total")
        errors_before = sample(REGISTRY, "controller_runtime_reconcile_errors_total")
        async with run_operator(target, kubeconfig=cluster.kubeconfig_path, namespace="faulty"):
            await asyncio.sleep(2)
            for name in list(names)[:5]:  # changes while faults go on
                names[name] = f"{names[name]}-changed"
                await _update_size(client, name, names[name])
            # Faults stay on while the operator converges (the test's reads are retried too).
            converged_after = await wait_converged(client, "faulty", names, limit=180)
            await asyncio.sleep(3)  # no late duplicate or flapping write
            cluster.faults.clear()
            assert await convergence(client, "faulty", names) == []
        injected = dict(cluster.faults.injected)
        retries = sample(REGISTRY, "rest_client_request_retries_total") - retries_before
        errors = sample(REGISTRY, "controller_runtime_reconcile_errors_total") - errors_before
    totals = {fault: sum(n for (f, _, _), n in injected.items() if f == fault) for fault in
              ("429", "500", "503", "reset", "latency")}  # fmt: skip
    assert all(totals[fault] > 0 for fault in ("429", "500", "503", "reset")), totals
    assert retries > 0
    print(
        f"FIGURES faults injected {totals}; client retries {retries:.0f}; reconcile errors "
        f"(requeued) {errors:.0f}; converged {converged_after:.1f}s after the last change"
    )


async def _update_size(client: Client, name: str, size: str) -> None:
    for _ in range(20):  # the test's own writes meet the faults too
        try:
            current = await client.get("v1", "ConfigMap", name, namespace="faulty")
            current["data"]["size"] = size
            await client.update(current)
            return
        except (ApiError, ConnectionFailed):
            await asyncio.sleep(0.1)
    raise AssertionError(f"could not update {name}")
