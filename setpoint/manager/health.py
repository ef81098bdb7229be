"""Liveness and readiness probes: `/healthz` and `/readyz`, answered like controller-runtime.

A check is a callable (sync or async) that raises, or returns False, when unhealthy. The
aggregate endpoint answers `200 ok`, or `500` with one `[+]name ok` / `[-]name failed: reason
withheld` line per check (the reason is withheld because probe endpoints are unauthenticated;
`/healthz/<name>` gives the reason for one check). `?verbose` lists the checks on success too and
`?exclude=name` skips a check. With no checks registered a built-in `ping` check answers.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["HealthCheck", "HealthChecks", "build_probe_app", "ping"]

log = logging.getLogger("setpoint.manager.health")

HealthCheck = Callable[[], "Awaitable[bool | None] | bool | None"]

# A check that hangs must not hang the kubelet's probe; it counts as failed after this long.
CHECK_TIMEOUT = 10.0

_CHECK_NAME_FORBIDDEN = "/?#&= "


def ping() -> None:
    """A check that always passes: the process is up and its event loop answers."""


@dataclass(frozen=True)
class CheckOutcome:
    """The result of running one check."""

    name: str
    healthy: bool
    excluded: bool = False
    reason: str = ""


class HealthChecks:
    """A named set of checks behind one probe endpoint (`healthz` or `readyz`)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._checks: dict[str, HealthCheck] = {}

    def add(self, name: str, check: HealthCheck) -> None:
        """Register `check` under `name`; raises ValueError for a bad or duplicate name."""
        if not name or any(char in name for char in _CHECK_NAME_FORBIDDEN):
            raise ValueError(
                f"{self.kind} check name {name!r} must be non-empty and use no '/', '?', '#', "
                "'&', '=' or spaces (it is part of the probe URL)"
            )
        if name in self._checks:
            raise ValueError(f"{self.kind} check {name!r} is already registered")
        if not callable(check):
            raise TypeError(f"{self.kind} check {name!r} must be callable, got {check!r}")
        self._checks[name] = check

    def names(self) -> list[str]:
        """Registered check names, sorted."""
        return sorted(self._checks)

    async def run_one(self, name: str) -> CheckOutcome:
        """Run the check called `name` (KeyError when unknown)."""
        check = self._checks[name]
        try:
            async with asyncio.timeout(CHECK_TIMEOUT):
                result = check()
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError:
            return CheckOutcome(name, False, reason=f"timed out after {CHECK_TIMEOUT:g}s")
        except Exception as error:
            return CheckOutcome(name, False, reason=str(error) or type(error).__name__)
        if result is False:
            return CheckOutcome(name, False, reason="check returned False")
        return CheckOutcome(name, True)

    async def run_all(self, excluded: set[str]) -> list[CheckOutcome]:
        """Run every check not in `excluded`, concurrently; sorted by name."""
        if not self._checks:
            return [CheckOutcome("ping", True)]
        names = self.names()
        to_run = [name for name in names if name not in excluded]
        results = await asyncio.gather(*(self.run_one(name) for name in to_run))
        outcomes = list(results) + [
            CheckOutcome(name, True, excluded=True) for name in names if name in excluded
        ]
        for outcome in outcomes:
            if not outcome.healthy:
                log.info("%s check %s failed: %s", self.kind, outcome.name, outcome.reason)
        return sorted(outcomes, key=lambda outcome: outcome.name)


def _text(body: str, status: int = 200) -> web.Response:
    from aiohttp import web  # imported when a server starts, not before the first request

    response = web.Response(text=body, status=status, content_type="text/plain", charset="utf-8")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _excluded(request: web.Request) -> set[str]:
    names: set[str] = set()
    for value in request.query.getall("exclude", []):
        names.update(part.strip() for part in value.split(",") if part.strip())
    return names


def _aggregate_handler(checks: HealthChecks) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        excluded = _excluded(request)
        outcomes = await checks.run_all(excluded)
        failed = any(not outcome.healthy for outcome in outcomes)
        if not failed and "verbose" not in request.query:
            return _text("ok")
        lines = []
        for outcome in outcomes:
            if outcome.excluded:
                lines.append(f"[+]{outcome.name} excluded: ok")
            elif outcome.healthy:
                lines.append(f"[+]{outcome.name} ok")
            else:
                lines.append(f"[-]{outcome.name} failed: reason withheld")
        unknown = sorted(excluded - set(checks.names()))
        if unknown:
            quoted = ", ".join(f'"{name}"' for name in unknown)
            lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
        lines.append(f"{checks.kind} check {'failed' if failed else 'passed'}")
        return _text("\n".join(lines) + "\n", status=500 if failed else 200)

    return handle


def _single_handler(checks: HealthChecks) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in checks.names():
            if name == "ping" and not checks.names():
                return _text("ok")
            return _text(f"no {checks.kind} check named {name!r}\n", status=404)
        outcome = await checks.run_one(name)
        if outcome.healthy:
            return _text("ok")
        return _text(f"internal server error: {outcome.reason}\n", status=500)

    return handle


def build_probe_app(healthz: HealthChecks, readyz: HealthChecks) -> web.Application:
    """The aiohttp application serving `/healthz`, `/readyz` and their per-check sub-paths."""
    from aiohttp import web  # imported when a server starts, not before the first request

    app = web.Application()
    for checks in (healthz, readyz):
        app.router.add_get(f"/{checks.kind}", _aggregate_handler(checks))
        app.router.add_get(f"/{checks.kind}/", _aggregate_handler(checks))
        app.router.add_get(f"/{checks.kind}/{{name}}", _single_handler(checks))
    return app
