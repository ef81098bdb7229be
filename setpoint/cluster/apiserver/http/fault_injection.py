"""Fault injection: make the local API server misbehave on purpose, reproducibly.

Off by default. A test (``cluster.faults.set(...)``) or ``setpoint cluster serve --faults SPEC``
turns it on for a fraction of the resource requests, optionally only some verbs and resources:

* ``429`` — ``TooManyRequests`` with ``Retry-After`` (as the API server's priority and
  fairness or max-in-flight filter answers);
* ``503`` — ``ServiceUnavailable`` with ``Retry-After`` (as an apiserver that is shutting down
  or whose storage is unavailable), or without it when its parameter is 0;
* ``500`` — ``InternalError``;
* ``reset`` — the TCP connection is reset before an answer;
* ``latency`` — the request is served after a delay.

Every fault but ``latency`` happens *before* the request is processed, so the client learns
exactly what happened to it (a reset request never took effect). Draws come from one
``random.Random(seed)``: with a seed, the same sequence of requests meets the same faults.
Only resource requests (``/api/v1/...``, ``/apis/G/V/...`` naming a resource) are affected, not
discovery, ``/version`` or health checks.

SPEC syntax (``setpoint cluster serve --faults``)::

    FAULT=FRACTION[:PARAM],...[;verbs=VERB|VERB][;resources=RES|RES][;seed=N]

e.g. ``429=0.1:2,503=0.05,reset=0.05,latency=0.2:0.5;verbs=create|update|patch;seed=7``. PARAM
is ``Retry-After`` in seconds for 429/503 (default 1) and the delay in seconds for latency. A
resource is matched as ``plural``, ``plural.group`` or ``plural/subresource``.
"""

from __future__ import annotations

import asyncio
import random
import socket
import struct
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

import msgspec
from aiohttp import web

from setpoint.api import status as api_status

__all__ = ["FAULTS", "FaultInjector", "FaultRule", "FaultSpecError", "parse_fault_spec"]

FAULTS: Final = ("429", "500", "503", "reset", "latency")
VERBS: Final = frozenset(
    {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)
#: Retry-After (seconds) of injected 429/503 answers unless the rule says otherwise.
DEFAULT_RETRY_AFTER_S: Final = 1.0
#: Delay of injected latency unless the rule says otherwise.
DEFAULT_LATENCY_S: Final = 0.2
_NAMESPACE_SUBRESOURCES: Final = frozenset({"status", "finalize"})
_ENCODER = msgspec.json.Encoder()


class FaultSpecError(ValueError):
    """A fault SPEC or rule that cannot be understood (the message says which part)."""


@dataclass(frozen=True, slots=True)
class FaultRule:
    """Inject ``fault`` into ``fraction`` of the matching requests.

    ``verbs`` / ``resources``: empty means all. ``param``: Retry-After seconds for 429/503
    (0 = no header), delay seconds for latency.
    """

    fault: str
    fraction: float
    verbs: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    param: float | None = None

    def __post_init__(self) -> None:
        if self.fault not in FAULTS:
            raise FaultSpecError(f"unknown fault {self.fault!r}; use one of {', '.join(FAULTS)}")
        if not 0.0 <= self.fraction <= 1.0:
            raise FaultSpecError(
                f"fault {self.fault}: fraction must be in [0, 1], not {self.fraction}"
            )
        unknown = set(self.verbs) - VERBS
        if unknown:
            raise FaultSpecError(
                f"unknown verbs {', '.join(sorted(unknown))}; use {', '.join(sorted(VERBS))}"
            )
        if self.param is not None and self.param < 0:
            raise FaultSpecError(f"fault {self.fault}: parameter must be >= 0, not {self.param}")

    def matches(self, verb: str, resource: RequestResource) -> bool:
        """Whether this rule applies to a request (before the random draw)."""
        if self.verbs and verb not in self.verbs:
            return False
        return not self.resources or bool(self.resources & resource.names)


@dataclass(frozen=True, slots=True)
class RequestResource:
    """The resource a request addresses, under every name a rule may use."""

    names: frozenset[str]
    label: str


def parse_fault_spec(spec: str) -> tuple[list[FaultRule], int | None]:
    """The rules and seed of a SPEC (see the module documentation)."""
    clauses = [clause.strip() for clause in spec.split(";") if clause.strip()]
    if not clauses:
        raise FaultSpecError("empty fault spec; e.g. '429=0.1,reset=0.05;seed=1'")
    faults: list[tuple[str, float, float | None]] = []
    verbs: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    seed: int | None = None
    for clause in clauses:
        key, _, value = clause.partition("=")
        key = key.strip()
        if key == "verbs":
            verbs = frozenset(v.strip() for v in value.split("|") if v.strip())
        elif key == "resources":
            resources = frozenset(r.strip() for r in value.split("|") if r.strip())
        elif key == "seed":
            try:
                seed = int(value)
            except ValueError:
                raise FaultSpecError(f"seed must be an integer, not {value!r}") from None
        else:
            for item in clause.split(","):
                faults.append(_parse_fault(item.strip()))
    if not faults:
        raise FaultSpecError(f"fault spec {spec!r} names no fault; e.g. '503=0.1'")
    rules = [FaultRule(f, fraction, verbs, resources, param) for f, fraction, param in faults]
    return rules, seed


def _parse_fault(item: str) -> tuple[str, float, float | None]:
    name, equals, rest = item.partition("=")
    if not equals:
        raise FaultSpecError(f"expected FAULT=FRACTION[:PARAM], got {item!r}")
    fraction_text, _, param_text = rest.partition(":")
    try:
        fraction = float(fraction_text)
        param = float(param_text) if param_text else None
    except ValueError:
        raise FaultSpecError(
            f"expected FAULT=FRACTION[:PARAM] with numbers, got {item!r}"
        ) from None
    return name.strip(), fraction, param


def request_target(request: web.BaseRequest) -> tuple[str, RequestResource] | None:
    """The Kubernetes verb and resource of a resource request; None for anything else."""
    parts = [part for part in request.path.split("/") if part]
    if len(parts) >= 3 and parts[0] == "api":
        group, rest = "", parts[2:]
    elif len(parts) >= 4 and parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        return None
    watch = request.query.get("watch") in ("true", "1")
    if rest[0] == "watch":
        watch, rest = True, rest[1:]
    if (
        len(rest) >= 3
        and rest[0] == "namespaces"
        and not (not group and len(rest) == 3 and rest[2] in _NAMESPACE_SUBRESOURCES)
    ):
        rest = rest[2:]
    if not rest:
        return None
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else ""
    method = request.method
    if method == "GET":
        verb = "watch" if watch else "get" if name else "list"
    elif method == "POST":
        verb = "create"
    elif method == "PUT":
        verb = "update"
    elif method == "PATCH":
        verb = "patch"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        return None
    qualified = f"{plural}.{group}" if group else plural
    names = {plural, qualified}
    if subresource:
        names |= {f"{plural}/{subresource}", f"{qualified}/{subresource}"}
    label = f"{qualified}/{subresource}" if subresource else qualified
    return verb, RequestResource(frozenset(names), label)


@dataclass(slots=True)
class FaultInjector:
    """The fault rules in force and what they did; shared by the server's handler and tests.

    ``set()`` may be called from another thread (a test driving a background cluster): it
    replaces the rules in one assignment.
    """

    rules: tuple[FaultRule, ...] = ()
    #: Injected faults: ``(fault, verb, resource)`` -> count.
    injected: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    _rng: random.Random = field(default_factory=random.Random)

    @property
    def active(self) -> bool:
        """Whether some rule is set."""
        return bool(self.rules)

    def set(
        self,
        rules: str | FaultRule | Iterable[FaultRule] = (),
        *,
        seed: int | None = None,
        **fractions: float,
    ) -> None:
        """Replace the rules: a SPEC string, rules, or keyword fractions for every request.

        ``faults.set(reset=0.05, latency=0.1)``; 429/500/503 as keywords are spelled
        ``http_429=...``. ``seed`` (or the SPEC's) restarts the random draws reproducibly.
        """
        parsed: list[FaultRule]
        if isinstance(rules, str):
            parsed, spec_seed = parse_fault_spec(rules)
            seed = seed if seed is not None else spec_seed
        elif isinstance(rules, FaultRule):
            parsed = [rules]
        else:
            parsed = list(rules)
        for name, fraction in fractions.items():
            parsed.append(FaultRule(name.removeprefix("http_"), fraction))
        if seed is not None:
            self._rng.seed(seed)
        self.rules = tuple(parsed)

    def clear(self) -> None:
        """Remove every rule (the counts stay)."""
        self.rules = ()

    def total(self, fault: str | None = None) -> int:
        """How many faults were injected (of one kind, or all)."""
        return sum(n for (name, _, _), n in self.injected.items() if fault in (None, name))

    async def intercept(self, request: web.BaseRequest) -> web.StreamResponse | None:
        """Inject a fault into ``request`` when a rule draws it: the answer to send instead
        (None: serve the request normally, perhaps after an injected delay)."""
        rules = self.rules
        if not rules:
            return None
        target = request_target(request)
        if target is None:
            return None
        verb, resource = target
        for rule in rules:
            if not rule.matches(verb, resource) or self._rng.random() >= rule.fraction:
                continue
            self.injected[(rule.fault, verb, resource.label)] += 1
            if rule.fault == "latency":
                await asyncio.sleep(DEFAULT_LATENCY_S if rule.param is None else rule.param)
                continue
            return _answer(request, rule)
        return None


def _answer(request: web.BaseRequest, rule: FaultRule) -> web.StreamResponse:
    retry_after = DEFAULT_RETRY_AFTER_S if rule.param is None else rule.param
    if rule.fault == "429":
        seconds = max(1, round(retry_after))
        status = api_status.too_many_requests("please try again later", retry_after=seconds)
        status["message"] = "Too many requests, please try again later."
        return _status(status, retry_after=seconds)
    if rule.fault == "503":
        status = api_status.service_unavailable(
            "the server is currently unable to handle the request"
        )
        return _status(status, retry_after=round(retry_after) if retry_after else None)
    if rule.fault == "500":
        return _status(api_status.internal_error("injected fault"))
    _reset(request)
    # Nothing reaches the client: the connection is gone. aiohttp drops this answer.
    return web.Response(status=500)


def _status(status: dict[str, object], *, retry_after: int | None = None) -> web.Response:
    code = status.get("code")
    response = web.Response(
        status=int(code) if isinstance(code, int) else 500,
        body=_ENCODER.encode(status),
        content_type="application/json",
    )
    if retry_after:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _reset(request: web.BaseRequest) -> None:
    """Abort the connection with a TCP RST (SO_LINGER 0), as a crashed peer or a proxy does."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()
