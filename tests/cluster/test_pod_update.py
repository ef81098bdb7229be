"""What an update may change in a pod's spec (``ValidatePodUpdate``, kube-apiserver 1.32)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from setpoint.testing import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI

MERGE = "application/merge-patch+json"
#: Strategic merge patches merge containers by name (a merge patch would replace the list,
#: dropping the service account's volume mount the server added: refused, as upstream).
STRATEGIC = "application/strategic-merge-patch+json"
FORBIDDEN_PREFIX = (
    'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than '
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
    "negative)\n"
)


async def _pod(api: RawAPI, namespace: str, **spec: Any) -> str:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]}],
            **spec,
        },
    }
    path = f"/api/v1/namespaces/{namespace}/pods"
    reply = await api.request("POST", path, body)
    assert reply.status == 201, reply.body
    return f"{path}/p"


async def _patch(api: RawAPI, path: str, spec: dict[str, Any]) -> Any:
    return await api.request("PATCH", path, {"spec": spec}, content_type=STRATEGIC)


async def test_a_pods_image_may_change_and_its_ports_may_not(
    api_only: RawAPI, api_only_namespace: str
) -> None:
    path = await _pod(api_only, api_only_namespace)
    image = [{"name": "c", "image": "busybox:1.36", "ports": [{"containerPort": 80}]}]
    port = [{"name": "c", "image": "busybox:1.36", "ports": [{"containerPort": 81}]}]

    changed_image = await _patch(api_only, path, {"containers": image})
    changed_port = await _patch(api_only, path, {"containers": port})

    assert changed_image.status == 200, changed_image.body
    assert changed_image.body["spec"]["containers"][0]["image"] == "busybox:1.36"
    assert changed_port.status == 422, changed_port.body
    message = changed_port.body["message"]
    assert message.startswith(FORBIDDEN_PREFIX), message
    assert '- spec.containers[0].ports: [{"containerPort":80,"protocol":"TCP"}]' in message
    causes = changed_port.body["details"]["causes"]
    assert [(c["reason"], c["field"]) for c in causes] == [("FieldValueForbidden", "spec")]
    stored = await api_only.request("GET", path)
    assert stored.body["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "protocol": "TCP"}
    ]


async def test_containers_may_not_be_added_or_removed(
    api_only: RawAPI, api_only_namespace: str
) -> None:
    path = await _pod(api_only, api_only_namespace)
    two = [{"name": "c", "image": "busybox"}, {"name": "d", "image": "busybox"}]

    reply = await _patch(api_only, path, {"containers": two})

    assert reply.status == 422, reply.body
    assert reply.body["message"] == (
        'Pod "p" is invalid: spec.containers: Forbidden: pod updates may not add or remove '
        "containers"
    )


async def test_the_active_deadline_may_be_set_and_lowered_only(
    api_only: RawAPI, api_only_namespace: str
) -> None:
    path = await _pod(api_only, api_only_namespace)

    set_ = await _patch(api_only, path, {"activeDeadlineSeconds": 100})
    lowered = await _patch(api_only, path, {"activeDeadlineSeconds": 50})
    raised = await _patch(api_only, path, {"activeDeadlineSeconds": 60})
    removed = await _patch(api_only, path, {"activeDeadlineSeconds": None})

    assert (set_.status, lowered.status) == (200, 200)
    assert raised.status == 422
    assert raised.body["message"] == (
        'Pod "p" is invalid: spec.activeDeadlineSeconds: Invalid value: 60: must be less than '
        "or equal to previous value"
    )
    assert removed.status == 422
    assert "must not update from a positive integer to nil value" in removed.body["message"]


async def test_tolerations_may_only_be_added(api_only: RawAPI, api_only_namespace: str) -> None:
    first = {"key": "a", "operator": "Exists", "effect": "NoSchedule"}
    second = {"key": "b", "operator": "Exists", "effect": "NoSchedule"}
    path = await _pod(api_only, api_only_namespace, tolerations=[first])
    current = (await api_only.request("GET", path)).body["spec"]["tolerations"]

    added = await _patch(api_only, path, {"tolerations": [*current, second]})
    dropped = await _patch(api_only, path, {"tolerations": [second]})

    assert added.status == 200, added.body
    assert dropped.status == 422
    assert dropped.body["message"] == (
        'Pod "p" is invalid: spec.tolerations: Forbidden: existing toleration can not be '
        "modified except its tolerationSeconds"
    )


async def test_ephemeral_containers_change_only_through_their_subresource(
    api_only: RawAPI, api_only_namespace: str
) -> None:
    path = await _pod(api_only, api_only_namespace)
    debug = [{"name": "debug", "image": "busybox"}]

    reply = await _patch(api_only, path, {"ephemeralContainers": debug})

    assert reply.status == 422, reply.body
    assert reply.body["message"].startswith(FORBIDDEN_PREFIX)
    assert (await api_only.request("GET", path)).body["spec"].get("ephemeralContainers") is None


async def test_an_unchanged_replace_and_a_label_change_are_fine(
    api_only: RawAPI, api_only_namespace: str
) -> None:
    path = await _pod(api_only, api_only_namespace)
    current = (await api_only.request("GET", path)).body

    replaced = await api_only.request("PUT", path, current)
    labelled = await api_only.request(
        "PATCH", path, {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE
    )

    assert (replaced.status, labelled.status) == (200, 200)


def test_kubectl_shows_the_refusal(
    api_only_cluster: BackgroundCluster, api_only_namespace: str, tmp_path: Path
) -> None:
    kubectl = Kubectl(api_only_cluster.kubeconfig_path, tmp_path / "cache")
    manifest = (
        '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},'
        '"spec":{"containers":[{"name":"c","image":"busybox"}]}}'
    )
    kubectl.run("apply", "-n", api_only_namespace, "-f", "-", stdin=manifest)

    result = kubectl.run(
        "patch",
        "pod",
        "p",
        "-n",
        api_only_namespace,
        "-p",
        '{"spec":{"containers":[{"name":"c","workingDir":"/tmp"}]}}',
        check=False,
    )

    assert result.returncode == 1
    assert 'The Pod "p" is invalid: spec: Forbidden: pod updates may not change fields' in (
        result.stderr
    )
