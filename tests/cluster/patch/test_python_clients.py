"""Each Python client's DEFAULT patch and apply calls against the local cluster.

- ``kubernetes`` and ``kubernetes_asyncio``: ``patch_namespaced_*`` with a dict (strategic merge
  patch for built-ins), ``CustomObjectsApi.patch_*`` (merge patch in ``kubernetes``; a JSON
  patch in ``kubernetes_asyncio``, so a dict body gets 400 as from kube-apiserver),
  ``DynamicClient.patch`` (strategic merge patch: 415 on a custom resource, as kube-apiserver
  answers) and ``DynamicClient.server_side_apply``; a conflict is ``ApiException`` with status
  409, except that kubernetes_asyncio's DynamicClient returns the 409 ``Status`` instead.
- ``lightkube``: ``patch()`` (strategic by default: 415 on custom resources) and ``apply()``;
  a conflict is ``ApiError`` with ``status.code`` 409.
- ``kr8s``: ``patch()`` (merge patch; kr8s 0.20 has no server-side apply); a stale
  ``resourceVersion`` is ``ServerError`` with status 409.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import kr8s.asyncio
import lightkube
import pytest
from kr8s._exceptions import ServerError
from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException
from kubernetes_asyncio import client as aclient
from kubernetes_asyncio import config as aconfig
from kubernetes_asyncio import dynamic as adynamic
from kubernetes_asyncio.client.rest import ApiException as AsyncApiException
from lightkube.config.kubeconfig import KubeConfig
from lightkube.generic_resource import create_namespaced_resource
from lightkube.models.core_v1 import Container, PodSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap, Pod

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.patch.conftest import Gadgets

TWO_CONTAINERS = [{"name": "app", "image": "app:1"}, {"name": "side", "image": "side:1"}]


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [dict(c) for c in TWO_CONTAINERS]},
    }


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


IMAGE_PATCH = {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}


def images(spec_containers: list[Any]) -> dict[str, str]:
    return {c["name"]: c["image"] for c in spec_containers}


# -- kubernetes (official) -------------------------------------------------------------------


@pytest.fixture
def dynamic_client(api_client: client.ApiClient) -> Iterator[dynamic.DynamicClient]:
    yield dynamic.DynamicClient(api_client)


def test_official_default_patch_is_strategic(core_v1: client.CoreV1Api, namespace: str) -> None:
    core_v1.create_namespaced_pod(namespace, pod("p"))
    patched = core_v1.patch_namespaced_pod("p", namespace, IMAGE_PATCH)
    assert {c.name: c.image for c in patched.spec.containers} == {"app": "app:2", "side": "side:1"}
    core_v1.create_namespaced_config_map(namespace, configmap("c", a="1"))
    cm = core_v1.patch_namespaced_config_map("c", namespace, {"data": {"b": "2"}})
    assert cm.data == {"a": "1", "b": "2"}
    assert "OpenAPI-Generator" in {m.manager for m in cm.metadata.managed_fields}


def test_official_server_side_apply_and_conflict(
    dynamic_client: dynamic.DynamicClient, namespace: str
) -> None:
    configmaps = dynamic_client.resources.get(api_version="v1", kind="ConfigMap")
    applied = dynamic_client.server_side_apply(
        configmaps, configmap("c", a="1"), namespace=namespace, field_manager="alice"
    )
    assert applied.data.a == "1"
    assert [m.manager for m in applied.metadata.managedFields] == ["alice"]
    with pytest.raises(ApiException) as caught:
        dynamic_client.server_side_apply(
            configmaps, configmap("c", a="2"), namespace=namespace, field_manager="bob"
        )
    assert caught.value.status == 409
    forced = dynamic_client.server_side_apply(
        configmaps,
        configmap("c", a="2"),
        namespace=namespace,
        field_manager="bob",
        force_conflicts=True,
    )
    assert forced.data.a == "2"


async def test_official_custom_resources(
    gadgets: Gadgets, api_client: client.ApiClient, dynamic_client: dynamic.DynamicClient
) -> None:
    custom = client.CustomObjectsApi(api_client)
    args = (gadgets.group, "v1", gadgets.namespace, "gadgets")
    custom.create_namespaced_custom_object(*args, gadgets.manifest("g", size=1, tags=["a"]))
    patched = custom.patch_namespaced_custom_object(*args, "g", {"spec": {"size": 2}})
    assert patched["spec"] == {"size": 2, "tags": ["a"]}
    resource = dynamic_client.resources.get(api_version=gadgets.api_version, kind="Gadget")
    with pytest.raises(ApiException) as refused:
        dynamic_client.patch(resource, {"spec": {"size": 3}}, name="g", namespace=gadgets.namespace)
    assert refused.value.status == 415
    applied = dynamic_client.server_side_apply(
        resource,
        gadgets.manifest("g", size=3),
        namespace=gadgets.namespace,
        field_manager="alice",
        force_conflicts=True,
    )
    assert applied.spec.size == 3


# -- kubernetes_asyncio ----------------------------------------------------------------------


@pytest.fixture
async def async_api(local_cluster: BackgroundCluster) -> AsyncIterator[aclient.ApiClient]:
    configuration = aclient.Configuration()
    await aconfig.load_kube_config(
        config_file=str(local_cluster.kubeconfig_path), client_configuration=configuration
    )
    async with aclient.ApiClient(configuration) as api:
        yield api


async def test_asyncio_default_patch_is_strategic(
    async_api: aclient.ApiClient, namespace: str
) -> None:
    core = aclient.CoreV1Api(async_api)
    await core.create_namespaced_pod(namespace, pod("p"))
    patched = await core.patch_namespaced_pod("p", namespace, IMAGE_PATCH)
    assert {c.name: c.image for c in patched.spec.containers} == {"app": "app:2", "side": "side:1"}


async def test_asyncio_server_side_apply_and_conflict(
    async_api: aclient.ApiClient, namespace: str
) -> None:
    dyn = await adynamic.DynamicClient(async_api)
    configmaps = await dyn.resources.get(api_version="v1", kind="ConfigMap")
    applied = await dyn.server_side_apply(
        configmaps, configmap("c", a="1"), namespace=namespace, field_manager="alice"
    )
    assert applied.data.a == "1"
    # The DynamicClient does not raise on error statuses: it returns the Status.
    conflict = await dyn.server_side_apply(
        configmaps, configmap("c", a="2"), namespace=namespace, field_manager="bob"
    )
    assert (conflict.kind, conflict.code, conflict.reason) == ("Status", 409, "Conflict")
    assert conflict.details.causes[0].field == ".data.a"
    # The typed API raises.
    core = aclient.CoreV1Api(async_api)
    with pytest.raises(AsyncApiException) as caught:
        await core.patch_namespaced_config_map(
            "c",
            namespace,
            configmap("c", a="3"),
            field_manager="bob",
            _content_type="application/apply-patch+yaml",
        )
    assert caught.value.status == 409


async def test_asyncio_custom_resources(gadgets: Gadgets, async_api: aclient.ApiClient) -> None:
    custom = aclient.CustomObjectsApi(async_api)
    args = (gadgets.group, "v1", gadgets.namespace, "gadgets")
    await custom.create_namespaced_custom_object(*args, gadgets.manifest("g", size=1))
    # Its CustomObjectsApi sends a dict as a JSON patch by default: 400, as kube-apiserver says.
    with pytest.raises(AsyncApiException) as wrong_type:
        await custom.patch_namespaced_custom_object(*args, "g", {"spec": {"size": 2}})
    assert wrong_type.value.status == 400
    patched = await custom.patch_namespaced_custom_object(
        *args, "g", [{"op": "replace", "path": "/spec/size", "value": 2}]
    )
    assert patched["spec"] == {"size": 2}
    dyn = await adynamic.DynamicClient(async_api)
    resource = await dyn.resources.get(api_version=gadgets.api_version, kind="Gadget")
    applied = await dyn.server_side_apply(
        resource,
        gadgets.manifest("g", size=2, color="red"),
        namespace=gadgets.namespace,
        field_manager="alice",
    )
    assert applied.spec.color == "red"


# -- lightkube -------------------------------------------------------------------------------


@pytest.fixture
async def lightkube_client(
    local_cluster: BackgroundCluster,
) -> AsyncIterator[lightkube.AsyncClient]:
    config = KubeConfig.from_file(str(local_cluster.kubeconfig_path))
    client_ = lightkube.AsyncClient(config=config)
    try:
        yield client_
    finally:
        await client_.close()


async def test_lightkube_patch_and_apply(
    lightkube_client: lightkube.AsyncClient, namespace: str
) -> None:
    containers = [Container(name=c["name"], image=c["image"]) for c in TWO_CONTAINERS]
    await lightkube_client.create(
        Pod(metadata=ObjectMeta(name="p"), spec=PodSpec(containers=containers)),
        namespace=namespace,
    )
    patched = await lightkube_client.patch(Pod, "p", IMAGE_PATCH, namespace=namespace)
    assert {c.name: c.image for c in patched.spec.containers} == {"app": "app:2", "side": "side:1"}
    applied = await lightkube_client.apply(
        ConfigMap(metadata=ObjectMeta(name="c", namespace=namespace), data={"a": "1"}),
        field_manager="alice",
    )
    assert applied.data == {"a": "1"}
    with pytest.raises(lightkube.ApiError) as caught:
        await lightkube_client.apply(
            ConfigMap(metadata=ObjectMeta(name="c", namespace=namespace), data={"a": "2"}),
            field_manager="bob",
        )
    assert caught.value.status.code == 409
    assert caught.value.status.reason == "Conflict"
    forced = await lightkube_client.apply(
        ConfigMap(metadata=ObjectMeta(name="c", namespace=namespace), data={"a": "2"}),
        field_manager="bob",
        force=True,
    )
    assert forced.data == {"a": "2"}


async def test_lightkube_custom_resources(
    gadgets: Gadgets, lightkube_client: lightkube.AsyncClient
) -> None:
    Gadget = create_namespaced_resource(gadgets.group, "v1", "Gadget", "gadgets")
    applied = await lightkube_client.apply(
        Gadget.from_dict(
            {**gadgets.manifest("g", size=1)}
            | {"metadata": {"name": "g", "namespace": gadgets.namespace}}
        ),
        field_manager="alice",
    )
    assert applied["spec"] == {"size": 1}
    with pytest.raises(lightkube.ApiError) as refused:
        await lightkube_client.patch(
            Gadget, "g", {"spec": {"size": 2}}, namespace=gadgets.namespace
        )
    assert refused.value.status.code == 415
    with pytest.raises(lightkube.ApiError) as conflict:
        await lightkube_client.apply(
            Gadget.from_dict(
                gadgets.manifest("g", size=5)
                | {"metadata": {"name": "g", "namespace": gadgets.namespace}}
            ),
            field_manager="bob",
        )
    assert conflict.value.status.code == 409


# -- kr8s ------------------------------------------------------------------------------------


async def test_kr8s_default_patch(
    local_cluster: BackgroundCluster, gadgets: Gadgets, namespace: str
) -> None:
    api = await kr8s.asyncio.api(kubeconfig=str(local_cluster.kubeconfig_path))
    cm = await kr8s.asyncio.objects.ConfigMap(
        {**configmap("c", a="1"), "metadata": {"name": "c", "namespace": namespace}}, api=api
    )
    await cm.create()
    await cm.patch({"data": {"b": "2"}})
    assert cm.raw["data"] == {"a": "1", "b": "2"}
    stale = {"metadata": {"resourceVersion": "1"}, "data": {"c": "3"}}
    with pytest.raises(ServerError) as caught:
        await cm.patch(stale)
    assert caught.value.response is not None
    assert caught.value.response.status_code == 409
    Gadget = kr8s.asyncio.objects.new_class(
        kind="Gadget", version=gadgets.api_version, namespaced=True
    )
    gadget = await Gadget(
        gadgets.manifest("g", size=1) | {"metadata": {"name": "g", "namespace": namespace}},
        api=api,
    )
    await gadget.create()
    await gadget.patch({"spec": {"size": 2}})
    assert gadget.raw["spec"] == {"size": 2}
