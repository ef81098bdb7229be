"""Request counters of the API server, by verb, resource, response code and client.

kube-apiserver counts every request in ``apiserver_request_total`` (verb, group, version,
resource, subresource, scope, component, code) and open long-running requests in
``apiserver_longrunning_requests``. The local cluster keeps the same names and labels and adds
``client``: the product part of the ``User-Agent`` (``kubectl``, ``setpoint``, ``kopf``), as
the ``client`` label of the older ``apiserver_request_count`` did. It tells apart the requests
of operators sharing one cluster, which the benchmarks compare. The number of distinct clients is
capped so a client sending random user agents cannot grow the label set without bound.

Verbs are upstream's metric verbs: ``GET``, ``LIST``, ``WATCH``, ``POST``, ``PUT``, ``PATCH``,
``APPLY`` (a server-side apply patch), ``DELETE``, ``DELETECOLLECTION``; requests outside
``/api`` and ``/apis`` resources (discovery, health, OpenAPI) count under their HTTP method with
an empty resource. A watch counts in the total when it ends, and in the gauge while it is open.
"""

from __future__ import annotations

from collections import Counter
from typing import Final, NamedTuple

from aiohttp import web

#: Distinct ``client`` label values kept; later newcomers count as ``other``.
MAX_CLIENTS: Final = 64
#: Requests classified and remembered by what classifies them (method, path, ``watch``, apply
#: or not, User-Agent); the memo starts over when full (paths naming objects are many).
KIND_MEMO_SIZE: Final = 4096
#: The media type of the Prometheus text exposition format that ``/metrics`` answers with.
METRICS_CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"

_APPLY_PATCH: Final = "application/apply-patch+yaml"
_NAMESPACE_ONLY_SUBRESOURCES: Final = frozenset({"status", "finalize"})
_LABELS: Final = ("verb", "group", "version", "resource", "subresource", "scope", "client")


class RequestKind(NamedTuple):
    """What a request addresses, as the metrics label it (code and component apart)."""

    verb: str
    group: str
    version: str
    resource: str
    subresource: str
    scope: str
    client: str


def client_of(user_agent: str) -> str:
    """The ``client`` label of a ``User-Agent``: its first product name (before ``/``)."""
    product = user_agent.strip().split(" ", 1)[0].split("/", 1)[0]
    return product or "unknown"


def request_kind(
    method: str, path: str, query_watch: str, content_type: str, client: str
) -> RequestKind:
    """Classify one request; ``query_watch`` is its ``watch`` query parameter (or "")."""
    parts = [part for part in path.split("/") if part]
    head = parts[0] if parts else ""
    if head == "api" and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif head == "apis" and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return RequestKind(method, "", "", "", "", "", client)
    watch_path = rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    namespaced = (
        len(rest) >= 3
        and rest[0] == "namespaces"
        and not (group == "" and len(rest) == 3 and rest[2] in _NAMESPACE_ONLY_SUBRESOURCES)
    )
    if namespaced:
        rest = rest[2:]
    if not rest:
        return RequestKind(method, group, version, "", "", "", client)
    resource = rest[0]
    named = len(rest) > 1
    subresource = rest[2] if len(rest) > 2 else ""
    scope = "resource" if named else ("namespace" if namespaced else "cluster")
    watching = watch_path or query_watch in ("true", "1")
    if method in ("GET", "HEAD"):
        verb = "WATCH" if watching else ("GET" if named else "LIST")
    elif method == "PATCH":
        verb = "APPLY" if content_type.startswith(_APPLY_PATCH) else "PATCH"
    elif method == "DELETE":
        verb = "DELETE" if named else "DELETECOLLECTION"
    else:
        verb = method
    return RequestKind(verb, group, version, resource, subresource, scope, client)


class KindCounts:
    """The counts of one request kind: answers by code, and open watches.

    Every request of a kind counts into the same object (the memo hands it out), so counting an
    answer is one increment under an integer key: no tuple of labels is built or hashed per
    request. ``/metrics`` turns the counts into labelled samples when it is read.
    """

    __slots__ = ("by_code", "kind", "open", "watch")

    def __init__(self, kind: RequestKind) -> None:
        self.kind = kind
        #: Whether requests of this kind are watches (long-running: in the gauge while open).
        self.watch = kind.verb == "WATCH"
        #: Ended requests by response code (0: ended without a response).
        self.by_code: dict[int, int] = {}
        #: Requests of this kind open now (watches only).
        self.open = 0


class RequestMetrics:
    """The counters, and their ``/metrics`` text."""

    def __init__(self) -> None:
        # One KindCounts per kind ever seen: the counts outlive the memo below.
        self._counts: dict[RequestKind, KindCounts] = {}
        self._clients: set[str] = set()
        self._kinds: dict[tuple[str, str, str, bool, str], KindCounts] = {}

    @property
    def totals(self) -> Counter[tuple[RequestKind, int]]:
        """Ended requests by kind and response code."""
        return Counter(
            {
                (counts.kind, code): number
                for counts in self._counts.values()
                for code, number in counts.by_code.items()
            }
        )

    @property
    def long_running(self) -> Counter[RequestKind]:
        """Open long-running requests (watches) by kind."""
        return Counter(
            {counts.kind: counts.open for counts in self._counts.values() if counts.open}
        )

    def _client(self, user_agent: str) -> str:
        client = client_of(user_agent)
        if client in self._clients:
            return client
        if len(self._clients) >= MAX_CLIENTS:
            return "other"
        self._clients.add(client)
        return client

    def begin(self, request: web.BaseRequest) -> KindCounts:
        """Start counting ``request``; pass the result and the response code to :meth:`end`
        (a code of 0 if it ended without a response). Two plain calls: every request pays for
        this, a context manager costs a generator."""
        headers = request.headers
        content_type = headers.get("Content-Type", "")
        # Everything request_kind reads, with the content type cut to what it decides (apply
        # or not); a User-Agent's client label never changes once given (see _client).
        memo_key = (
            request.method,
            request.path,
            request.query.get("watch", "") if request.query_string else "",
            content_type.startswith(_APPLY_PATCH),
            headers.get("User-Agent", ""),
        )
        counts = self._kinds.get(memo_key)
        if counts is None:
            method, path, query_watch, _, user_agent = memo_key
            kind = request_kind(method, path, query_watch, content_type, self._client(user_agent))
            counts = self._counts.get(kind)
            if counts is None:
                counts = self._counts[kind] = KindCounts(kind)
            if len(self._kinds) >= KIND_MEMO_SIZE:
                self._kinds.clear()
            self._kinds[memo_key] = counts
        if counts.watch:
            counts.open += 1
        return counts

    def end(self, counts: KindCounts, code: int) -> None:
        """Count a request started with :meth:`begin` that ended with ``code``."""
        if counts.watch:
            counts.open -= 1
        by_code = counts.by_code
        by_code[code] = by_code.get(code, 0) + 1

    def render(self) -> str:
        """The counters in the Prometheus text format."""
        lines = [
            "# HELP apiserver_request_total Requests served, by verb, resource, code and client.",
            "# TYPE apiserver_request_total counter",
        ]
        for (kind, code), count in sorted(self.totals.items()):
            labels = _labels(kind, code=str(code))
            lines.append(f"apiserver_request_total{{{labels}}} {count}")
        lines += [
            "# HELP apiserver_longrunning_requests Open long-running requests (watches).",
            "# TYPE apiserver_longrunning_requests gauge",
        ]
        for kind, count in sorted(self.long_running.items()):
            lines.append(f"apiserver_longrunning_requests{{{_labels(kind)}}} {count}")
        return "\n".join(lines) + "\n"

    def serve(self, request: web.BaseRequest) -> web.Response:
        """The ``GET /metrics`` response."""
        if request.method not in ("GET", "HEAD"):
            return web.Response(status=405, text="method not allowed\n")
        response = web.Response(status=200, text=self.render())
        response.headers["Content-Type"] = METRICS_CONTENT_TYPE
        return response


def _labels(kind: RequestKind, code: str | None = None) -> str:
    pairs = [("client", kind.client)]
    if code is not None:
        pairs.append(("code", code))
    pairs.append(("component", "apiserver"))
    pairs += [(name, getattr(kind, name)) for name in _LABELS if name != "client"]
    pairs.sort()
    return ",".join(f'{name}="{_escape(value)}"' for name, value in pairs)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
