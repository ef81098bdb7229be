"""Kopf's admission handlers against the local cluster, unchanged.

Kopf runs in this process with its own ``WebhookServer`` and manages its own webhook
configurations (``settings.admission.managed``); the local cluster calls it over HTTPS.
Kopf's self-signed mode needs ``certbuilder``/``oscrypto``, which cannot load OpenSSL 3 on
this machine (oscrypto 1.3.0: "Error detecting the version of libcrypto"), so the server is
given a self-signed certificate instead — Kopf then sends it as the ``caBundle`` itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import kopf
import pytest

from setpoint.cluster.apiserver.http.serving_certificate import generate_serving_certificate
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.admission.conftest import MUTATING, VALIDATING
from tests.cluster.raw_api import RawAPI

MANAGED = "setpoint-test.kopf.dev"


def _registry() -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
        return kopf.login_with_kubeconfig(**kwargs)

    @kopf.on.validate("configmaps", id="no-bad-data", registry=registry)
    def no_bad_data(body: Any, **_: Any) -> None:
        if (body.get("data") or {}).get("bad"):
            raise kopf.AdmissionError("bad data is not allowed", code=422)

    @kopf.on.mutate("configmaps", id="stamp", registry=registry)
    def stamp(patch: kopf.Patch, **_: Any) -> None:
        patch.setdefault("metadata", {}).setdefault("labels", {})["stamped-by"] = "kopf"

    return registry


@pytest.fixture
async def kopf_operator(
    admission_cluster: BackgroundCluster,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    api: RawAPI,
) -> AsyncIterator[None]:
    """Kopf with two admission handlers, its webhook server up and its configurations
    registered in the cluster."""
    monkeypatch.setenv("KUBECONFIG", str(admission_cluster.kubeconfig_path))
    certificate = generate_serving_certificate()
    (tmp_path / "tls.crt").write_bytes(certificate.certificate_pem)
    (tmp_path / "tls.key").write_bytes(certificate.key_pem)
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    settings.admission.server = kopf.WebhookServer(
        addr="127.0.0.1",
        host="127.0.0.1",
        certfile=str(tmp_path / "tls.crt"),
        pkeyfile=str(tmp_path / "tls.key"),
    )
    settings.admission.managed = MANAGED
    ready = asyncio.Event()
    stop = asyncio.Event()
    operator = asyncio.create_task(
        kopf.operator(
            registry=_registry(),
            settings=settings,
            standalone=True,
            namespaces=[namespace],
            ready_flag=ready,
            stop_flag=stop,
        )
    )
    try:
        await asyncio.wait_for(ready.wait(), 30)
        for _ in range(300):  # Kopf registers its configurations on its own
            if await _configured(api):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("Kopf never registered its webhook configurations")
        yield
    finally:
        stop.set()
        # Kopf ends its own task cancelled once it has stopped.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(operator, 30)


async def _configured(api: RawAPI) -> bool:
    for path in (MUTATING, VALIDATING):
        reply = await api.request("GET", f"{path}/{MANAGED}")
        if reply.status != 200:
            return False
        urls = [(w.get("clientConfig") or {}).get("url") for w in reply.body.get("webhooks") or []]
        if not urls or not all(urls):
            return False
    return True


@pytest.mark.usefixtures("kopf_operator")
async def test_kopf_validate_and_mutate_handlers_admit_writes(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "good"}, "data": {}}
    created = await api.request("POST", path, good)
    assert created.status == 201, created.body
    assert created.body["metadata"]["labels"] == {"stamped-by": "kopf"}
    bad = {**good, "metadata": {"name": "bad"}, "data": {"bad": "yes"}}
    refused = await api.request("POST", path, bad)
    assert refused.status == 422, refused.body
    assert refused.body["message"].startswith("admission webhook ")
    assert refused.body["message"].endswith("denied the request: bad data is not allowed")
    assert (await api.request("GET", f"{path}/bad")).status == 404
