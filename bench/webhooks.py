"""Benchmark of admission webhooks: what they add to a create, and how many reviews
one webhook server answers.

    python -m bench.webhooks [--json] [--quick]

Each measurement runs setpoint's ``WebhookServer`` (a ConfigMap defaulter and validator; see
``bench.webhook_server_process``) beside a bare aiohttp HTTPS echo answering ``allowed: true``,
each in its own process, in the same run:

- **Added latency of a create**: sequential ConfigMap creates through ``setpoint cluster
  serve --in-memory`` (its own process). Both servers are configured at once, each with one
  mutating and one validating webhook whose ``objectSelector`` picks the ConfigMaps labelled
  for it; creates go round-robin to "no webhook" (no label), setpoint and the echo, so that
  the three series share the machine's noise. p50 and p99 of each, and the added p50/p99 (with
  minus without). The aim is <= 3 ms added at p50.
- **Reviews per second**: AdmissionReviews (CREATE of a ConfigMap) posted to ``/validate`` by
  this process, 16 at a time over keep-alive HTTPS (a minimal HTTP/1.1 client on asyncio
  streams, cheaper than the servers it measures), for a fixed count, in rounds alternating
  between the two servers; the best round of each (other processes only ever slow a round
  down). The aim for setpoint's server is >= 2,000/s on one core.

- **The review path alone**: microseconds per review of setpoint's handler path (decode, the
  typed validator or defaulter, the answer, encode) and of the echo's, in this process with no
  HTTP or TLS: what a webhook server's own code costs, without the transport both share.

Times are wall-clock on a shared 2-core machine; the ratio to the echo is the figure to
compare across machines.
"""

from __future__ import annotations

import asyncio
import base64
import json
import statistics
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import aiohttp

from bench.apiserver import start_target
from bench.command_line import run_benchmark
from bench.results_table import render_table
from bench.server_process import free_port, python_module_argv
from setpoint.cluster.apiserver.http.serving_certificate import generate_serving_certificate

SERVERS: Final = ("setpoint", "echo")
CONCURRENCY: Final = 16
ADMISSION: Final = "/apis/admissionregistration.k8s.io/v1"


@dataclass(frozen=True)
class Sizes:
    """Creates per latency phase; reviews per throughput run."""

    creates: int
    reviews: int


FULL: Final = Sizes(creates=500, reviews=5_000)
QUICK: Final = Sizes(creates=20, reviews=200)
#: Throughput rounds per server (the best is kept).
ROUNDS: Final = 3


class WebhookProcess:
    """``bench.webhook_server_process`` of one kind, started and stopped."""

    def __init__(self, kind: str, cert_dir: Path) -> None:
        self.kind = kind
        self.port = free_port()
        self._process = subprocess.Popen(
            python_module_argv("bench.webhook_server_process", kind, str(self.port), str(cert_dir)),
            stdout=subprocess.PIPE,
            text=True,
        )

    async def ready(self) -> None:
        assert self._process.stdout is not None
        line = await asyncio.to_thread(self._process.stdout.readline)
        if line.strip() != "ready":
            raise RuntimeError(f"webhook server {self.kind} did not start")

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()


def _percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.99) - 1)]


def _configmap(name: str, target: str = "") -> dict[str, Any]:
    labels = {"bench": target} if target else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"a": "1"},
    }


def _configuration(kind: str, server: str, port: int, path: str, bundle: str) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": f"bench-{server}-{path.strip('/')}"},
        "webhooks": [
            {
                "name": f"{path.strip('/')}.{server}.bench.example.com",
                "clientConfig": {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle},
                "objectSelector": {"matchLabels": {"bench": server}},
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["configmaps"],
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }


async def _create(http: aiohttp.ClientSession, base: str, name: str, target: str) -> float:
    started = time.perf_counter()
    async with http.post(
        f"{base}/api/v1/namespaces/default/configmaps", json=_configmap(name, target)
    ) as response:
        await response.read()
        if response.status != 201:
            raise RuntimeError(f"create failed: {response.status}")
    return (time.perf_counter() - started) * 1000


async def _latency(
    http: aiohttp.ClientSession,
    base: str,
    servers: list[WebhookProcess],
    bundle: str,
    count: int,
) -> dict[str, float]:
    for server in servers:
        for kind, path in (
            ("MutatingWebhookConfiguration", "/mutate"),
            ("ValidatingWebhookConfiguration", "/validate"),
        ):
            body = _configuration(kind, server.kind, server.port, path, bundle)
            async with http.post(f"{base}{ADMISSION}/{kind.lower()}s", json=body) as response:
                if response.status != 201:
                    raise RuntimeError(f"{kind} not created: {await response.text()}")
    targets = ["", *(server.kind for server in servers)]
    times: dict[str, list[float]] = {target: [] for target in targets}
    for index in range(count):
        for target in targets:
            name = f"{target or 'none'}-{index}"
            times[target].append(await _create(http, base, name, target))
    figures: dict[str, float] = {}
    p50_without, p99_without = _percentiles(times[""])
    figures["create_no_webhooks_p50_ms"] = round(p50_without, 3)
    figures["create_no_webhooks_p99_ms"] = round(p99_without, 3)
    for server in servers:
        p50, p99 = _percentiles(times[server.kind])
        prefix = f"create_{server.kind}"
        figures[f"{prefix}_two_webhooks_p50_ms"] = round(p50, 3)
        figures[f"{prefix}_two_webhooks_p99_ms"] = round(p99, 3)
        figures[f"{prefix}_added_p50_ms"] = round(p50 - p50_without, 3)
        figures[f"{prefix}_added_p99_ms"] = round(p99 - p99_without, 3)
    return figures


async def _reviews_per_second(server: WebhookProcess, ca_pem: bytes, count: int) -> float:
    """Reviews per second ``server`` answers to ``CONCURRENCY`` keep-alive HTTPS connections.

    The client is a minimal HTTP/1.1 one on asyncio streams sending pre-encoded requests: an
    aiohttp client costs more per request than the server it measures, and one such client
    process was the bottleneck of every server (the echo included).
    """
    import ssl

    context = ssl.create_default_context(cadata=ca_pem.decode())
    bodies = [_review_body() for _ in range(CONCURRENCY)]
    requests = [
        b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
        for body in bodies
    ]

    async def worker(index: int, share: int) -> None:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", server.port, ssl=context, server_hostname="127.0.0.1"
        )
        try:
            for _ in range(share):
                writer.write(requests[index])
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                answer = await reader.readexactly(length)
                if not head.startswith(b"HTTP/1.1 200") or b'"allowed":' not in answer:
                    raise RuntimeError(f"unexpected answer: {head!r} {answer[:200]!r}")
                if b'"allowed":true' not in answer and b'"allowed": true' not in answer:
                    raise RuntimeError(f"review refused: {answer[:200]!r}")
        finally:
            writer.close()

    await asyncio.gather(*(worker(i, 4) for i in range(CONCURRENCY)))  # warm-up
    started = time.perf_counter()
    share = count // CONCURRENCY
    await asyncio.gather(*(worker(i, share) for i in range(CONCURRENCY)))
    elapsed = time.perf_counter() - started
    return share * CONCURRENCY / elapsed


def _review_body() -> bytes:
    obj = _configmap("r")
    obj["metadata"]["namespace"] = "default"
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "operation": "CREATE",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "object": obj,
        },
    }
    return json.dumps(review).encode()


async def _review_path_microseconds(count: int) -> dict[str, float]:
    """Microseconds per review of the handler path alone, no HTTP or TLS: setpoint's (decode,
    AdmissionRequest, the typed handler, the answer, encode) for the validator and the
    defaulter of ``bench.webhook_server_process``, and the echo's (json in, json out). Rounds
    alternate between the three; the best round of each."""
    from bench.webhook_server_process import echo_answer, setpoint_handlers
    from setpoint.webhook.review import AdmissionRequest
    from setpoint.webhook.server import _DECODE, _ENCODE

    body = _review_body()
    handlers = setpoint_handlers()

    async def setpoint_path(path: str) -> None:
        request = AdmissionRequest.from_review(_DECODE(body))
        answer = await handlers[path](request)
        _ENCODE(answer.to_review(request.uid, request.api_version))

    async def echo_path() -> None:
        echo_answer(body)

    paths = {
        "validate": lambda: setpoint_path("/validate"),
        "mutate": lambda: setpoint_path("/mutate"),
        "echo": echo_path,
    }
    best: dict[str, float] = {}
    for _ in range(ROUNDS):
        for name, run in paths.items():
            started = time.perf_counter()
            for _ in range(count):
                await run()
            elapsed = (time.perf_counter() - started) / count * 1e6
            best[name] = min(best.get(name, elapsed), elapsed)
    return {
        "review_path_setpoint_validate_us": round(best["validate"], 1),
        "review_path_setpoint_mutate_us": round(best["mutate"], 1),
        "review_path_echo_us": round(best["echo"], 1),
    }


async def measure(sizes: Sizes) -> dict[str, Any]:
    """Run every measurement; the figures by name."""
    figures: dict[str, Any] = await _review_path_microseconds(sizes.reviews)
    certificate = generate_serving_certificate()
    bundle = base64.b64encode(certificate.certificate_pem).decode()
    with tempfile.TemporaryDirectory(prefix="bench-webhooks-") as workdir:
        cert_dir = Path(workdir) / "certs"
        cert_dir.mkdir()
        (cert_dir / "tls.crt").write_bytes(certificate.certificate_pem)
        (cert_dir / "tls.key").write_bytes(certificate.key_pem)
        servers = [WebhookProcess(kind, cert_dir) for kind in SERVERS]
        try:
            for server in servers:
                await server.ready()
            best: dict[str, float] = {}
            for _ in range(ROUNDS):
                for server in servers:
                    rate = await _reviews_per_second(
                        server, certificate.certificate_pem, sizes.reviews
                    )
                    best[server.kind] = max(best.get(server.kind, 0.0), rate)
            for kind, rate in best.items():
                figures[f"reviews_per_second_{kind}"] = round(rate)
            cluster = await start_target("memory", Path(workdir))
            try:
                async with aiohttp.ClientSession(headers=cluster.headers) as http:
                    figures.update(
                        await _latency(http, cluster.url, servers, bundle, sizes.creates)
                    )
            finally:
                cluster.stop()
        finally:
            for server in servers:
                server.stop()
    for path in ("validate", "mutate"):
        figures[f"review_path_{path}_ratio_to_echo"] = round(
            figures[f"review_path_setpoint_{path}_us"] / figures["review_path_echo_us"], 2
        )
    if figures.get("reviews_per_second_echo"):
        figures["reviews_per_second_ratio_to_echo"] = round(
            figures["reviews_per_second_setpoint"] / figures["reviews_per_second_echo"], 2
        )
    return figures


def render(figures: dict[str, Any]) -> str:
    """The human-readable table."""
    rows = [[name, value] for name, value in figures.items()]
    return (
        render_table(["measurement", "value"], rows)
        + "\n(aims: added create latency <= 3 ms at p50; >= 2,000 reviews/s for setpoint)"
    )


def failures(figures: dict[str, Any]) -> list[str]:
    """Measurements that did not produce a figure."""
    expected = [
        "reviews_per_second_setpoint",
        "reviews_per_second_echo",
        "create_setpoint_added_p50_ms",
        "create_echo_added_p50_ms",
    ]
    return [name for name in expected if name not in figures]


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    run_benchmark("bench.webhooks", __doc__, measure, (FULL, QUICK), render, failures, argv)


if __name__ == "__main__":
    main()
