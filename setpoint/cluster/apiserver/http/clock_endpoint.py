"""``/debug/setpoint/clock``: read, set and advance the cluster clock over the API.

The cluster clock is what the built-in controllers and the kubelet read (CronJob schedules,
Job deadlines, node grace periods, HPA windows, pod start times, Lease expiry). A cluster
served with ``--clock manual`` runs on a :class:`~setpoint.api.clock.FakeClock` that stands
still until this endpoint moves it; otherwise the clock is real time and can only be read.

``GET`` answers ``{"kind": "ClusterClock", "mode": "manual"|"real", "now": RFC3339}``. ``PUT``
with ``{"now": RFC3339}`` sets it, with ``{"advance": "2h"}`` (Go duration syntax, plus ``d``
for days) moves it forward; either answers the new reading. Time never goes back: a ``now``
before the current one or a negative ``advance`` is a 400 and changes nothing. Like every
non-resource path, it is authorized by RBAC (``nonResourceURLs``: ``get``, ``put``).

Operators read it too: ``setpoint run --follow-cluster-clock`` polls it so their clock
follows the cluster's.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Final

from aiohttp import web

from setpoint.api.clock import Clock, FakeClock
from setpoint.api.go_durations import parse_go_duration
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.request_body import read_body
from setpoint.cluster.apiserver.status_errors import APIError

#: The path, split as the handler splits it.
CLOCK_PATH: Final = ("debug", "setpoint", "clock")


def clock_text(moment: datetime) -> str:
    """RFC 3339 in UTC, with the fraction only when there is one."""
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_clock_time(text: str) -> datetime:
    """An RFC 3339 time with a zone (``ValueError`` naming the text otherwise)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC 3339 time (e.g. 2026-12-24T18:00:00Z)") from None
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone (add Z for UTC)")
    return moment.astimezone(UTC)


class ClockEndpoint:
    """Serves the cluster clock of one API server."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    @property
    def manual(self) -> bool:
        """Whether the clock can be set (a ``FakeClock``: ``--clock manual``)."""
        return isinstance(self.clock, FakeClock)

    def reading(self) -> dict[str, Any]:
        """The clock document ``GET`` answers."""
        return {
            "kind": "ClusterClock",
            "apiVersion": "setpoint.dev/v1alpha1",
            "mode": "manual" if self.manual else "real",
            "now": clock_text(self.clock.now()),
        }

    async def serve(self, request: web.BaseRequest) -> web.Response:
        """Answer a request for :data:`CLOCK_PATH`."""
        if request.method in ("GET", "HEAD"):
            return self._answer()
        if request.method != "PUT":
            raise APIError(
                405, "MethodNotAllowed", f"{request.method} is not allowed on the cluster clock"
            )
        if not isinstance(self.clock, FakeClock):
            raise APIError(
                405,
                "MethodNotAllowed",
                "the cluster clock follows real time: serve the cluster with --clock manual "
                "to set or advance it",
            )
        self._move(self.clock, await read_body(request))
        return self._answer()

    def _answer(self) -> web.Response:
        body = json.dumps(self.reading()).encode() + b"\n"
        return web.Response(status=200, body=body, content_type="application/json")

    def _move(self, clock: FakeClock, body: bytes) -> None:
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            raise status_errors.bad_request("the clock request body is not JSON") from None
        if not isinstance(request, dict) or len({"now", "advance"} & request.keys()) != 1:
            raise status_errors.bad_request(
                'the clock request needs exactly one of "now" (RFC 3339) or "advance" '
                '(a duration such as "2h")'
            )
        current = clock.now()
        if "advance" in request:
            try:
                seconds = parse_go_duration(str(request["advance"]), days=True)
            except ValueError as error:
                raise status_errors.bad_request(f"advance: {error}") from None
            if seconds < 0:
                raise status_errors.bad_request(
                    f"advance: the cluster clock cannot go back ({request['advance']})"
                )
            clock.advance(seconds)
            return
        try:
            target = parse_clock_time(str(request["now"]))
        except ValueError as error:
            raise status_errors.bad_request(f"now: {error}") from None
        if target < current:
            raise status_errors.bad_request(
                f"now: the cluster clock cannot go back: {clock_text(target)} is before "
                f"{clock_text(current)}"
            )
        clock.set(target)
