"""User-defined metrics: what the ``operator_sdk.util.osdk_metric`` module sends.

A task such as ``osdk_metric: {name: my_things, description: ..., counter: {increment: true}}``
posts the metric as JSON to the operator (Operator SDK's ``ansible-operator`` listens on
``localhost:5050/metrics`` for it, ``internal/ansible/apiserver``). The operator creates the
counter, gauge, histogram or summary the first time it sees the name and applies the operation;
the metric is then served on ``/metrics`` with the others. The rules and error messages are
Operator SDK's (``internal/ansible/metrics``): exactly one of ``counter``, ``gauge``,
``histogram``, ``summary``; a name keeps its first type; a counter never decreases.

:class:`UserMetricsServer` is the HTTP end, on the loopback interface; runs find it through
``SETPOINT_ANSIBLE_METRICS_URL``, which setpoint's ``osdk_metric`` uses by default.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from prometheus_client import Counter, Gauge, Histogram, Summary

from setpoint.client.metrics import REGISTRY

__all__ = [
    "DEFAULT_USER_METRICS_PORT",
    "UserMetricError",
    "UserMetrics",
    "UserMetricsServer",
]

log = logging.getLogger("setpoint.ansible.metrics")

#: Operator SDK's metrics receiver listens on localhost:5050 (the module's default address).
DEFAULT_USER_METRICS_PORT = 5050
_KINDS = ("counter", "gauge", "histogram", "summary")


class UserMetricError(ValueError):
    """The posted metric is invalid (Operator SDK answers 400 with the message)."""


def _number(operation: Mapping[str, Any], name: str) -> float:
    value = operation.get(name)
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UserMetricError(f"{name}: must be a number, got {value!r}")
    return float(value)


class UserMetrics:
    """The metrics posted so far, by name (one set per process, like Operator SDK's)."""

    def __init__(self) -> None:
        self._metrics: dict[str, Counter | Gauge | Histogram | Summary] = {}
        self._lock = threading.Lock()

    def handle(self, document: Any) -> None:
        """Create the metric of ``document`` if new and apply its operation."""
        if not isinstance(document, Mapping):
            raise UserMetricError("the body must be a JSON object (name, description, counter…)")
        given = [kind for kind in _KINDS if document.get(kind) is not None]
        if len(given) > 1:
            raise UserMetricError("only one metric can be processed at a time")
        if not given:
            raise UserMetricError("a request should contain at least one metric")
        kind = given[0]
        operation = document[kind]
        if not isinstance(operation, Mapping):
            raise UserMetricError(f"{kind}: must be an object")
        name = document.get("name")
        if not isinstance(name, str) or not name:
            raise UserMetricError("name: required")
        metric = self._ensure(name, str(document.get("description") or ""), kind)
        if isinstance(metric, Gauge):
            if kind != "gauge":
                raise UserMetricError(f"cannot change metric type of {name}, which is a gauge")
            self._gauge(metric, operation)
        elif isinstance(metric, Counter):
            if kind != "counter":
                raise UserMetricError(f"cannot change metric type of {name}, which is a counter")
            add = _number(operation, "add")
            if operation.get("increment"):
                metric.inc()
            elif add:
                if add < 0:
                    raise UserMetricError("counter metrics cannot decrease in value")
                metric.inc(add)
        else:
            if kind not in ("histogram", "summary"):
                raise UserMetricError(
                    f"cannot change metric type of {name}, which is a histogram or summary"
                )
            metric.observe(_number(operation, "observe"))

    def _ensure(
        self, name: str, description: str, kind: str
    ) -> Counter | Gauge | Histogram | Summary:
        with self._lock:
            metric = self._metrics.get(name)
            if metric is not None:
                return metric
            try:
                if kind == "counter":
                    metric = Counter(name, description, registry=REGISTRY)
                elif kind == "gauge":
                    metric = Gauge(name, description, registry=REGISTRY)
                elif kind == "histogram":
                    metric = Histogram(name, description, registry=REGISTRY)
                else:
                    metric = Summary(name, description, registry=REGISTRY)
            except ValueError as error:  # an invalid name, or one the operator already uses
                raise UserMetricError(f"name: {name!r}: {error}") from None
            log.info("registering metric %s (%s)", name, kind)
            self._metrics[name] = metric
            return metric

    @staticmethod
    def _gauge(gauge: Gauge, operation: Mapping[str, Any]) -> None:
        # Operator SDK applies the first operation given, in this order.
        if operation.get("increment"):
            gauge.inc()
        elif operation.get("decrement"):
            gauge.dec()
        elif add := _number(operation, "add"):
            gauge.inc(add)
        elif subtract := _number(operation, "subtract"):
            gauge.dec(subtract)
        elif value := _number(operation, "set"):
            gauge.set(value)
        elif operation.get("set_to_current_time"):
            gauge.set_to_current_time()


#: The process's user metrics (Operator SDK keeps one map per process too).
USER_METRICS = UserMetrics()


class UserMetricsServer:
    """``POST /metrics`` on the loopback interface, for the ``osdk_metric`` module.

    ``port`` 5050 is Operator SDK's; when it is taken (another operator on the machine) a free
    port is used instead, and runs are told which through ``SETPOINT_ANSIBLE_METRICS_URL``.
    """

    needs_leader_election = False

    def __init__(
        self,
        port: int = DEFAULT_USER_METRICS_PORT,
        host: str = "127.0.0.1",
        metrics: UserMetrics = USER_METRICS,
    ) -> None:
        self.port = port
        self.host = host
        self.metrics = metrics
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        """Listen on ``port``, or on a free port when it is taken."""
        app = web.Application()
        app.router.add_route("*", "/metrics", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except OSError as error:
            if self.port == 0:
                raise
            log.warning(
                "user metrics: %s:%d is taken (%s); listening on a free port instead",
                self.host,
                self.port,
                error.strerror or error,
            )
            await web.TCPSite(runner, self.host, 0).start()
        self._runner = runner
        port = runner.addresses[-1][1] if runner.addresses else self.port
        self._url = f"http://{self.host}:{port}/metrics"
        self._ready.set()
        log.info("user metrics receiver listening on %s", self._url)

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def url(self) -> str:
        """Where ``osdk_metric`` posts, once listening."""
        await self._ready.wait()
        assert self._url is not None
        return self._url

    async def _handle(self, request: web.Request) -> web.Response:
        if request.method != "POST":
            return web.Response(status=405, text="Method not allowed\n")
        try:
            document = json.loads(await request.read())
            self.metrics.handle(document)
        except (ValueError, UserMetricError) as error:
            log.info("user metric refused: %s", error)
            return web.Response(status=400, text=f"{error}\n")
        return web.Response(status=200)
