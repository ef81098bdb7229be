"""Fixtures of the client tests: a small scripted HTTP server (aiohttp) standing in for an API
server when the behaviour under test is transport-level (retries, errors, discovery, streaming).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from setpoint.client import Client, ClientConfig, StaticToken

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

CORE_RESOURCES = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "v1",
    "resources": [
        {
            "name": "configmaps",
            "singularName": "configmap",
            "namespaced": True,
            "kind": "ConfigMap",
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            "shortNames": ["cm"],
        },
        {
            "name": "namespaces",
            "singularName": "namespace",
            "namespaced": False,
            "kind": "Namespace",
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            "shortNames": ["ns"],
        },
        {"name": "namespaces/status", "singularName": "", "namespaced": False, "kind": "Namespace"},
    ],
}


def status_body(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    """A Kubernetes Status object as the API server sends it."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=json.dumps(body).encode(),
        status=status,
        content_type="application/json",
        headers=headers,
    )


@dataclass
class ScriptedServer:
    """An aiohttp server whose answers are scripted per (method, path)."""

    server: TestServer
    routes: dict[tuple[str, str], Handler] = field(default_factory=dict)
    requests: list[web.Request] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    def on(self, method: str, path: str, handler: Handler) -> None:
        self.routes[(method.upper(), path)] = handler

    def answer(self, method: str, path: str, *responses: Callable[[], web.StreamResponse]) -> None:
        """Answer successive requests with successive responses (the last one repeats)."""
        queue = list(responses)

        async def handler(_: web.Request) -> web.StreamResponse:
            factory = queue.pop(0) if len(queue) > 1 else queue[0]
            return factory()

        self.on(method, path, handler)

    def calls(self, method: str, path: str) -> list[web.Request]:
        return [r for r in self.requests if r.method == method and r.path == path]

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(request)
        self.bodies.append(await request.read())
        handler = self.routes.get((request.method, request.path))
        if handler is None:
            return json_response(
                status_body(404, "NotFound", "the server could not find the requested resource"),
                status=404,
            )
        return await handler(request)


@pytest.fixture
async def scripted_server() -> AsyncIterator[ScriptedServer]:
    app = web.Application()
    holder: list[ScriptedServer] = []

    async def entry(request: web.Request) -> web.StreamResponse:
        return await holder[0].dispatch(request)

    app.router.add_route("*", "/{tail:.*}", entry)
    server = TestServer(app)
    await server.start_server()
    scripted = ScriptedServer(server)
    holder.append(scripted)

    async def core(_: web.Request) -> web.StreamResponse:
        return json_response(CORE_RESOURCES)

    scripted.on("GET", "/api/v1", core)
    try:
        yield scripted
    finally:
        await server.close()


@pytest.fixture
async def client(scripted_server: ScriptedServer) -> AsyncIterator[Client]:
    """A client of the scripted server with fast retries (waits of a few milliseconds)."""
    from setpoint.client import RetryPolicy

    config = ClientConfig(server=scripted_server.url, credentials=StaticToken("t0ken"))
    client = await Client.from_config(
        config, retry=RetryPolicy(max_retries=3, initial_backoff=0.001, max_backoff=0.01)
    )
    try:
        yield client
    finally:
        await client.close()


@dataclass
class TlsMaterial:
    """A throw-away CA with a server certificate (for ``localhost``) and a client certificate."""

    directory: Any
    ca_crt: Any
    server_crt: Any
    server_key: Any
    client_crt: Any
    client_key: Any


def _openssl(*args: str, cwd: Any) -> None:
    import subprocess

    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="session")
def tls_material(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterial:
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to create test certificates")
    d = tmp_path_factory.mktemp("tls")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=setpoint-test-ca",
        cwd=d,
    )
    for name, extension in (
        ("server", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n"),
        ("client", "extendedKeyUsage=clientAuth\n"),
    ):
        (d / f"{name}.ext").write_text(extension)
        _openssl(
            "req",
            *ec,
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
            cwd=d,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.crt",
            "-days",
            "2",
            "-extfile",
            f"{name}.ext",
            cwd=d,
        )
    return TlsMaterial(
        d, d / "ca.crt", d / "server.crt", d / "server.key", d / "client.crt", d / "client.key"
    )


@dataclass
class TlsServer:
    port: int
    client_subjects: list[str]


@pytest.fixture
async def tls_server(tls_material: TlsMaterial) -> AsyncIterator[TlsServer]:
    """An HTTPS server for ``localhost`` that requires a client certificate from the test CA."""
    import ssl

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(tls_material.ca_crt))
    context.load_cert_chain(str(tls_material.server_crt), str(tls_material.server_key))
    context.verify_mode = ssl.CERT_REQUIRED
    subjects: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(item[0] for item in peer["subject"]) if peer else {}
        subjects.append(str(subject.get("commonName", "")))
        if request.path == "/api/v1":
            return json_response(CORE_RESOURCES)
        return json_response(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": request.path.rsplit("/", 1)[-1]},
                "auth": request.headers.get("Authorization", ""),
            }
        )

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server(ssl=context)
    assert server.port is not None
    try:
        yield TlsServer(server.port, subjects)
    finally:
        await server.close()
