"""The rules of user-defined metrics (osdk_metric), and their HTTP receiver."""

from __future__ import annotations

import secrets

import aiohttp
import pytest
from prometheus_client import generate_latest

from setpoint.ansible.user_metrics import UserMetricError, UserMetrics, UserMetricsServer
from setpoint.client.metrics import REGISTRY


def _name(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(4)}"  # the registry is the process's


def _value(name: str) -> float | None:
    return REGISTRY.get_sample_value(name)


def test_each_metric_kind_applies_its_operation() -> None:
    metrics = UserMetrics()
    counter, gauge, histogram, summary = (_name(kind) for kind in ("c", "g", "h", "s"))
    metrics.handle({"name": counter, "description": "d", "counter": {"increment": True}})
    metrics.handle({"name": counter, "description": "d", "counter": {"add": 2.5}})
    assert _value(f"{counter}_total") == 3.5
    metrics.handle({"name": gauge, "description": "d", "gauge": {"set": 7}})
    metrics.handle({"name": gauge, "description": "d", "gauge": {"subtract": 2}})
    metrics.handle({"name": gauge, "description": "d", "gauge": {"decrement": True}})
    assert _value(gauge) == 4.0
    # the first operation given wins, in Operator SDK's order
    metrics.handle({"name": gauge, "description": "d", "gauge": {"increment": True, "set": 100}})
    assert _value(gauge) == 5.0
    metrics.handle({"name": histogram, "description": "d", "histogram": {"observe": 0.3}})
    assert _value(f"{histogram}_count") == 1.0
    metrics.handle({"name": summary, "description": "d", "summary": {"observe": 2}})
    assert _value(f"{summary}_sum") == 2.0
    assert f"# HELP {gauge} d" in generate_latest(REGISTRY).decode()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"name": "x", "description": "d"}, "a request should contain at least one metric"),
        (
            {"name": "x", "description": "d", "counter": {}, "gauge": {}},
            "only one metric can be processed at a time",
        ),
        ({"description": "d", "counter": {}}, "name: required"),
        ([], "the body must be a JSON object (name, description, counter…)"),
    ],
)
def test_invalid_requests_are_refused(document: object, message: str) -> None:
    with pytest.raises(UserMetricError) as refused:
        UserMetrics().handle(document)
    assert str(refused.value) == message


def test_a_counter_never_decreases_and_a_name_keeps_its_type() -> None:
    metrics = UserMetrics()
    counter = _name("c")
    metrics.handle({"name": counter, "description": "d", "counter": {}})
    with pytest.raises(UserMetricError, match=r"^counter metrics cannot decrease in value$"):
        metrics.handle({"name": counter, "description": "d", "counter": {"add": -1}})
    with pytest.raises(UserMetricError) as refused:
        metrics.handle({"name": counter, "description": "d", "histogram": {"observe": 1}})
    assert str(refused.value) == f"cannot change metric type of {counter}, which is a counter"
    # a name the operator's own metrics use
    with pytest.raises(UserMetricError, match=r"^name: 'ansible_operator_reconciles': "):
        metrics.handle({"name": "ansible_operator_reconciles", "description": "d", "gauge": {}})


async def test_the_receiver_answers_as_operator_sdk_s() -> None:
    server = UserMetricsServer(port=0)
    await server.start()
    name = _name("g")
    try:
        url = await server.url()
        async with aiohttp.ClientSession() as session:
            async with session.post(
                url, json={"name": name, "description": "d", "gauge": {"set": 3}}
            ) as ok:
                assert ok.status == 200
            async with session.post(url, json={"name": name, "description": "d"}) as bad:
                assert bad.status == 400
                assert await bad.text() == "a request should contain at least one metric\n"
            async with session.get(url) as wrong_method:
                assert wrong_method.status == 405
    finally:
        await server.stop()
    assert _value(name) == 3.0
