"""kube-apiserver 1.32's default mutating admission on new pods: DefaultTolerationSeconds,
Priority and the ServiceAccount plugin's API access volume."""

from __future__ import annotations

import re
from typing import Any

from tests.cluster.raw_api import RawAPI

MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "busybox"}], **spec},
    }


async def _create(api: RawAPI, namespace: str, pod: dict[str, Any]) -> Any:
    return await api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)


async def test_a_new_pod_gets_the_defaults_upstream_admission_writes(
    api: RawAPI, namespace: str
) -> None:
    reply = await _create(
        api,
        namespace,
        _pod("p", initContainers=[{"name": "init", "image": "busybox"}]),
    )

    assert reply.status == 201, reply.body
    spec = reply.body["spec"]
    assert spec["tolerations"] == [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
    ]
    assert spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert "priorityClassName" not in spec
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {
                "configMap": {
                    "name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
        "defaultMode": 420,
    }
    mount = {"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}
    assert spec["containers"][0]["volumeMounts"] == [mount]
    assert spec["initContainers"][0]["volumeMounts"] == [mount]


async def test_own_tolerations_and_mounts_are_kept(api: RawAPI, namespace: str) -> None:
    everything = {"operator": "Exists"}
    mounted = _pod(
        "own",
        tolerations=[everything],
        volumes=[{"name": "mine", "emptyDir": {}}],
    )
    mounted["spec"]["containers"][0]["volumeMounts"] = [{"name": "mine", "mountPath": MOUNT_PATH}]

    reply = await _create(api, namespace, mounted)

    spec = reply.body["spec"]
    assert spec["tolerations"] == [everything]
    assert spec["volumes"] == [{"name": "mine", "emptyDir": {}}]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "mine", "mountPath": MOUNT_PATH}]


async def test_automount_false_on_the_pod_or_its_account_adds_no_volume(
    api: RawAPI, namespace: str
) -> None:
    await api.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts",
        {"metadata": {"name": "quiet"}, "automountServiceAccountToken": False},
    )

    by_pod = await _create(api, namespace, _pod("a", automountServiceAccountToken=False))
    by_account = await _create(api, namespace, _pod("b", serviceAccountName="quiet"))
    pod_overrides = await _create(
        api, namespace, _pod("c", serviceAccountName="quiet", automountServiceAccountToken=True)
    )

    assert "volumes" not in by_pod.body["spec"]
    assert "volumeMounts" not in by_pod.body["spec"]["containers"][0]
    assert "volumes" not in by_account.body["spec"]
    assert by_account.body["spec"]["serviceAccount"] == "quiet"
    assert pod_overrides.body["spec"]["volumes"][0]["name"].startswith("kube-api-access-")


async def test_priority_comes_from_the_class(api: RawAPI, namespace: str) -> None:
    critical = await _create(api, namespace, _pod("crit", priorityClassName="system-node-critical"))
    unknown = await _create(api, namespace, _pod("nope", priorityClassName="no-such-class"))
    mismatch = await _create(api, namespace, _pod("mis", priority=5))
    matching = await _create(api, namespace, _pod("zero", priority=0))

    assert critical.status == 201
    assert critical.body["spec"]["priority"] == 2_000_001_000
    assert unknown.status == 403
    assert unknown.body["message"] == (
        'pods "nope" is forbidden: no PriorityClass with name no-such-class was found'
    )
    assert mismatch.status == 403
    assert mismatch.body["message"] == (
        'pods "mis" is forbidden: the integer value of priority (5) must not be provided in pod '
        "spec; priority admission controller computed 0 from the given PriorityClass name"
    )
    assert matching.status == 201


async def test_a_global_default_class_names_itself_on_the_pod(api: RawAPI, namespace: str) -> None:
    path = "/apis/scheduling.k8s.io/v1/priorityclasses"
    name = f"default-{namespace}"
    created = await api.request(
        "POST",
        path,
        {
            "metadata": {"name": name},
            "value": 1000,
            "globalDefault": True,
            "preemptionPolicy": "Never",
        },
    )
    assert created.status == 201, created.body
    try:
        reply = await _create(api, namespace, _pod("d"))
    finally:
        await api.request("DELETE", f"{path}/{name}")

    spec = reply.body["spec"]
    assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == (
        name,
        1000,
        "Never",
    )
