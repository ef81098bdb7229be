"""The namespace controller through the API: content deleted, conditions reported while a
custom resource's finalizer holds it, the namespace gone once the finalizer is removed."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.crd_manifests import widget, widget_crd

HOLD = "example.com/hold"


@pytest.fixture(scope="module")
def widget_group(api_client: client.ApiClient) -> Iterator[str]:
    crd = widget_crd()
    extensions = client.ApiextensionsV1Api(api_client)
    extensions.create_custom_resource_definition(crd)
    try:
        yield crd["spec"]["group"]
    finally:
        extensions.delete_custom_resource_definition(crd["metadata"]["name"])


def namespace_gone(core_v1: client.CoreV1Api, name: str) -> bool:
    try:
        core_v1.read_namespace(name)
    except ApiException as exc:
        assert exc.status == 404
        return True
    return False


def test_system_namespaces_exist(core_v1: client.CoreV1Api) -> None:
    names = {ns.metadata.name for ns in core_v1.list_namespace().items}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_protected_namespaces_refuse_deletion(core_v1: client.CoreV1Api, name: str) -> None:
    with pytest.raises(ApiException) as caught:
        core_v1.delete_namespace(name)
    assert caught.value.status == 403
    assert "this namespace may not be deleted" in caught.value.body


def test_deletion_waits_for_a_finalizer_holding_custom_resource(
    core_v1: client.CoreV1Api, custom_objects: client.CustomObjectsApi, widget_group: str
) -> None:
    name = f"doomed-{secrets.token_hex(4)}"
    core_v1.create_namespace({"metadata": {"name": name}})
    core_v1.create_namespaced_config_map(name, {"metadata": {"name": "plain"}})
    held = widget("held", widget_group)
    held["metadata"]["finalizers"] = [HOLD]
    custom_objects.create_namespaced_custom_object(widget_group, "v1", name, "widgets", held)

    core_v1.delete_namespace(name)

    def reports_the_finalizer() -> dict[str, client.V1NamespaceCondition]:
        status = core_v1.read_namespace(name).status
        conditions = {c.type: c for c in status.conditions or []}
        remaining = conditions.get("NamespaceFinalizersRemaining")
        return conditions if remaining is not None and remaining.status == "True" else {}

    conditions = eventually_sync(reports_the_finalizer, "NamespaceFinalizersRemaining True")
    assert list(conditions) == [
        "NamespaceDeletionDiscoveryFailure",
        "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure",
        "NamespaceContentRemaining",
        "NamespaceFinalizersRemaining",
    ]
    finalizers = conditions["NamespaceFinalizersRemaining"]
    assert finalizers.reason == "SomeFinalizersRemain"
    assert finalizers.message == (
        f"Some content in the namespace has finalizers remaining: {HOLD} in 1 resource instances"
    )
    content = conditions["NamespaceContentRemaining"]
    assert (content.status, content.reason) == ("True", "SomeResourcesRemain")
    assert content.message == (
        f"Some resources are remaining: widgets.{widget_group} has 1 resource instances"
    )
    discovery = conditions["NamespaceDeletionDiscoveryFailure"]
    assert (discovery.status, discovery.reason) == ("False", "ResourcesDiscovered")
    assert core_v1.read_namespace(name).status.phase == "Terminating"
    assert core_v1.list_namespaced_config_map(name).items == []

    custom_objects.patch_namespaced_custom_object(
        widget_group,
        "v1",
        name,
        "widgets",
        "held",
        {"metadata": {"finalizers": None}},
    )

    eventually_sync(lambda: namespace_gone(core_v1, name), "the namespace removed")


def test_a_namespace_with_running_pods_goes_away(core_v1: client.CoreV1Api) -> None:
    name = f"pods-{secrets.token_hex(4)}"
    core_v1.create_namespace({"metadata": {"name": name}})
    core_v1.create_namespaced_pod(
        name,
        {
            "metadata": {"name": "app"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]},
        },
    )

    core_v1.delete_namespace(name)

    eventually_sync(lambda: namespace_gone(core_v1, name), "the namespace removed")
