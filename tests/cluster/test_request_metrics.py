"""The local cluster's ``/metrics``: requests counted by verb, resource, code and client."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections import Counter
from typing import Any
from unittest import mock

from aiohttp.test_utils import make_mocked_request
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict

from setpoint.cluster.apiserver.http import request_metrics
from setpoint.cluster.apiserver.http.request_metrics import (
    RequestKind,
    RequestMetrics,
    client_of,
    request_kind,
)
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.raw_api import RawAPI

_SAMPLE = re.compile(r"^(\w+)\{(.*)\} (\d+)$")


def _samples(text: str, name: str, client: str) -> dict[tuple[str, ...], int]:
    """``{(verb, resource, subresource, scope, code): value}`` of one metric and client."""
    found: dict[tuple[str, ...], int] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match or match[1] != name:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match[2]))
        if labels["client"] != client:
            continue
        key = (
            labels["verb"],
            labels["resource"],
            labels["subresource"],
            labels["scope"],
            labels.get("code", ""),
        )
        found[key] = int(match[3])
    return found


async def _metrics(api: RawAPI) -> str:
    reply = await api.request("GET", "/metrics")
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("text/plain")
    return reply.raw.decode()


async def test_requests_are_counted_per_client_and_verb(
    api: RawAPI, local_cluster: BackgroundCluster
) -> None:
    client = f"metrics-{uuid.uuid4().hex[:8]}"
    agent = {"User-Agent": f"{client}/1.0 (linux/amd64)"}
    base = "/api/v1/namespaces/default/configmaps"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": client}}
    assert (await api.request("POST", base, body, headers=agent)).status == 201
    assert (await api.request("POST", base, body, headers=agent)).status == 409
    assert (await api.request("GET", f"{base}/{client}", headers=agent)).status == 200
    assert (await api.request("GET", base, headers=agent)).status == 200
    patch = {"data": {"a": "b"}}
    merge = "application/merge-patch+json"
    reply = await api.request("PATCH", f"{base}/{client}", patch, content_type=merge, headers=agent)
    assert reply.status == 200
    apply = "application/apply-patch+yaml"
    reply = await api.request(
        "PATCH",
        f"{base}/{client}?fieldManager=t&force=true",
        {**body, "data": {"c": "d"}},
        content_type=apply,
        headers=agent,
    )
    assert reply.status == 200
    assert (await api.request("DELETE", f"{base}/{client}", headers=agent)).status == 200

    text = await _metrics(api)
    counted = _samples(text, "apiserver_request_total", client)
    assert counted == {
        ("POST", "configmaps", "", "namespace", "201"): 1,
        ("POST", "configmaps", "", "namespace", "409"): 1,
        ("GET", "configmaps", "", "resource", "200"): 1,
        ("LIST", "configmaps", "", "namespace", "200"): 1,
        ("PATCH", "configmaps", "", "resource", "200"): 1,
        ("APPLY", "configmaps", "", "resource", "200"): 1,
        ("DELETE", "configmaps", "", "resource", "200"): 1,
    }


async def test_watches_are_open_in_the_gauge_and_counted_when_they_end(api: RawAPI) -> None:
    client = f"watcher-{uuid.uuid4().hex[:8]}"
    path = "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=3"
    async with api.session.get(api.url + path, headers={"User-Agent": client}) as response:
        assert response.status == 200
        open_now = _samples(await _metrics(api), "apiserver_longrunning_requests", client)
        assert open_now == {("WATCH", "configmaps", "", "namespace", ""): 1}
        await response.read()
    for _ in range(100):  # the server counts the watch once its handler has returned
        text = await _metrics(api)
        if _samples(text, "apiserver_request_total", client):
            break
        await asyncio.sleep(0.05)
    assert _samples(text, "apiserver_request_total", client) == {
        ("WATCH", "configmaps", "", "namespace", "200"): 1
    }
    assert _samples(text, "apiserver_longrunning_requests", client) == {}


async def test_metrics_need_credentials(local_cluster: BackgroundCluster) -> None:
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.get(local_cluster.url + "/metrics") as response,
    ):
        assert response.status == 401


# Few values per part, so that requests often agree on all parts but one.
_REQUESTS = st.tuples(
    st.sampled_from(["GET", "PATCH", "DELETE"]),
    st.sampled_from(
        [
            "/api/v1/namespaces/default/configmaps/a",
            "/api/v1/watch/namespaces/default/pods",
            "/apis/apps/v1/namespaces/x/deployments/d/scale",
            "//api//v1/nodes/",
        ]
    ),
    st.sampled_from(["", "?watch=true", "?watch=false&limit=5"]),
    st.sampled_from(["", "application/merge-patch+json", "application/apply-patch+yaml"]),
    st.sampled_from(["kubectl/v1.32.0 (linux/amd64)", "", " "]) | st.from_regex(r"\Ac[0-4]/1\.0\Z"),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_REQUESTS, max_size=100))
def test_remembered_kinds_are_those_of_each_request_classified_afresh(
    requests: list[tuple[str, str, str, str, str]],
) -> None:
    """The memo of request kinds (small here, so it starts over) and the cap on clients (small
    too) give every request the labels classifying it alone gives."""
    clients: set[str] = set()

    def client_label(user_agent: str) -> str:  # RequestMetrics' rule, followed afresh
        client = client_of(user_agent)
        if client in clients:
            return client
        if len(clients) >= 5:
            return "other"
        clients.add(client)
        return client

    with (
        mock.patch.object(request_metrics, "KIND_MEMO_SIZE", 40),
        mock.patch.object(request_metrics, "MAX_CLIENTS", 5),
    ):
        metrics = RequestMetrics()
        for method, path, query, content_type, user_agent in requests:
            headers = CIMultiDict({"User-Agent": user_agent})
            if content_type:
                headers["Content-Type"] = content_type
            request = make_mocked_request(method, path + query, headers=headers)
            watch = request.query.get("watch", "")
            expected: RequestKind = request_kind(
                method, request.path, watch, content_type, client_label(user_agent)
            )
            counted = metrics.begin(request)
            assert counted.kind == expected
            metrics.end(counted, 200)


class _CountedAsBefore:
    """The counters as they were kept before :class:`KindCounts`: one ``Counter`` of
    ``(kind, code)`` and one of open watches, their zero entries removed."""

    def __init__(self) -> None:
        self.totals: Counter[tuple[RequestKind, int]] = Counter()
        self.long_running: Counter[RequestKind] = Counter()

    def begin(self, kind: RequestKind) -> None:
        if kind.verb == "WATCH":
            self.long_running[kind] += 1

    def end(self, kind: RequestKind, code: int) -> None:
        if kind.verb == "WATCH":
            self.long_running[kind] -= 1
            if not self.long_running[kind]:
                del self.long_running[kind]
        self.totals[(kind, code)] += 1


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(_REQUESTS, st.sampled_from([0, 200, 201, 404, 409, 500]), st.booleans()),
        max_size=80,
    )
)
def test_counts_by_kind_render_what_counters_of_label_tuples_render(
    requests: list[tuple[tuple[str, str, str, str, str], int, bool]],
) -> None:
    """Requests begun, some ended at once and some left open (watches in the gauge), give the
    same ``/metrics`` text and the same totals as the counters keyed by label tuples."""
    with mock.patch.object(request_metrics, "KIND_MEMO_SIZE", 7):
        metrics = RequestMetrics()
        model = _CountedAsBefore()
        still_open: list[tuple[Any, RequestKind, int]] = []
        for (method, path, query, content_type, user_agent), code, end_now in requests:
            headers = CIMultiDict({"User-Agent": user_agent})
            if content_type:
                headers["Content-Type"] = content_type
            counted = metrics.begin(make_mocked_request(method, path + query, headers=headers))
            model.begin(counted.kind)
            if end_now:
                metrics.end(counted, code)
                model.end(counted.kind, code)
            else:
                still_open.append((counted, counted.kind, code))
        assert metrics.totals == model.totals
        assert metrics.long_running == model.long_running
        assert metrics.render() == RequestMetrics.render(model)  # type: ignore[arg-type]
        for counted, kind, code in still_open:
            metrics.end(counted, code)
            model.end(kind, code)
        assert metrics.render() == RequestMetrics.render(model)  # type: ignore[arg-type]
        assert not metrics.long_running
