"""operator_sdk.util.k8s_event and osdk_metric in a playbook, and the ansible_operator_* metrics
on the operator's /metrics endpoint, against the local cluster."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest

pytest.importorskip("ansible_runner")

from setpoint.ansible import AnsibleOperator, load_operator
from setpoint.client import Client
from setpoint.testing import install_crds, run_operator, wait_for

GROUP = "events.test.setpoint.dev"
API = f"{GROUP}/v1"
GVK = f"{GROUP}/v1, Kind=Herald"
RUN_TIMEOUT = 60.0

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"heralds.{GROUP}"},
    "spec": {
        "group": GROUP,
        "names": {"kind": "Herald", "listKind": "HeraldList", "plural": "heralds",
                  "singular": "herald"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object",
                                     "x-kubernetes-preserve-unknown-fields": True},
                            "status": {"type": "object",
                                       "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}  # fmt: skip

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: announce
      operator_sdk.util.k8s_event:
        name: "{{ ansible_operator_meta.name }}-announced"
        namespace: "{{ ansible_operator_meta.namespace }}"
        reason: Announced
        message: "size is {{ size }}"
        type: Normal
        reportingComponent: herald-operator
        source:
          component: herald-operator
        involvedObject:
          apiVersion: events.test.setpoint.dev/v1
          kind: Herald
          name: "{{ ansible_operator_meta.name }}"
          namespace: "{{ ansible_operator_meta.namespace }}"

    - name: count the runs
      operator_sdk.util.osdk_metric:
        name: herald_runs
        description: Runs of the herald playbook
        counter:
          increment: true

    - name: the size
      operator_sdk.util.osdk_metric:
        name: herald_size
        description: The last size announced
        gauge:
          set: "{{ size }}"

    - name: a wrong type for a known name
      operator_sdk.util.osdk_metric:
        name: herald_runs
        description: Runs of the herald playbook
        gauge:
          set: 1
      register: refused
      ignore_errors: true

    - name: report the refusal
      operator_sdk.util.k8s_status:
        api_version: events.test.setpoint.dev/v1
        kind: Herald
        name: "{{ ansible_operator_meta.name }}"
        namespace: "{{ ansible_operator_meta.namespace }}"
        status:
          refused: "{{ refused.msg }}"
          announced: "size is {{ size }}"
"""


def _announced(obj: dict[str, Any], size: int) -> bool:
    status = obj.get("status") or {}
    return status.get("announced") == f"size is {size}" and any(
        c.get("type") == "Successful" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _sample(body: str, name: str, labels: str = "") -> float | None:
    match = re.search(rf"^{re.escape(name + labels)} (\S+)$", body, re.MULTILINE)
    return float(match.group(1)) if match else None


@pytest.mark.timeout(300)
async def test_events_and_metrics_from_a_playbook(
    client: Client, namespace: str, kubeconfig: str, tmp_path: Path
) -> None:
    project = tmp_path / "herald-operator"
    (project / "playbooks").mkdir(parents=True)
    (project / "playbooks" / "herald.yml").write_text(PLAYBOOK)
    (project / "watches.yaml").write_text(
        f"- version: v1\n  group: {GROUP}\n  kind: Herald\n  playbook: playbooks/herald.yml\n"
        # the Event is a dependent that every run changes: watched, it would run it again
        "  blacklist: [{group: '', version: v1, kind: Event}]\n"
    )
    await install_crds(client, CRD)
    op = load_operator(project, artifacts_root=tmp_path / "runs", user_metrics_port=0)
    async with run_operator(
        op, kubeconfig=kubeconfig, namespace=namespace, metrics_bind_address="127.0.0.1:0"
    ) as running:
        assert isinstance(running, AnsibleOperator)
        herald = await client.create(
            {
                "apiVersion": API,
                "kind": "Herald",
                "metadata": {"name": "h1", "namespace": namespace},
                "spec": {"size": 3},
            }
        )
        done = await wait_for(
            lambda: client.get(API, "Herald", "h1", namespace=namespace),
            lambda obj: _announced(obj, 3),
            timeout=RUN_TIMEOUT,
            what="the first run",
        )
        assert (
            done["status"]["refused"]
            == "cannot change metric type of herald_runs, which is a counter"
        )
        event = await client.get("v1", "Event", "h1-announced", namespace=namespace)
        assert event["reason"] == "Announced"
        assert event["message"] == "size is 3"
        assert event["type"] == "Normal"
        assert event["count"] == 1
        assert event["source"] == {"component": "herald-operator"}
        assert event["involvedObject"]["uid"] == herald["metadata"]["uid"]
        # created through the proxy: the CR owns it, as any object a run creates
        assert event["metadata"]["ownerReferences"][0]["uid"] == herald["metadata"]["uid"]

        await client.patch(API, "Herald", "h1", {"spec": {"size": 5}}, namespace=namespace)
        await wait_for(
            lambda: client.get(API, "Herald", "h1", namespace=namespace),
            lambda obj: _announced(obj, 5),
            timeout=RUN_TIMEOUT,
            what="the second run",
        )
        event = await client.get("v1", "Event", "h1-announced", namespace=namespace)
        assert (event["count"], event["message"]) == (2, "size is 5")

        endpoint = running.metrics_endpoint
        assert endpoint is not None
        async with (
            aiohttp.ClientSession() as session,
            session.get(endpoint.url + "/metrics") as response,
        ):
            body = await response.text()
    labels = f'{{GVK="{GVK}",result="succeeded"}}'
    assert _sample(body, "ansible_operator_reconcile_result", labels) == 2.0
    assert _sample(body, "ansible_operator_reconciles_count", f'{{GVK="{GVK}"}}') == 2.0
    assert _sample(body, "ansible_operator_reconciles_bucket", f'{{GVK="{GVK}",le="+Inf"}}') == 2.0
    assert re.search(r'^ansible_operator_build_info\{commit="",version="[^"]+"\} 1\.0$', body, re.M)
    # Python's Prometheus client names a counter *_total (Go's keeps the name as given)
    assert _sample(body, "herald_runs_total") == 2.0
    assert _sample(body, "herald_size") == 5.0
