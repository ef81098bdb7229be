"""watches.yaml options at run time, against the local cluster: ``selector``,
``maxConcurrentReconciles``, ``watchAnnotationsChanges``, ``markUnsafe``, ``blacklist`` and
``watchClusterScopedResources``.

One operator (all namespaces, as Operator SDK's default) runs one watch per option, each on its
own kind and the same playbook, for the whole module: Ansible runs cost a second or two each
(and a module run about half a second more: only the kinds whose tests read the status report
it with k8s_status).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

pytest.importorskip("ansible_runner")

from setpoint.ansible import AnsibleOperator, load_operator
from setpoint.client import Client
from setpoint.client.errors import NotFound
from setpoint.testing import install_crds, run_operator, wait_for
from setpoint.testing.background_cluster import BackgroundCluster

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(300)]

GROUP = "options.test.setpoint.dev"
API = f"{GROUP}/v1"
RUN_TIMEOUT = 60.0
KINDS = ("Picky", "Pair", "Noted", "Raw", "Cooked", "Keeper", "Wide", "Narrow", "Global", "Loner")

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    cr: "{{ lookup('ansible.builtin.vars', cr_variable) }}"
  tasks:
    - name: meet the partner run
      when: partner is defined
      block:
        - ansible.builtin.file:
            path: "{{ scratch }}/{{ ansible_operator_meta.name }}.started"
            state: touch
        - ansible.builtin.wait_for:
            path: "{{ scratch }}/{{ partner }}.started"
            timeout: 40

    - name: a ConfigMap and a Secret
      when: namespaced_dependents | default(false)
      kubernetes.core.k8s:
        definition:
          apiVersion: v1
          kind: "{{ item }}"
          metadata:
            name: "{{ ansible_operator_meta.name }}-dependent"
            namespace: "{{ ansible_operator_meta.namespace }}"
      loop: [ConfigMap, Secret]

    - name: a ConfigMap where the (cluster-scoped) resource says
      when: target_namespace is defined
      kubernetes.core.k8s:
        definition:
          apiVersion: v1
          kind: ConfigMap
          metadata:
            name: "{{ ansible_operator_meta.name }}-dependent"
            namespace: "{{ target_namespace }}"

    - name: a ClusterRole
      when: cluster_dependent | default(false)
      kubernetes.core.k8s:
        definition:
          apiVersion: rbac.authorization.k8s.io/v1
          kind: ClusterRole
          metadata:
            name: "{{ ansible_operator_meta.namespace }}-{{ ansible_operator_meta.name }}"
          rules: []

    - name: report
      when: report | default(false)
      operator_sdk.util.k8s_status:
        api_version: "{{ cr.apiVersion }}"
        kind: "{{ cr.kind }}"
        name: "{{ ansible_operator_meta.name }}"
        namespace: "{{ ansible_operator_meta.namespace }}"
        status:
          message: "{{ message | default('') }}"
          note: "{{ (cr.metadata.annotations | default({})).note | default('') }}"
"""


def _watch(kind: str, scratch: Path, extra: str = "", variables: str = "") -> str:
    return (
        f"- version: v1\n  group: {GROUP}\n  kind: {kind}\n  playbook: playbooks/options.yml\n"
        f"  vars: {{cr_variable: _options_test_setpoint_dev_{kind.lower()}, "
        f"scratch: '{scratch}'{variables}}}\n{extra}"
    )


def _crd(kind: str, scope: str = "Namespaced") -> dict[str, Any]:
    plural = kind.lower() + "s"
    open_object = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
            },
            "scope": scope,
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": open_object, "status": open_object},
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def shared_namespace(local_cluster: BackgroundCluster) -> Iterator[str]:
    name = "ansible-options-" + secrets.token_hex(3)
    local_cluster.create_namespace(name)
    try:
        yield name
    finally:
        local_cluster.delete_namespace(name)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(local_cluster: BackgroundCluster) -> AsyncIterator[Client]:
    async with await Client.from_kubeconfig(str(local_cluster.kubeconfig_path)) as client:
        yield client


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def operator(
    api: Client, kubeconfig: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[AnsibleOperator]:
    project = tmp_path_factory.mktemp("options-operator")
    scratch = tmp_path_factory.mktemp("scratch")
    (project / "playbooks").mkdir()
    (project / "playbooks" / "options.yml").write_text(PLAYBOOK)
    (project / "watches.yaml").write_text(
        _watch("Picky", scratch, "  selector: {matchLabels: {tier: gold}}\n")
        + _watch("Pair", scratch, "  maxConcurrentReconciles: 2\n")
        + _watch("Noted", scratch, "  watchAnnotationsChanges: true\n", ", report: true")
        + _watch("Raw", scratch, "  markUnsafe: true\n", ", report: true")
        + _watch("Cooked", scratch, "", ", report: true")
        + _watch(
            "Keeper",
            scratch,
            "  blacklist: [{group: '', version: v1, kind: ConfigMap}]\n",
            ", namespaced_dependents: true",
        )
        + _watch(
            "Wide", scratch, "  watchClusterScopedResources: true\n", ", cluster_dependent: true"
        )
        + _watch("Narrow", scratch, "", ", cluster_dependent: true")
        + _watch("Global", scratch)
        + _watch(
            "Loner",
            scratch,
            "  manageStatus: false\n  watchDependentResources: false\n",
            ", namespaced_dependents: true",
        )
    )
    await install_crds(
        api, *(_crd(kind, "Cluster" if kind == "Global" else "Namespaced") for kind in KINDS)
    )
    op = load_operator(project, artifacts_root=tmp_path_factory.mktemp("runs"))
    async with run_operator(op, kubeconfig=kubeconfig) as running:
        assert isinstance(running, AnsibleOperator)
        yield running


async def _create(
    api: Client, kind: str, name: str, namespace: str, spec: dict[str, Any], **metadata: Any
) -> dict[str, Any]:
    return await api.create(
        {
            "apiVersion": API,
            "kind": kind,
            "metadata": {"name": name, "namespace": namespace, **metadata},
            "spec": spec,
        }
    )


def _successful(obj: dict[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Successful" and c.get("status") == "True" for c in conditions)


async def _reconciled(api: Client, kind: str, name: str, namespace: str) -> dict[str, Any]:
    obj: dict[str, Any] = await wait_for(
        lambda: api.get(API, kind, name, namespace=namespace),
        _successful,
        timeout=RUN_TIMEOUT,
        what=f"{kind} {name} reconciled",
    )
    return obj


async def _run_notes(api: Client, namespace: str, name: str) -> list[str]:
    events = await api.list("events.k8s.io/v1", "Event", namespace=namespace)
    return [
        event.get("note") or ""
        for event in events
        if event.get("reason") == "AnsibleRunSucceeded"
        and (event.get("regarding") or {}).get("name") == name
    ]


async def test_selector_reconciles_only_the_matching_resources(
    api: Client, operator: AnsibleOperator, shared_namespace: str
) -> None:
    ns = shared_namespace
    # the one left out first: its event is handled (and dropped) before the other's
    await _create(api, "Picky", "plain", ns, {"message": "plain"}, labels={"tier": "bronze"})
    await _create(api, "Picky", "gold", ns, {"message": "gold"}, labels={"tier": "gold"})
    await _reconciled(api, "Picky", "gold", ns)
    plain = await api.get(API, "Picky", "plain", namespace=ns)
    assert "status" not in plain
    assert await _run_notes(api, ns, "plain") == []


async def test_max_concurrent_reconciles_runs_two_resources_at_once(
    api: Client, operator: AnsibleOperator, shared_namespace: str
) -> None:
    # Each run waits (up to 40 s) for the other's to have started: with one worker the first
    # run would fail, and neither could succeed before it had.
    ns = shared_namespace
    await _create(api, "Pair", "left", ns, {"partner": "right", "message": "left"})
    await _create(api, "Pair", "right", ns, {"partner": "left", "message": "right"})
    for name in ("left", "right"):
        done = await _reconciled(api, "Pair", name, ns)
        failure = next(c for c in done["status"]["conditions"] if c["type"] == "Failure")
        assert failure["status"] == "False"
    assert operator.watches[1].max_concurrent_reconciles == 2


async def test_watch_annotations_changes_runs_on_an_annotation_change(
    api: Client, operator: AnsibleOperator, shared_namespace: str
) -> None:
    ns = shared_namespace
    for kind in ("Noted", "Cooked"):
        await _create(api, kind, "annotated", ns, {}, annotations={"note": "first"})
    for kind in ("Noted", "Cooked"):
        assert (await _reconciled(api, kind, "annotated", ns))["status"]["note"] == "first"
    for kind in ("Cooked", "Noted"):
        await api.patch(
            API, kind, "annotated", {"metadata": {"annotations": {"note": "second"}}}, namespace=ns
        )
    await wait_for(
        lambda: api.get(API, "Noted", "annotated", namespace=ns),
        lambda obj: obj["status"]["note"] == "second",
        timeout=RUN_TIMEOUT,
        what="a run after the annotation changed",
    )
    await wait_for(
        lambda: _run_notes(api, ns, "annotated"),
        lambda notes: any(f"trigger: Noted {ns}/annotated changed" in note for note in notes),
        timeout=RUN_TIMEOUT,
        what="the run's Event naming the annotation change",
    )
    # without watchAnnotationsChanges only a new generation runs the playbook
    cooked = await api.get(API, "Cooked", "annotated", namespace=ns)
    assert cooked["status"]["note"] == "first"


async def test_mark_unsafe_keeps_templates_in_the_resource_as_text(
    api: Client, operator: AnsibleOperator, shared_namespace: str
) -> None:
    ns = shared_namespace
    for kind in ("Raw", "Cooked"):
        await _create(api, kind, "template", ns, {"message": "{{ 6 * 7 }}"})
    raw = await _reconciled(api, "Raw", "template", ns)
    cooked = await _reconciled(api, "Cooked", "template", ns)
    assert raw["status"]["message"] == "{{ 6 * 7 }}"
    assert cooked["status"]["message"] == 42  # templated (and typed) by Ansible


async def test_blacklisted_dependents_are_not_watched(
    api: Client, operator: AnsibleOperator, shared_namespace: str
) -> None:
    ns = shared_namespace
    keeper = await _create(api, "Keeper", "keeper", ns, {})
    await _reconciled(api, "Keeper", "keeper", ns)
    for kind in ("ConfigMap", "Secret"):
        dependent = await api.get("v1", kind, "keeper-dependent", namespace=ns)
        assert dependent["metadata"]["ownerReferences"][0]["uid"] == keeper["metadata"]["uid"]
    await api.delete("v1", "ConfigMap", "keeper-dependent", namespace=ns)
    await api.delete("v1", "Secret", "keeper-dependent", namespace=ns)
    await wait_for(
        lambda: api.get("v1", "Secret", "keeper-dependent", namespace=ns),
        timeout=RUN_TIMEOUT,
        what="the deleted Secret to come back",
    )
    # a watched ConfigMap would have noted its deletion too: "... deleted (and 1 more)"
    notes = await wait_for(
        lambda: _run_notes(api, ns, "keeper"),
        lambda notes: any(
            note.endswith(f"trigger: dependent Secret {ns}/keeper-dependent deleted")
            for note in notes
        ),
        timeout=RUN_TIMEOUT,
        what="the run's Event naming the Secret",
    )
    assert not any("ConfigMap" in note for note in notes), notes


async def test_cluster_scoped_dependents_are_watched_only_when_asked(
    api: Client, operator: AnsibleOperator, shared_namespace: str
) -> None:
    ns = shared_namespace
    names = {kind: f"{ns}-{kind.lower()}" for kind in ("Wide", "Narrow")}
    try:
        for kind in names:
            await _create(api, kind, kind.lower(), ns, {})
        for kind, name in names.items():
            await _reconciled(api, kind, kind.lower(), ns)
            role = await api.get("rbac.authorization.k8s.io/v1", "ClusterRole", name)
            assert role["metadata"]["annotations"] == {
                "operator-sdk/primary-resource": f"{ns}/{kind.lower()}",
                "operator-sdk/primary-resource-type": f"{kind}.{GROUP}",
            }
        for name in (names["Narrow"], names["Wide"]):
            await api.delete("rbac.authorization.k8s.io/v1", "ClusterRole", name)
        await wait_for(
            lambda: api.get("rbac.authorization.k8s.io/v1", "ClusterRole", names["Wide"]),
            timeout=RUN_TIMEOUT,
            what="the Wide's ClusterRole to come back",
        )
        await wait_for(
            lambda: _run_notes(api, ns, "wide"),
            lambda notes: any(
                f"dependent ClusterRole {names['Wide']} deleted" in note for note in notes
            ),
            timeout=RUN_TIMEOUT,
            what="the run's Event naming the ClusterRole",
        )
        assert not any("ClusterRole" in note for note in await _run_notes(api, ns, "narrow"))
        with pytest.raises(NotFound):
            await api.get("rbac.authorization.k8s.io/v1", "ClusterRole", names["Narrow"])
    finally:
        for kind in names:
            await api.delete(API, kind, kind.lower(), namespace=ns)
        for name in names.values():
            try:
                await api.delete("rbac.authorization.k8s.io/v1", "ClusterRole", name)
            except NotFound:
                pass


async def test_a_cluster_scoped_resource_owns_what_it_creates_in_a_namespace(
    api: Client, operator: AnsibleOperator, shared_namespace: str
) -> None:
    ns = shared_namespace
    name = f"global-{ns}"
    owner = await api.create(
        {"apiVersion": API, "kind": "Global", "metadata": {"name": name},
         "spec": {"targetNamespace": ns}}
    )  # fmt: skip
    await wait_for(
        lambda: api.get(API, "Global", name),
        _successful,
        timeout=RUN_TIMEOUT,
        what="the Global reconciled",
    )
    dependent = await api.get("v1", "ConfigMap", f"{name}-dependent", namespace=ns)
    # Operator SDK's reference: these four fields, no controller, no blockOwnerDeletion
    assert dependent["metadata"]["ownerReferences"] == [
        {"apiVersion": API, "kind": "Global", "name": name, "uid": owner["metadata"]["uid"]}
    ]
    assert "annotations" not in dependent["metadata"]
    await api.delete(API, "Global", name)
    await wait_for(
        lambda: _absent(api, "v1", "ConfigMap", f"{name}-dependent", ns),
        timeout=RUN_TIMEOUT,
        what="the garbage collector to delete the ConfigMap",
    )


async def test_without_status_management_or_dependent_watches(
    api: Client, operator: AnsibleOperator, shared_namespace: str
) -> None:
    ns = shared_namespace
    await _create(api, "Loner", "loner", ns, {})
    await wait_for(
        lambda: _run_notes(api, ns, "loner"),
        timeout=RUN_TIMEOUT,
        what="the first run's Event",
    )
    loner = await api.get(API, "Loner", "loner", namespace=ns)
    assert "status" not in loner  # manageStatus: false writes no conditions
    # the run's dependents still get their owner, but nothing watches them
    dependent = await api.get("v1", "ConfigMap", "loner-dependent", namespace=ns)
    assert dependent["metadata"]["ownerReferences"][0]["uid"] == loner["metadata"]["uid"]
    await api.delete("v1", "ConfigMap", "loner-dependent", namespace=ns)
    await api.patch(API, "Loner", "loner", {"spec": {"again": True}}, namespace=ns)
    # a watched ConfigMap would have run it, or been counted: "... (and 1 more)"
    notes = await wait_for(
        lambda: _run_notes(api, ns, "loner"),
        lambda notes: len(notes) == 2,
        timeout=RUN_TIMEOUT,
        what="the second run's Event",
    )
    assert any(
        note.endswith(f"trigger: Loner {ns}/loner spec changed (generation 2)") for note in notes
    ), notes
    assert "status" not in await api.get(API, "Loner", "loner", namespace=ns)


async def _absent(api: Client, api_version: str, kind: str, name: str, namespace: str) -> bool:
    try:
        await api.get(api_version, kind, name, namespace=namespace)
    except NotFound:
        return True
    return False
