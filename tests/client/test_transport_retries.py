"""Retries, backoff, re-authentication, warnings and metrics, against a scripted HTTP server."""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from setpoint.client import (
    REGISTRY,
    Client,
    ClientConfig,
    ConnectionFailed,
    RetryPolicy,
    ServerError,
    ServiceUnavailable,
    TokenFile,
    TooManyRequests,
)

from .conftest import ScriptedServer, json_response, status_body

CM_PATH = "/api/v1/namespaces/default/configmaps/x"
CM: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "x", "namespace": "default"},
}


def _retries(host: str, code: str, verb: str) -> float:
    value = REGISTRY.get_sample_value(
        "rest_client_request_retries_total", {"code": code, "verb": verb, "host": host}
    )
    return value or 0.0


def _requests(host: str, code: str, method: str) -> float:
    value = REGISTRY.get_sample_value(
        "rest_client_requests_total", {"code": code, "method": method, "host": host}
    )
    return value or 0.0


def _host(server: ScriptedServer) -> str:
    return server.url.split("://", 1)[1]


async def test_429_with_retry_after_is_retried_and_counted(
    scripted_server: ScriptedServer, client: Client
) -> None:
    host = _host(scripted_server)
    before = _retries(host, "429", "GET")
    scripted_server.answer(
        "GET",
        CM_PATH,
        lambda: json_response(
            status_body(429, "TooManyRequests", "slow down"), 429, {"Retry-After": "0"}
        ),
        lambda: json_response(CM),
    )
    obj = await client.get("v1", "ConfigMap", "x")
    assert obj["metadata"]["name"] == "x"
    assert len(scripted_server.calls("GET", CM_PATH)) == 2
    assert _retries(host, "429", "GET") == before + 1
    assert _requests(host, "429", "GET") >= 1


async def test_503_on_get_is_retried(scripted_server: ScriptedServer, client: Client) -> None:
    scripted_server.answer(
        "GET",
        CM_PATH,
        lambda: web.Response(status=503, text="upstream down"),
        lambda: json_response(CM),
    )
    assert (await client.get("v1", "ConfigMap", "x"))["kind"] == "ConfigMap"
    assert len(scripted_server.calls("GET", CM_PATH)) == 2


async def test_500_on_post_is_not_retried(scripted_server: ScriptedServer, client: Client) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    scripted_server.answer(
        "POST", path, lambda: json_response(status_body(500, "InternalError", "boom"), 500)
    )
    with pytest.raises(ServerError) as caught:
        await client.create(CM)
    assert caught.value.code == 500
    assert caught.value.message == "boom"
    assert len(scripted_server.calls("POST", path)) == 1


async def test_503_with_retry_after_on_post_is_retried(
    scripted_server: ScriptedServer, client: Client
) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    scripted_server.answer(
        "POST",
        path,
        lambda: web.Response(status=503, headers={"Retry-After": "0"}),
        lambda: json_response(CM, 201),
    )
    created = await client.create(CM)
    assert created["metadata"]["name"] == "x"
    assert len(scripted_server.calls("POST", path)) == 2


async def test_retries_are_bounded(scripted_server: ScriptedServer, client: Client) -> None:
    scripted_server.answer(
        "GET", CM_PATH, lambda: json_response(status_body(429, "TooManyRequests", "no"), 429)
    )
    with pytest.raises(TooManyRequests):
        await client.get("v1", "ConfigMap", "x")
    # max_retries=3 in the fixture: one attempt plus three retries.
    assert len(scripted_server.calls("GET", CM_PATH)) == 4


async def test_max_retries_zero_disables_retries(scripted_server: ScriptedServer) -> None:
    scripted_server.answer("GET", CM_PATH, lambda: web.Response(status=503))
    async with await Client.from_config(
        ClientConfig(server=scripted_server.url), max_retries=0
    ) as client:
        with pytest.raises(ServiceUnavailable):
            await client.get("v1", "ConfigMap", "x")
    assert len(scripted_server.calls("GET", CM_PATH)) == 1


def _reset_once() -> tuple[list[int], object]:
    count = [0]

    async def handler(request: web.Request) -> web.StreamResponse:
        count[0] += 1
        if count[0] == 1:
            assert request.transport is not None
            request.transport.abort()  # connection reset before any answer
            return web.Response(status=500)
        if request.method == "POST":
            return json_response(CM, 201)
        return json_response(CM)

    return count, handler


async def test_connection_reset_on_get_is_retried(
    scripted_server: ScriptedServer, client: Client
) -> None:
    count, handler = _reset_once()
    scripted_server.on("GET", CM_PATH, handler)  # type: ignore[arg-type]
    assert (await client.get("v1", "ConfigMap", "x"))["metadata"]["name"] == "x"
    assert count[0] == 2


async def test_connection_reset_on_post_is_not_retried(
    scripted_server: ScriptedServer, client: Client
) -> None:
    count, handler = _reset_once()
    scripted_server.on("POST", "/api/v1/namespaces/default/configmaps", handler)  # type: ignore[arg-type]
    await client.mapper.resource_for("v1", "ConfigMap")
    with pytest.raises(ConnectionFailed) as caught:
        await client.create(CM)
    assert "POST" in str(caught.value)
    assert count[0] == 1


async def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    host = f"127.0.0.1:{port}"
    before = _retries(host, "<error>", "POST")
    async with await Client.from_config(
        ClientConfig(server=f"http://{host}"),
        retry=RetryPolicy(max_retries=2, initial_backoff=0.001, max_backoff=0.002),
    ) as client:
        with pytest.raises(ConnectionFailed) as caught:
            await client.request_json("POST", "/api/v1/namespaces", body={})
    assert host in str(caught.value)
    # Nothing reached the server, so even a POST is retried.
    assert _retries(host, "<error>", "POST") == before + 2


async def test_401_rereads_the_token_file_once(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("old-token\n")
    seen: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers.get("Authorization", ""))
        if request.headers.get("Authorization") != "Bearer new-token":
            token_file.write_text("new-token\n")  # the token rotates while we are rejected
            return json_response(status_body(401, "Unauthorized", "Unauthorized"), 401)
        return json_response(CM)

    scripted_server.on("GET", CM_PATH, handler)
    config = ClientConfig(server=scripted_server.url, credentials=TokenFile(token_file))
    async with await Client.from_config(config) as client:
        assert (await client.get("v1", "ConfigMap", "x"))["kind"] == "ConfigMap"
    assert seen == ["Bearer old-token", "Bearer new-token"]


async def test_warnings_are_logged_once_per_text(
    scripted_server: ScriptedServer, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    headers = {"Warning": '299 - "unknown field \\"spec.foo\\""'}
    scripted_server.answer("GET", CM_PATH, lambda: json_response(CM, 200, headers))
    with caplog.at_level(logging.WARNING, logger="setpoint.client.warnings"):
        await client.get("v1", "ConfigMap", "x")
        await client.get("v1", "ConfigMap", "x")
    messages = [r.getMessage() for r in caplog.records if r.name == "setpoint.client.warnings"]
    assert messages == ['Warning: unknown field "spec.foo"']


async def test_rate_limiter_is_used_when_qps_is_set(scripted_server: ScriptedServer) -> None:
    scripted_server.answer("GET", CM_PATH, lambda: json_response(CM))
    host = _host(scripted_server)
    labels = {"verb": "GET", "host": host}
    before = REGISTRY.get_sample_value("rest_client_rate_limiter_duration_seconds_count", labels)
    async with await Client.from_config(
        ClientConfig(server=scripted_server.url), qps=1000, burst=5
    ) as client:
        await client.get("v1", "ConfigMap", "x")
    after = REGISTRY.get_sample_value("rest_client_rate_limiter_duration_seconds_count", labels)
    # Discovery and the get itself both went through the limiter.
    assert (after or 0) - (before or 0) == 2


async def test_no_rate_limiter_by_default(client: Client) -> None:
    assert client.transport.rate_limiter is None


async def test_retry_waits_at_least_retry_after(
    scripted_server: ScriptedServer, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []

    async def record(delay: float) -> None:
        waits.append(delay)

    monkeypatch.setattr("setpoint.client.transport.asyncio.sleep", record)
    scripted_server.answer(
        "GET",
        CM_PATH,
        lambda: web.Response(status=429, headers={"Retry-After": "7"}),
        lambda: json_response(CM),
    )
    await client.get("v1", "ConfigMap", "x")
    assert waits == [7.0]


@pytest.mark.parametrize(("patch_type", "attempts"), [("merge", 2), ("json", 1)])
async def test_5xx_retries_merge_patches_but_not_json_patches(
    scripted_server: ScriptedServer, client: Client, patch_type: str, attempts: int
) -> None:
    scripted_server.answer(
        "PATCH", CM_PATH, lambda: web.Response(status=500), lambda: json_response(CM)
    )
    body: Any = {"data": {"a": "b"}}
    if patch_type == "json":
        body = [{"op": "add", "path": "/data/a", "value": "b"}]
    try:
        await client.patch("v1", "ConfigMap", "x", body, patch_type=patch_type)
    except ServerError:
        pass
    calls = scripted_server.calls("PATCH", CM_PATH)
    assert len(calls) == attempts
    assert calls[0].headers["Content-Type"].startswith(f"application/{patch_type}")


async def test_5xx_retries_an_apply(scripted_server: ScriptedServer, client: Client) -> None:
    scripted_server.answer(
        "PATCH", CM_PATH, lambda: web.Response(status=500), lambda: json_response(CM)
    )
    applied = await client.apply({**CM, "data": {"a": "b"}}, field_manager="m", force=True)
    assert applied["metadata"]["name"] == "x"
    calls = scripted_server.calls("PATCH", CM_PATH)
    assert len(calls) == 2
    assert calls[0].headers["Content-Type"] == "application/apply-patch+yaml"
    assert calls[0].query["fieldManager"] == "m"
    assert calls[0].query["force"] == "true"


async def test_on_warning_receives_every_warning(scripted_server: ScriptedServer) -> None:
    headers = {"Warning": '299 - "deprecated API"'}
    scripted_server.answer("GET", CM_PATH, lambda: json_response(CM, 200, headers))
    received: list[str] = []
    async with Client.from_config(
        ClientConfig(server=scripted_server.url), on_warning=received.append
    ) as client:
        await client.get("v1", "ConfigMap", "x")
        await client.get("v1", "ConfigMap", "x")
    assert received == ["deprecated API", "deprecated API"]


def _sample(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_request_metrics_count_each_answer_in_its_bucket(
    scripted_server: ScriptedServer, client: Client
) -> None:
    host = _host(scripted_server)
    answer = json_response(CM)
    response_size = len(answer.body)  # type: ignore[arg-type]
    scripted_server.answer("PATCH", CM_PATH, lambda: json_response(CM))
    await client.mapper.resource_for("v1", "ConfigMap")  # discovery is not the request measured

    def snapshot() -> dict[str, float]:
        labels = {"verb": "PATCH", "host": host}
        values: dict[str, float] = {}
        for name in ("rest_client_request_size_bytes", "rest_client_response_size_bytes"):
            values[f"{name}_count"] = _sample(f"{name}_count", labels)
            values[f"{name}_sum"] = _sample(f"{name}_sum", labels)
            for le in ("64.0", "256.0", "+Inf"):
                values[f"{name}_bucket{le}"] = _sample(f"{name}_bucket", {**labels, "le": le})
        values["duration_count"] = _sample("rest_client_request_duration_seconds_count", labels)
        values["duration_inf"] = _sample(
            "rest_client_request_duration_seconds_bucket", {**labels, "le": "+Inf"}
        )
        values["ok"] = _sample(
            "rest_client_requests_total", {"code": "200", "method": "PATCH", "host": host}
        )
        return values

    before = snapshot()
    # A body of exactly 64 bytes belongs to the le="64" bucket (bounds are inclusive).
    padding = "x" * (64 - len(b'{"data":{"k":""}}'))
    await client.patch("v1", "ConfigMap", "x", {"data": {"k": padding}})
    await client.patch("v1", "ConfigMap", "x", {"data": {"k": padding + "y" * 100}})
    after = snapshot()
    delta = {key: after[key] - before[key] for key in after}
    request = "rest_client_request_size_bytes"
    assert delta[f"{request}_count"] == 2
    assert delta[f"{request}_sum"] == 64 + 164
    assert delta[f"{request}_bucket64.0"] == 1
    assert delta[f"{request}_bucket256.0"] == 2  # cumulative, as Prometheus exposes it
    assert delta[f"{request}_bucket+Inf"] == 2
    reply = "rest_client_response_size_bytes"
    assert delta[f"{reply}_count"] == 2
    assert delta[f"{reply}_sum"] == 2 * response_size
    assert delta["duration_count"] == 2
    assert delta["duration_inf"] == 2
    assert delta["ok"] == 2
