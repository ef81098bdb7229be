"""The multi-version tutorial through the local cluster: a CronJob created in v1 with the real
kubectl reads back in v2 with its schedule as fields, converted by the operator's ``/convert``.

Needs the local cluster to call CRD conversion webhooks (``spec.conversion.strategy:
Webhook``), which is being built on another branch; until it is merged, this test fails and is
marked so (strictly: the marker must go once it passes).
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import yaml
from cronjob_operator.api.v1.cronjob import CronJob
from cronjob_operator.api.v2.cronjob import CronJob as CronJobV2
from cronjob_operator.operator import op

from setpoint import Client
from setpoint.api.resources import crd_manifest
from setpoint.testing import install_crds, run_operator
from setpoint.webhook.local_registration import make_local_certificates

GROUP = "batch.tutorial.kubebuilder.io"
CRD = f"cronjobs.{GROUP}"


async def kubectl(kubeconfig: str, cache: Path, *args: str, stdin: str = "") -> tuple[int, str]:
    """The real kubectl, without blocking this loop (the operator's webhooks serve on it)."""
    process = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache), *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    output, errors = await asyncio.wait_for(process.communicate(stdin.encode()), 60)
    assert process.returncode == 0, errors.decode()
    return int(process.returncode or 0), output.decode()


def converting_crd(port: int, ca_pem: bytes) -> dict[str, Any]:
    """The CRD of both versions, converted by the webhook on 127.0.0.1:``port``."""
    crd = crd_manifest(CronJob, CronJobV2)
    crd["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "url": f"https://127.0.0.1:{port}/convert",
                "caBundle": base64.b64encode(ca_pem).decode(),
            },
        },
    }
    return crd


async def test_a_cronjob_created_in_v1_reads_in_v2_with_the_schedule_as_fields(
    client: Client, kubeconfig: str, namespace: str, tmp_path: Path
) -> None:
    ca_pem = make_local_certificates(tmp_path / "certs")
    await install_crds(client, crd_manifest(CronJob, CronJobV2))
    async with run_operator(
        op,
        kubeconfig=kubeconfig,
        namespace=namespace,
        webhook_port=0,
        webhook_host="127.0.0.1",
        webhook_cert_dir=str(tmp_path / "certs"),
    ) as running:
        assert running.webhook_server is not None
        await install_crds(client, converting_crd(running.webhook_server.port, ca_pem))
        try:
            created = {
                "apiVersion": f"{GROUP}/v1",
                "kind": "CronJob",
                "metadata": {"name": "hello", "namespace": namespace},
                "spec": {"schedule": "*/1 0 * * 1-5", "jobTemplate": {"spec": {}}},
            }
            await kubectl(kubeconfig, tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump(created))
            _, text = await kubectl(
                kubeconfig, tmp_path, "get", f"cronjobs.v2.{GROUP}", "hello", "-n", namespace,
                "-o", "json",
            )  # fmt: skip
            read = json.loads(text)
            assert read["apiVersion"] == f"{GROUP}/v2"
            assert read["spec"]["schedule"] == {"minute": "*/1", "hour": "0", "dayOfWeek": "1-5"}
            # And back: the stored v1 object is unchanged.
            _, text = await kubectl(
                kubeconfig, tmp_path, "get", f"cronjobs.v1.{GROUP}", "hello", "-n", namespace,
                "-o", "jsonpath={.spec.schedule}",
            )  # fmt: skip
            assert text == "*/1 0 * * 1-5"
        finally:
            # No CRD is left converting through a server that is about to stop.
            await client.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", CRD)
