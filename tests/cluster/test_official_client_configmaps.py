"""ConfigMaps through the official ``kubernetes`` Python client against the local cluster."""

from __future__ import annotations

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException


def _configmap(name: str, data: dict[str, str]) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data)


def test_create_get_list_update_patch_delete(core_v1: client.CoreV1Api, namespace: str) -> None:
    created = core_v1.create_namespaced_config_map(namespace, _configmap("cm1", {"a": "1"}))
    assert created.metadata.uid
    assert created.metadata.creation_timestamp is not None
    assert created.data == {"a": "1"}

    fetched = core_v1.read_namespaced_config_map("cm1", namespace)
    assert fetched.metadata.resource_version == created.metadata.resource_version

    listed = core_v1.list_namespaced_config_map(namespace)
    # Beside the root CA publisher's ConfigMap, in every namespace as on a real cluster.
    assert [item.metadata.name for item in listed.items] == ["cm1", "kube-root-ca.crt"]

    fetched.data["b"] = "2"
    updated = core_v1.replace_namespaced_config_map("cm1", namespace, fetched)
    assert updated.data == {"a": "1", "b": "2"}
    assert int(updated.metadata.resource_version) > int(created.metadata.resource_version)

    patched = core_v1.patch_namespaced_config_map(
        "cm1", namespace, {"data": {"c": "3"}}, _content_type="application/merge-patch+json"
    )
    assert patched.data == {"a": "1", "b": "2", "c": "3"}

    status = core_v1.delete_namespaced_config_map("cm1", namespace)
    assert status["status"] == "Success"
    with pytest.raises(ApiException) as caught:
        core_v1.read_namespaced_config_map("cm1", namespace)
    assert caught.value.status == 404


def test_stale_update_gets_conflict(core_v1: client.CoreV1Api, namespace: str) -> None:
    created = core_v1.create_namespaced_config_map(namespace, _configmap("cm", {"a": "1"}))
    core_v1.patch_namespaced_config_map(
        "cm", namespace, {"data": {"a": "2"}}, _content_type="application/merge-patch+json"
    )
    created.data = {"a": "stale"}
    with pytest.raises(ApiException) as caught:
        core_v1.replace_namespaced_config_map("cm", namespace, created)
    assert caught.value.status == 409
    assert "the object has been modified" in caught.value.body


def test_watch_sees_added_modified_deleted_in_order(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    start = core_v1.list_namespaced_config_map(namespace).metadata.resource_version
    core_v1.create_namespaced_config_map(namespace, _configmap("w", {"a": "1"}))
    core_v1.patch_namespaced_config_map(
        "w", namespace, {"data": {"a": "2"}}, _content_type="application/merge-patch+json"
    )
    core_v1.delete_namespaced_config_map("w", namespace)
    watcher = watch.Watch()
    seen = []
    for event in watcher.stream(
        core_v1.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=10
    ):
        seen.append((event["type"], event["object"].metadata.name))
        if event["type"] == "DELETED":
            watcher.stop()
    assert seen == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


def test_pagination_returns_every_object_exactly_once(
    core_v1: client.CoreV1Api, namespace: str
) -> None:
    created = {f"p{i:02d}" for i in range(23)}
    for name in created:
        core_v1.create_namespaced_config_map(namespace, _configmap(name, {}))
    names = created | {"kube-root-ca.crt"}  # the root CA publisher's, in every namespace
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = core_v1.list_namespaced_config_map(namespace, limit=5, _continue=token)
        pages += 1
        if page.metadata._continue:
            assert page.metadata.remaining_item_count == len(names) - len(seen) - 5
        seen.extend(item.metadata.name for item in page.items)
        token = page.metadata._continue
        if not token:
            break
    assert sorted(seen) == sorted(names)
    assert pages == 5
