"""The probe server answers /healthz and /readyz like controller-runtime's healthz package."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from setpoint.manager.health import HealthChecks, build_probe_app
from setpoint.manager.http_endpoint import HttpEndpoint, parse_bind_address


class Flag:
    def __init__(self, healthy: bool) -> None:
        self.healthy = healthy

    async def check(self) -> None:
        if not self.healthy:
            raise RuntimeError("informers not synced: widgets")


@pytest.fixture
def checks() -> tuple[HealthChecks, HealthChecks]:
    return HealthChecks("healthz"), HealthChecks("readyz")


@pytest.fixture
async def probe_url(checks: tuple[HealthChecks, HealthChecks]) -> AsyncIterator[str]:
    address = parse_bind_address("127.0.0.1:0")
    assert address is not None
    endpoint = HttpEndpoint(build_probe_app(*checks), address)
    await endpoint.start()
    try:
        yield endpoint.url
    finally:
        await endpoint.stop()


async def fetch(url: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text(), response.headers["Content-Type"]


async def test_no_checks_answers_ok_with_a_ping_check(probe_url: str) -> None:
    status, body, content_type = await fetch(probe_url + "/healthz")
    assert (status, body) == (200, "ok")
    assert content_type.startswith("text/plain")
    status, body, _ = await fetch(probe_url + "/readyz?verbose")
    assert status == 200
    assert body == "[+]ping ok\nreadyz check passed\n"


async def test_failing_check_gives_500_with_reason_withheld(
    checks: tuple[HealthChecks, HealthChecks], probe_url: str
) -> None:
    _, readyz = checks
    synced = Flag(False)
    readyz.add("cache-sync", synced.check)
    readyz.add("database", lambda: True)
    status, body, _ = await fetch(probe_url + "/readyz")
    assert status == 500
    assert body == ("[-]cache-sync failed: reason withheld\n[+]database ok\nreadyz check failed\n")
    synced.healthy = True
    assert await fetch(probe_url + "/readyz") == (200, "ok", "text/plain; charset=utf-8")


async def test_single_check_endpoint_tells_the_reason(
    checks: tuple[HealthChecks, HealthChecks], probe_url: str
) -> None:
    healthz, _ = checks
    healthz.add("worker", Flag(False).check)
    status, body, _ = await fetch(probe_url + "/healthz/worker")
    assert status == 500
    assert "informers not synced: widgets" in body
    status, body, _ = await fetch(probe_url + "/healthz/nope")
    assert status == 404
    assert "nope" in body


async def test_excluded_check_does_not_fail_the_probe(
    checks: tuple[HealthChecks, HealthChecks], probe_url: str
) -> None:
    healthz, _ = checks
    healthz.add("flaky", lambda: False)
    healthz.add("ok-check", lambda: None)
    status, body, _ = await fetch(probe_url + "/healthz?exclude=flaky&exclude=ghost&verbose")
    assert status == 200
    assert "[+]flaky excluded: ok\n" in body
    assert "[+]ok-check ok\n" in body
    assert 'no matches for "ghost"' in body


def test_check_names_are_validated() -> None:
    checks = HealthChecks("healthz")
    checks.add("a", lambda: None)
    with pytest.raises(ValueError, match="already registered"):
        checks.add("a", lambda: None)
    with pytest.raises(ValueError, match="part of the probe URL"):
        checks.add("a/b", lambda: None)
    with pytest.raises(TypeError, match="must be callable"):
        checks.add("c", "not callable")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [(":8081", None, 8081), ("127.0.0.1:0", "127.0.0.1", 0), ("[::1]:9000", "::1", 9000)],
)
def test_bind_addresses_parse(text: str, host: str | None, port: int) -> None:
    address = parse_bind_address(text)
    assert address is not None
    assert (address.host, address.port) == (host, port)


def test_zero_disables_and_bad_addresses_are_named() -> None:
    assert parse_bind_address("0") is None
    with pytest.raises(ValueError, match=r"metrics_bind_address.*not host:port"):
        parse_bind_address("8080", option="metrics_bind_address")
    with pytest.raises(ValueError, match="outside 0-65535"):
        parse_bind_address(":70000")
    with pytest.raises(ValueError, match="not a number"):
        parse_bind_address(":http")
