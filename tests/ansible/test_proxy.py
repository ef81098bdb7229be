"""The operator's API proxy as Ansible's kubernetes.core modules use it: what gets an owner and a
dependent watch, against the local cluster (no Ansible run needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

pytest.importorskip("ansible_runner")

from setpoint.ansible import AnsibleOperator, load_operator
from setpoint.ansible.kubeconfig import Owner, encode_owner
from setpoint.client import Client
from setpoint.testing import install_crds, run_operator

from .test_events_and_metrics import CRD

API = "events.test.setpoint.dev/v1"


async def _post(url: str, owner: Owner, path: str, body: dict[str, Any]) -> dict[str, Any]:
    # the kubeconfig's user name and password, as client-go sends them
    headers = {"Authorization": aiohttp.encode_basic_auth(encode_owner(owner), "unused")}
    async with (
        aiohttp.ClientSession() as session,
        session.post(url + path, json=body, headers=headers) as response,
    ):
        assert response.status == 201, await response.text()
        answer: dict[str, Any] = await response.json()
        return answer


async def test_virtual_resources_get_no_owner_and_no_watch(
    client: Client, namespace: str, kubeconfig: str, tmp_path: Path
) -> None:
    (tmp_path / "play.yml").write_text("- hosts: localhost\n  tasks: []\n")
    (tmp_path / "watches.yaml").write_text(
        "- {version: v1, group: events.test.setpoint.dev, kind: Herald, playbook: play.yml}\n"
    )
    await install_crds(client, CRD)
    op = load_operator(tmp_path, artifacts_root=tmp_path / "runs", user_metrics_port=0)
    owner = Owner(API, "Herald", "h1", "0b7e3c52-8d1e-4a8c-9f4e-000000000001", namespace)
    # all namespaces: a cluster-scoped dependent could be watched
    async with run_operator(op, kubeconfig=kubeconfig) as running:
        assert isinstance(running, AnsibleOperator)
        url = await running.proxy.url()
        review = await _post(
            url,
            owner,
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}},
            },
        )
        metadata = review.get("metadata") or {}
        assert ("annotations" in metadata, "ownerReferences" in metadata) == (False, False)
        made = await _post(
            url,
            owner,
            f"/api/v1/namespaces/{namespace}/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made"}},
        )
        assert made["metadata"]["ownerReferences"] == [owner.reference()]
        # the review is a virtual resource (it cannot be listed): no watch either
        watched = {kind for _, _, kind, _ in running._dependent_watches}
        assert watched == {"ConfigMap"}
