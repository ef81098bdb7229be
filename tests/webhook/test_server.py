"""The webhook server: reviews in both versions, denials, bad input, timeouts, limits,
certificate reload and metrics."""

from __future__ import annotations

import asyncio
import logging
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from setpoint.client.metrics import REGISTRY
from setpoint.webhook import AdmissionRequest, AdmissionResponse, Denied, Validator, WebhookServer
from setpoint.webhook.paths import mutate_path, validate_path
from setpoint.webhook.server import MAX_REQUEST_BYTES
from tests.webhook.models import Widget, widget
from tests.webhook.serving import review, serving, write_certificate


def test_paths_are_kubebuilders() -> None:
    assert mutate_path("batch.tutorial.kubebuilder.io", "v1", "CronJob") == (
        "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"
    )
    assert validate_path("", "v1", "Pod") == "/validate-core-v1-pod"


def small_widgets(obj: Widget) -> list[str]:
    if (obj.spec.size or 0) > 10:
        raise Denied("spec.size must be at most 10")
    return ["size is fine"]


async def test_a_validator_denies_and_warns_in_the_reviews_version(tmp_path: Path) -> None:
    certificate = write_certificate(tmp_path)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path)
    server.register("/validate", Validator(Widget, create=small_widgets))
    async with serving(server, certificate) as caller:
        code, answer = await caller.post("/validate", review(object=widget(size=11)))
        assert code == 200
        assert answer["apiVersion"] == "admission.k8s.io/v1"
        assert answer["response"] == {
            "uid": "u1",
            "allowed": False,
            "status": {
                "code": 403,
                "message": "spec.size must be at most 10",
                "reason": "Forbidden",
            },
        }
        code, answer = await caller.post(
            "/validate", review(uid="u2", version="v1beta1", object=widget(size=1))
        )
        assert answer["apiVersion"] == "admission.k8s.io/v1beta1"
        assert answer["response"]["uid"] == "u2"
        assert answer["response"]["allowed"] is True
        assert answer["response"]["warnings"] == ["size is fine"]


async def test_bad_input_is_refused_and_a_failing_handler_answers_500_once_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(request: AdmissionRequest) -> AdmissionResponse:
        raise RuntimeError("boom\nsecond line")

    async def handler(request: AdmissionRequest) -> AdmissionResponse:
        return broken(request)

    certificate = write_certificate(tmp_path)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path)
    server.register("/broken", handler)
    async with serving(server, certificate) as caller:
        code, answer = await caller.post("/broken", None, raw=b"{not json")
        assert code == 400
        assert answer["response"]["allowed"] is False
        assert answer["response"]["status"]["code"] == 400
        code, _ = await caller.post("/broken", {"kind": "Pod"})
        assert code == 400
        code, answer = await caller.post("/broken", review(), content_type="text/plain")
        assert code == 400
        assert answer["response"]["status"]["message"] == (
            "contentType=text/plain, expected application/json"
        )
        code, _ = await caller.post("/broken", None, raw=b" " * (MAX_REQUEST_BYTES + 1))
        assert code == 413
        with caplog.at_level(logging.ERROR, logger="setpoint.webhook.server"):
            code, answer = await caller.post("/broken", review(object={}))
        assert code == 200
        assert answer["response"]["allowed"] is False
        assert answer["response"]["status"] == {
            "code": 500,
            "message": "RuntimeError: boom",
            "reason": "InternalError",
        }
        tracebacks = [r for r in caplog.records if r.exc_info]
        assert len(tracebacks) == 1
        code, _ = await caller.post("/missing", review())
        assert code in (404, 405)


async def test_a_handler_is_bounded_by_the_timeout_query_parameter(tmp_path: Path) -> None:
    never = asyncio.Event()

    async def hang(request: AdmissionRequest) -> AdmissionResponse:
        await never.wait()
        return AdmissionResponse()

    certificate = write_certificate(tmp_path)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path)
    server.register("/hang", hang)
    async with serving(server, certificate) as caller:
        code, answer = await caller.post("/hang?timeout=1s", review())
    assert code == 200
    assert answer["response"]["allowed"] is False
    assert answer["response"]["status"]["message"] == "the webhook did not answer within 1s"


async def test_a_rotated_certificate_is_served_to_new_connections(tmp_path: Path) -> None:
    first = write_certificate(tmp_path)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path)
    server.register("/v", Validator(Widget))
    async with serving(server, first) as caller:
        assert (await caller.post("/v", review(object=widget())))[0] == 200
        second = write_certificate(tmp_path)
        assert server.certificates.reload_if_changed()
        assert not server.certificates.reload_if_changed()
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await caller.post("/v", review(object=widget()))
        caller.context = ssl.create_default_context(cadata=second.trusted_pem.decode())
        assert (await caller.post("/v", review(object=widget())))[0] == 200


async def test_requests_are_counted_under_controller_runtimes_names(tmp_path: Path) -> None:
    certificate = write_certificate(tmp_path)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path)
    server.register("/counted", Validator(Widget))

    def count(name: str, **labels: Any) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    before = count("controller_runtime_webhook_requests_total", webhook="/counted", code="200")
    async with serving(server, certificate) as caller:
        await caller.post("/counted", review(object=widget()))
    after = count("controller_runtime_webhook_requests_total", webhook="/counted", code="200")
    assert after == before + 1
    assert count("controller_runtime_webhook_latency_seconds_count", webhook="/counted") >= 1
    assert count("controller_runtime_webhook_requests_in_flight", webhook="/counted") == 0


async def test_a_server_without_its_certificate_does_not_start(tmp_path: Path) -> None:
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path / "absent")
    with pytest.raises(FileNotFoundError):
        await server.start()
    assert not server.ready


async def test_on_every_interface_the_reported_port_is_the_ipv4_one(tmp_path: Path) -> None:
    # Port 0 on every interface binds IPv4 and IPv6 to different ports; URLs say 127.0.0.1.
    certificate = write_certificate(tmp_path)
    server = WebhookServer(port=0, cert_dir=tmp_path)
    server.register("/v", Validator(Widget))
    async with serving(server, certificate) as caller:
        for _ in range(3):
            assert (await caller.post("/v", review(object=widget())))[0] == 200
