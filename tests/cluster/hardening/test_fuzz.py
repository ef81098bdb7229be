"""Fuzzing the local API server over HTTP.

Hypothesis draws requests: paths (real resources in a ``fuzz`` namespace, with garbage mixed
in), methods (standard and made-up), content types, bodies (JSON of any shape, nested deep,
YAML with aliases, random bytes), query parameters (integers beyond int64, selectors, watch
options) and patches. For every request: no 5xx for a client's mistake, every 4xx is a
``Status`` whose message says something, ``/healthz`` keeps answering, and the objects seeded
in another namespace stay byte-identical. CI runs a bounded number of examples; ``make
test-fuzz`` runs many more (``FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.http import fresh_revision
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage import MemoryStorage
from tests.cluster.hardening.test_crash_suite import long_run

CI_EXAMPLES = 150
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", CI_EXAMPLES))
HEALTH_BOUND_SECONDS = 5.0
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

RESOURCES = [
    ("api/v1", "configmaps"),
    ("api/v1", "secrets"),
    ("api/v1", "pods"),
    ("api/v1", "services"),
    ("api/v1", "events"),
    ("apis/apps/v1", "deployments"),
    ("apis/batch/v1", "jobs"),
    ("apis/coordination.k8s.io/v1", "leases"),
]
SUBRESOURCES = ["", "", "status", "scale", "log", "../x", "%00"]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "FOO", "PROPFIND"]
CONTENT_TYPES = [
    "application/json",
    "application/yaml",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/vnd.kubernetes.protobuf",
    "text/plain",
    "",
    "application/json; charset=utf-8",
]

names = st.one_of(
    st.sampled_from(["a", "fuzz-obj", "x" * 300, "UPPER", "-bad", "a.b", "%2F", "..", "é"]),
    st.text(min_size=1, max_size=20).map(lambda s: s.replace("/", "_")),
)
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def objects(draw: st.DrawFn) -> Any:
    base: dict[str, Any] = {
        "apiVersion": draw(st.sampled_from(["v1", "apps/v1", "batch/v1", "x/y", ""])),
        "kind": draw(st.sampled_from(["ConfigMap", "Secret", "Pod", "Deployment", "Nope"])),
        "metadata": draw(
            st.one_of(
                st.fixed_dictionaries({"name": names}),
                st.dictionaries(
                    st.sampled_from(
                        ["name", "labels", "annotations", "resourceVersion", "finalizers", "uid"]
                    ),
                    json_values,
                ),
                json_values,
            )
        ),
    }
    for key in draw(
        st.lists(st.sampled_from(["spec", "data", "status", "stringData"]), max_size=3)
    ):
        base[key] = draw(json_values)
    return base


def deep(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


YAML_BOMB = b"a: &a [x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\n" + b"".join(
    f"{chr(99 + i)}: &{chr(99 + i)} [{','.join([f'*{chr(98 + i)}'] * 8)}]\n".encode()
    for i in range(6)
)

patches = st.lists(
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bad"]),
            "path": st.sampled_from(["/data", "/data/x", "/metadata/name", "/spec/-", "", "/"]),
        },
        optional={
            "from": st.sampled_from(["/data", "/metadata", "/", "/nope"]),
            "value": json_values,
        },
    ),
    max_size=6,
)

bodies = st.one_of(
    objects().map(lambda o: json.dumps(o).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    patches.map(lambda p: json.dumps(p).encode()),
    st.sampled_from([deep(150), deep(5000), YAML_BOMB, b"", b"{", b"\xff\xfe", b"null", b"[]"]),
    st.binary(max_size=64),
)

query_values = st.one_of(
    st.sampled_from(
        ["0", "1", "-1", "18446744073709551617", "9223372036854775808", "1_0", "", "true", "x"]
    ),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.text(max_size=12),
)
queries = st.dictionaries(
    st.sampled_from(
        [
            "limit",
            "continue",
            "resourceVersion",
            "resourceVersionMatch",
            "labelSelector",
            "fieldSelector",
            "timeoutSeconds",
            "gracePeriodSeconds",
            "propagationPolicy",
            "dryRun",
            "fieldValidation",
            "fieldManager",
            "allowWatchBookmarks",
            "sendInitialEvents",
            "pretty",
        ]
    ),
    query_values,
    max_size=4,
)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, dict[str, str], str, bytes]:
    prefix, resource = draw(st.sampled_from(RESOURCES))
    path = f"/{prefix}/namespaces/fuzz/{resource}"
    if draw(st.booleans()):
        path += "/" + draw(names)
        sub = draw(st.sampled_from(SUBRESOURCES))
        if sub:
            path += "/" + sub
    if draw(st.integers(0, 9)) == 0:
        path = draw(st.sampled_from(["/", "/api", "/apis/x", "/api/v1/nope", "//", "/apis/apps"]))
    query = draw(queries)
    if draw(st.integers(0, 4)) == 0:
        query["watch"] = draw(st.sampled_from(["1", "true", "0", "x"]))
    # A watch answers until its timeout: keep every stream short.
    query["timeoutSeconds"] = "1"
    method = draw(st.sampled_from(METHODS))
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    return method, path, query, content_type, draw(bodies)


@pytest.fixture
async def fuzz_server(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[APIServer, bytes]]:
    monkeypatch.setattr(fresh_revision, "BLOCK_TIMEOUT_SECONDS", 0.05)
    storage = MemoryStorage()
    server = APIServer(storage, https_port=None)
    await server.start()
    await server.create_namespace("fuzz")
    await server.create_namespace("seeded")
    headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
    async with aiohttp.ClientSession(headers=headers) as http:
        for i in range(3):
            seed = {"metadata": {"name": f"seed-{i}"}, "data": {"k": "v" * i}}
            url = f"{server.url}/api/v1/namespaces/seeded/configmaps"
            async with http.post(url, data=json.dumps(seed)) as reply:
                assert reply.status == 201
        for prefix, resource in RESOURCES[:2]:
            # Objects named "a" in the fuzz namespace: patches and updates find a target.
            target = {"metadata": {"name": "a"}, "data": {"k": "dg=="}}
            url = f"{server.url}/{prefix}/namespaces/fuzz/{resource}"
            async with http.post(url, data=json.dumps(target)) as reply:
                assert reply.status == 201, await reply.text()
        async with http.get(f"{server.url}/api/v1/namespaces/seeded/configmaps") as reply:
            seeded = await reply.read()
    try:
        yield server, seeded
    finally:
        await server.stop()
        await storage.close()


def _items(listed: bytes) -> bytes:
    """The objects of a list body, byte for byte (its own resourceVersion moves on)."""
    start = listed.index(b'"items":')
    return listed[start:]


def check_answer(status: int, body: bytes, request: Any) -> None:
    assert status < 500 or status == 504, (status, body[:300], request)
    if 400 <= status < 500 or status == 504:
        assert body, (status, request)
        decoded = json.loads(body)
        assert decoded["kind"] == "Status", (decoded, request)
        assert decoded["code"] == status
        assert str(decoded.get("message", "")).strip(), (decoded, request)


async def fuzz(server: APIServer, seeded: bytes, drawn: list[Any]) -> int:
    """Send every drawn request and check each answer; the number of writes accepted."""
    accepted = 0
    headers = {"Authorization": f"Bearer {server.token}"}
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as http:
        for method, path, query, content_type, body in drawn:
            sent = {"Content-Type": content_type} if content_type else {}
            request = (method, path, query, content_type, body[:200])
            async with http.request(
                method, server.url + path, params=query, data=body, headers=sent
            ) as reply:
                answer = await reply.read()
                status = reply.status
            if method in WRITE_METHODS and 200 <= status < 300:
                accepted += 1
            if method != "HEAD":
                check_answer(status, answer, request)
            async with asyncio.timeout(HEALTH_BOUND_SECONDS):
                async with http.get(f"{server.url}/healthz") as health:
                    assert health.status == 200
        async with http.get(f"{server.url}/api/v1/namespaces/seeded/configmaps") as reply:
            assert _items(await reply.read()) == _items(seeded), "seeded objects changed"
    return accepted


@pytest.mark.timeout(300)
async def test_fuzzed_requests_get_client_errors_and_leave_the_server_healthy(
    fuzz_server: tuple[APIServer, bytes],
) -> None:
    server, seeded = fuzz_server
    drawn: list[Any] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        # The bounded CI run is the same every time; longer runs explore new examples.
        derandomize="FUZZ_EXAMPLES" not in os.environ,
        suppress_health_check=list(HealthCheck),
    )
    @given(requests())
    def collect(request: Any) -> None:
        drawn.append(request)

    collect()
    accepted = await fuzz(server, seeded, drawn)
    # Some writes must have got through, or "seeded objects untouched" proves little.
    assert accepted > 0


@pytest.mark.slow
@long_run
@pytest.mark.timeout(3600)
async def test_long_fuzz(fuzz_server: tuple[APIServer, bytes]) -> None:
    await test_fuzzed_requests_get_client_errors_and_leave_the_server_healthy(fuzz_server)
