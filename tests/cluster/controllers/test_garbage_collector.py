"""The garbage collector through the API with the official client: the three propagation
policies, custom-resource and cluster-scoped owners, dangling references."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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


def owner_ref(owner: dict[str, Any], *, block: bool = False) -> dict[str, Any]:
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def config_map(name: str, *refs: dict[str, Any], finalizers: list[str] | None = None) -> Any:
    meta: dict[str, Any] = {"name": name, "ownerReferences": list(refs)}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def unscheduled_pod(name: str, *refs: dict[str, Any]) -> Any:
    # schedulerName no scheduler serves: the pod stays unbound, so it is deleted at once.
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "ownerReferences": list(refs)},
        "spec": {
            "schedulerName": "nobody",
            "containers": [{"name": "app", "image": "busybox"}],
        },
    }


def gone(read: Any) -> bool:
    try:
        read()
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


def create_widget(custom_objects: client.CustomObjectsApi, group: str, ns: str, name: str) -> Any:
    return custom_objects.create_namespaced_custom_object(
        group, "v1", ns, "widgets", widget(name, group)
    )


def test_background_deletion_removes_a_custom_resource_s_config_map_and_pod(
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    widget_group: str,
    namespace: str,
) -> None:
    owner = create_widget(custom_objects, widget_group, namespace, "owner")
    core_v1.create_namespaced_config_map(namespace, config_map("child", owner_ref(owner)))
    core_v1.create_namespaced_pod(namespace, unscheduled_pod("child", owner_ref(owner)))

    custom_objects.delete_namespaced_custom_object(
        widget_group, "v1", namespace, "widgets", "owner", propagation_policy="Background"
    )

    eventually_sync(lambda: gone(lambda: core_v1.read_namespaced_config_map("child", namespace)))
    eventually_sync(lambda: gone(lambda: core_v1.read_namespaced_pod("child", namespace)))


def test_foreground_deletion_waits_for_blocking_dependents(
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    widget_group: str,
    namespace: str,
) -> None:
    owner = create_widget(custom_objects, widget_group, namespace, "owner")
    core_v1.create_namespaced_config_map(
        namespace, config_map("held", owner_ref(owner, block=True), finalizers=[HOLD])
    )
    core_v1.create_namespaced_pod(namespace, unscheduled_pod("child", owner_ref(owner)))

    custom_objects.delete_namespaced_custom_object(
        widget_group, "v1", namespace, "widgets", "owner", propagation_policy="Foreground"
    )

    def held_deleting() -> bool:
        held = core_v1.read_namespaced_config_map("held", namespace)
        return held.metadata.deletion_timestamp is not None

    eventually_sync(held_deleting, "the blocking dependent marked deleting")
    remaining = custom_objects.get_namespaced_custom_object(
        widget_group, "v1", namespace, "widgets", "owner"
    )
    assert remaining["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert "deletionTimestamp" in remaining["metadata"]

    core_v1.patch_namespaced_config_map(
        "held", namespace, [{"op": "remove", "path": "/metadata/finalizers"}]
    )

    eventually_sync(
        lambda: gone(
            lambda: custom_objects.get_namespaced_custom_object(
                widget_group, "v1", namespace, "widgets", "owner"
            )
        ),
        "the owner deleted once its blocking dependent is gone",
    )
    eventually_sync(lambda: gone(lambda: core_v1.read_namespaced_pod("child", namespace)))


def test_orphan_deletion_keeps_dependents_without_the_reference(
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    widget_group: str,
    namespace: str,
) -> None:
    owner = create_widget(custom_objects, widget_group, namespace, "owner")
    other = create_widget(custom_objects, widget_group, namespace, "other")
    core_v1.create_namespaced_config_map(
        namespace, config_map("child", owner_ref(owner), owner_ref(other))
    )

    custom_objects.delete_namespaced_custom_object(
        widget_group, "v1", namespace, "widgets", "owner", propagation_policy="Orphan"
    )

    eventually_sync(
        lambda: gone(
            lambda: custom_objects.get_namespaced_custom_object(
                widget_group, "v1", namespace, "widgets", "owner"
            )
        )
    )
    child = core_v1.read_namespaced_config_map("child", namespace)
    assert [ref.name for ref in child.metadata.owner_references] == ["other"]


def test_cluster_scoped_owner_collects_namespaced_dependents(
    api_client: client.ApiClient, core_v1: client.CoreV1Api, namespace: str
) -> None:
    rbac = client.RbacAuthorizationV1Api(api_client)
    role = rbac.create_cluster_role({"metadata": {"name": f"owner-{namespace}"}, "rules": []})
    ref = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "name": role.metadata.name,
        "uid": role.metadata.uid,
    }
    core_v1.create_namespaced_config_map(namespace, config_map("child", ref))

    rbac.delete_cluster_role(role.metadata.name)

    eventually_sync(lambda: gone(lambda: core_v1.read_namespaced_config_map("child", namespace)))


def test_dangling_references_delete_or_are_stripped(
    core_v1: client.CoreV1Api,
    custom_objects: client.CustomObjectsApi,
    widget_group: str,
    namespace: str,
) -> None:
    live = create_widget(custom_objects, widget_group, namespace, "live")
    stale = dict(owner_ref(live), uid="00000000-0000-4000-8000-000000000000")
    absent = dict(owner_ref(live), name="absent", uid="00000000-0000-4000-8000-000000000001")
    core_v1.create_namespaced_config_map(namespace, config_map("orphaned", stale))
    core_v1.create_namespaced_config_map(namespace, config_map("partly", owner_ref(live), absent))

    eventually_sync(
        lambda: gone(lambda: core_v1.read_namespaced_config_map("orphaned", namespace)),
        "a dependent whose only owner has another uid deleted",
    )

    def stripped() -> bool:
        partly = core_v1.read_namespaced_config_map("partly", namespace)
        return [ref.name for ref in partly.metadata.owner_references] == ["live"]

    eventually_sync(stripped, "the dangling reference removed")


def test_an_owner_in_another_namespace_is_absent_with_a_warning(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    owner = core_v1.create_namespaced_config_map(
        "default", {"metadata": {"generateName": "far-owner-"}}
    )
    try:
        ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": owner.metadata.name,
            "uid": owner.metadata.uid,
        }
        core_v1.create_namespaced_config_map(namespace, config_map("child", ref))

        eventually_sync(
            lambda: gone(lambda: core_v1.read_namespaced_config_map("child", namespace)),
            "the dependent of an owner in another namespace deleted",
        )

        def warning() -> Any:
            return next(
                (
                    e
                    for e in core_v1.list_namespaced_event(namespace).items
                    if e.reason == "OwnerRefInvalidNamespace"
                ),
                None,
            )

        event = eventually_sync(warning, "OwnerRefInvalidNamespace event")
        assert event.type == "Warning"
        assert event.message == (
            f"ownerRef [v1/ConfigMap, namespace: {namespace}, name: {owner.metadata.name}, "
            f'uid: {owner.metadata.uid}] does not exist in namespace "{namespace}"'
        )
        assert event.source.component == "garbage-collector-controller"
    finally:
        core_v1.delete_namespaced_config_map(owner.metadata.name, "default")
