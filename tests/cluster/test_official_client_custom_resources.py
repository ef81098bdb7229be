"""CRDs and custom resources through the official ``kubernetes`` Python client."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.cluster.crd_manifests import widget, widget_crd


@pytest.fixture
def widget_group(api_client: client.ApiClient) -> Iterator[str]:
    """A freshly installed Widget CRD; yields its group and deletes it afterwards."""
    extensions = client.ApiextensionsV1Api(api_client)
    crd = widget_crd()
    created = extensions.create_custom_resource_definition(crd)
    conditions = {c.type: c.status for c in created.status.conditions}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    yield crd["spec"]["group"]
    extensions.delete_custom_resource_definition(crd["metadata"]["name"])


def test_custom_resource_crud(
    custom_objects: client.CustomObjectsApi, namespace: str, widget_group: str
) -> None:
    args = (widget_group, "v1", namespace, "widgets")
    created = custom_objects.create_namespaced_custom_object(*args, widget("w1", widget_group))
    assert created["metadata"]["generation"] == 1
    assert created["spec"] == {"size": 1, "color": "blue"}  # defaulted

    fetched = custom_objects.get_namespaced_custom_object(*args, "w1")
    assert fetched == created

    listed = custom_objects.list_namespaced_custom_object(*args)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["w1"]

    fetched["spec"]["size"] = 2
    updated = custom_objects.replace_namespaced_custom_object(*args, "w1", fetched)
    assert updated["metadata"]["generation"] == 2

    patched = custom_objects.patch_namespaced_custom_object(*args, "w1", {"spec": {"size": 3}})
    assert patched["spec"]["size"] == 3
    assert patched["metadata"]["generation"] == 3

    status = custom_objects.patch_namespaced_custom_object_status(
        *args, "w1", {"status": {"ready": True}}
    )
    assert status["status"] == {"ready": True}
    assert status["metadata"]["generation"] == 3  # status writes keep the generation

    custom_objects.delete_namespaced_custom_object(*args, "w1")
    with pytest.raises(ApiException) as caught:
        custom_objects.get_namespaced_custom_object(*args, "w1")
    assert caught.value.status == 404


def test_invalid_custom_resource_is_rejected_naming_the_field(
    custom_objects: client.CustomObjectsApi, namespace: str, widget_group: str
) -> None:
    with pytest.raises(ApiException) as caught:
        custom_objects.create_namespaced_custom_object(
            widget_group, "v1", namespace, "widgets", widget("bad", widget_group, size="x")
        )
    assert caught.value.status == 422
    status = json.loads(caught.value.body)
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        f'Widget.{widget_group} "bad" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"'
    )
    assert [cause["field"] for cause in status["details"]["causes"]] == ["spec.size"]


def test_finalizer_holds_deletion_until_removed(
    custom_objects: client.CustomObjectsApi, namespace: str, widget_group: str
) -> None:
    args = (widget_group, "v1", namespace, "widgets")
    body = widget("held", widget_group)
    body["metadata"]["finalizers"] = ["example.com/hold"]
    custom_objects.create_namespaced_custom_object(*args, body)

    deleting = custom_objects.delete_namespaced_custom_object(*args, "held")
    assert deleting["metadata"]["deletionTimestamp"]
    still_there = custom_objects.get_namespaced_custom_object(*args, "held")
    assert still_there["metadata"]["finalizers"] == ["example.com/hold"]

    custom_objects.patch_namespaced_custom_object(*args, "held", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as caught:
        custom_objects.get_namespaced_custom_object(*args, "held")
    assert caught.value.status == 404


def test_deleting_the_crd_removes_its_endpoints_and_objects(
    api_client: client.ApiClient, custom_objects: client.CustomObjectsApi, namespace: str
) -> None:
    extensions = client.ApiextensionsV1Api(api_client)
    crd = widget_crd()
    group = crd["spec"]["group"]
    extensions.create_custom_resource_definition(crd)
    custom_objects.create_namespaced_custom_object(
        group, "v1", namespace, "widgets", widget("w", group)
    )
    extensions.delete_custom_resource_definition(crd["metadata"]["name"])
    groups = client.ApisApi(api_client).get_api_versions()
    assert group not in [g.name for g in groups.groups]
    with pytest.raises(ApiException) as caught:
        custom_objects.list_namespaced_custom_object(group, "v1", namespace, "widgets")
    assert caught.value.status == 404
