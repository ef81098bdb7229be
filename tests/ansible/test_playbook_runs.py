"""A playbook watch end to end: a failed task as a Warning Event and the Failure condition, then
operator_sdk.util.k8s_status and requeue_after, with snakeCaseParameters off (field names kept),
each run's trigger in its Event, the owner annotations on a dependent in another namespace, and
reads answered from the operator's cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ansible_runner")

from setpoint.ansible import load_operator
from setpoint.client import Client
from setpoint.testing import install_crds, run_operator, wait_for, wait_for_event

API = "test.setpoint.dev/v1"
RUN_TIMEOUT = 60.0

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.test.setpoint.dev"},
    "spec": {
        "group": "test.setpoint.dev",
        "names": {
            "kind": "Gadget",
            "listKind": "GadgetList",
            "plural": "gadgets",
            "singular": "gadget",
        },
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
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: fail when asked
      ansible.builtin.fail:
        msg: "spec.failWith says {{ failWith }}"
      when: failWith is defined

    - name: report the addresses
      operator_sdk.util.k8s_status:
        api_version: test.setpoint.dev/v1
        kind: Gadget
        name: "{{ ansible_operator_meta.name }}"
        namespace: "{{ ansible_operator_meta.namespace }}"
        status:
          egressIPs: "{{ egressIPs }}"

    - name: a dependent in another namespace
      kubernetes.core.k8s:
        definition:
          apiVersion: v1
          kind: ConfigMap
          metadata:
            name: "gadget-{{ ansible_operator_meta.namespace }}"
            namespace: default

    - operator_sdk.util.requeue_after:
        time: 1h
"""


async def _notes(client: Client, namespace: str, reason: str) -> list[str]:
    events = await client.list("events.k8s.io/v1", "Event", namespace=namespace)
    return [event.get("note") or "" for event in events if event.get("reason") == reason]


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    for item in (obj.get("status") or {}).get("conditions") or []:
        if item.get("type") == type_:
            return dict(item)
    return {}


@pytest.mark.timeout(300)
async def test_failure_then_status_and_requeue(
    client: Client, namespace: str, kubeconfig: str, tmp_path: Path
) -> None:
    project = tmp_path / "gadget-operator"
    (project / "playbooks").mkdir(parents=True)
    (project / "playbooks" / "gadget.yml").write_text(PLAYBOOK)
    (project / "watches.yaml").write_text(
        "- version: v1\n  group: test.setpoint.dev\n  kind: Gadget\n"
        "  playbook: playbooks/gadget.yml\n  snakeCaseParameters: false\n"
    )
    await install_crds(client, CRD)
    op = load_operator(project, artifacts_root=tmp_path / "runs")
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace) as running:
        gadget = await client.create(
            {
                "apiVersion": API,
                "kind": "Gadget",
                "metadata": {"name": "g1", "namespace": namespace},
                "spec": {"egressIPs": ["10.0.0.1"], "failWith": "boom"},
            }
        )
        event = await wait_for_event(
            client, gadget, reason="AnsibleTaskFailed", type="Warning", timeout=RUN_TIMEOUT
        )
        assert event["note"] == (
            "task 'fail when asked' failed: spec.failWith says boom; trigger: Gadget "
            f"{namespace}/g1 added"
        )
        failed = await wait_for(
            lambda: client.get(API, "Gadget", "g1", namespace=namespace),
            lambda obj: condition(obj, "Failure").get("status") == "True",
            timeout=RUN_TIMEOUT,
            what="the Failure condition",
        )
        assert condition(failed, "Failure")["message"] == "spec.failWith says boom"
        assert condition(failed, "Failure")["ansibleResult"]["failures"] == 1

        await client.patch(API, "Gadget", "g1", {"spec": {"failWith": None}}, namespace=namespace)
        done = await wait_for(
            lambda: client.get(API, "Gadget", "g1", namespace=namespace),
            lambda obj: condition(obj, "Successful").get("status") == "True",
            timeout=RUN_TIMEOUT,
            what="the Successful condition",
        )
        assert done["status"]["egressIPs"] == ["10.0.0.1"]  # not egress_i_ps, not egress_ips
        assert condition(done, "Failure")["status"] == "False"
        notes = await wait_for(
            lambda: _notes(client, namespace, "AnsibleRunSucceeded"),
            timeout=RUN_TIMEOUT,
            what="the AnsibleRunSucceeded Event",
        )
        assert f"trigger: Gadget {namespace}/g1 spec changed (generation 2)" in " | ".join(notes)
        # a dependent an owner reference cannot reach is tied by Operator SDK's annotations
        other = await client.get("v1", "ConfigMap", f"gadget-{namespace}", namespace="default")
        assert "ownerReferences" not in other["metadata"]
        assert other["metadata"]["annotations"] == {
            "operator-sdk/primary-resource": f"{namespace}/g1",
            "operator-sdk/primary-resource-type": "Gadget.test.setpoint.dev",
        }
        await client.delete("v1", "ConfigMap", f"gadget-{namespace}", namespace="default")
        # k8s_status read the Gadget through the proxy, which answered from the cache
        assert isinstance(running, type(op))
        assert running.proxy.server is not None
        assert running.proxy.server.cache_hits >= 1
