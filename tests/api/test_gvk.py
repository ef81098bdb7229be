"""GroupVersion/Kind/Resource, ResourceInfo paths and ObjectKey."""

import copy
import dataclasses
import pickle

import pytest

from setpoint.api import (
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    ObjectKey,
    ResourceInfo,
    parse_api_version,
)

CONFIGMAPS = ResourceInfo(
    group="",
    version="v1",
    kind="ConfigMap",
    resource="configmaps",
    namespaced=True,
    list_kind="ConfigMapList",
    singular="configmap",
    short_names=("cm",),
)
DEPLOYMENTS = ResourceInfo(
    group="apps",
    version="v1",
    kind="Deployment",
    resource="deployments",
    namespaced=True,
    list_kind="DeploymentList",
    subresources=("status", "scale"),
)
NAMESPACES = ResourceInfo(
    group="",
    version="v1",
    kind="Namespace",
    resource="namespaces",
    namespaced=False,
    list_kind="NamespaceList",
)


@pytest.mark.parametrize(
    ("text", "group", "version"),
    [
        ("v1", "", "v1"),
        ("apps/v1", "apps", "v1"),
        ("example.com/v1alpha1", "example.com", "v1alpha1"),
    ],
)
def test_parse_api_version(text: str, group: str, version: str) -> None:
    gv = parse_api_version(text)
    assert (gv.group, gv.version) == (group, version)
    assert gv.api_version == text
    assert GroupVersion.parse(text) == gv


@pytest.mark.parametrize("text", ["", "a/b/c", "/v1", "apps/"])
def test_parse_api_version_rejects_malformed_input_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match=r"apiVersion|GroupVersion") as error:
        parse_api_version(text)
    assert repr(text) in str(error.value) or '""' in str(error.value)


def test_gvk_from_object_and_api_version() -> None:
    gvk = GroupVersionKind.from_object({"apiVersion": "apps/v1", "kind": "Deployment"})
    assert gvk == GroupVersionKind("apps", "v1", "Deployment")
    assert gvk.api_version == "apps/v1"
    assert gvk.group_version == GroupVersion("apps", "v1")
    assert GroupVersionKind.from_api_version("v1", "Pod").api_version == "v1"


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ({"kind": "Pod"}, "apiVersion"),
        ({"apiVersion": "v1"}, "kind"),
        ({"apiVersion": "v1", "kind": ""}, "kind"),
    ],
)
def test_gvk_from_object_names_missing_field(obj: dict[str, str], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        GroupVersionKind.from_object(obj)


def test_gvr_api_version() -> None:
    assert GroupVersionResource("", "v1", "pods").api_version == "v1"
    assert GroupVersionResource("apps", "v1", "deployments").api_version == "apps/v1"


def test_types_are_frozen_and_hashable() -> None:
    gvk = GroupVersionKind("apps", "v1", "Deployment")
    with pytest.raises(dataclasses.FrozenInstanceError):
        gvk.kind = "x"  # type: ignore[misc]
    assert {gvk, GroupVersionKind("apps", "v1", "Deployment")} == {gvk}
    assert hash(CONFIGMAPS) == hash(dataclasses.replace(CONFIGMAPS))


def test_resource_info_names() -> None:
    assert DEPLOYMENTS.gvk == GroupVersionKind("apps", "v1", "Deployment")
    assert DEPLOYMENTS.gvr == GroupVersionResource("apps", "v1", "deployments")
    assert CONFIGMAPS.api_version == "v1"


@pytest.mark.parametrize(
    ("info", "args", "path"),
    [
        (CONFIGMAPS, ("ns", "x", "status"), "/api/v1/namespaces/ns/configmaps/x/status"),
        (CONFIGMAPS, ("ns", "x", None), "/api/v1/namespaces/ns/configmaps/x"),
        (CONFIGMAPS, ("ns", None, None), "/api/v1/namespaces/ns/configmaps"),
        (CONFIGMAPS, (None, None, None), "/api/v1/configmaps"),
        (DEPLOYMENTS, (None, None, None), "/apis/apps/v1/deployments"),
        (
            DEPLOYMENTS,
            ("prod", "web", "scale"),
            "/apis/apps/v1/namespaces/prod/deployments/web/scale",
        ),
        (NAMESPACES, ("ignored", "kube-system", None), "/api/v1/namespaces/kube-system"),
        (NAMESPACES, (None, "default", "finalize"), "/api/v1/namespaces/default/finalize"),
    ],
)
def test_resource_info_path(
    info: ResourceInfo, args: tuple[str | None, str | None, str | None], path: str
) -> None:
    assert info.path(*args) == path


def test_resource_info_subresource_needs_a_name() -> None:
    with pytest.raises(ValueError, match="status"):
        DEPLOYMENTS.path("ns", None, "status")


def test_object_key_str_and_parse() -> None:
    assert str(ObjectKey("ns", "a")) == "ns/a"
    assert str(ObjectKey(None, "node-1")) == "node-1"
    assert ObjectKey.parse("ns/a") == ObjectKey("ns", "a")
    assert ObjectKey.parse("node-1") == ObjectKey(None, "node-1")
    assert ObjectKey("", "x") == ObjectKey(None, "x")
    assert ObjectKey.parse(str(ObjectKey("kube-system", "coredns"))) == ObjectKey(
        "kube-system", "coredns"
    )


def test_object_keys_are_immutable_values() -> None:
    key = ObjectKey(namespace="ns", name="a")
    assert (key.namespace, key.name) == ("ns", "a")
    assert ObjectKey("", "x").namespace is None
    assert {key: 1}[ObjectKey("ns", "a")] == 1
    assert hash(ObjectKey("", "x")) == hash(ObjectKey(None, "x"))
    assert ObjectKey("ns", "a") != ObjectKey("ns", "b")
    assert ObjectKey("ns", "a") != ObjectKey(None, "a")
    with pytest.raises(AttributeError):
        key.name = "b"  # type: ignore[misc]
    assert repr(key) == "ObjectKey(namespace='ns', name='a')"
    for copied in (copy.copy(key), copy.deepcopy(key), pickle.loads(pickle.dumps(key))):
        assert type(copied) is ObjectKey and copied == key
    match key:
        case ObjectKey(namespace=namespace, name=name):
            assert (namespace, name) == ("ns", "a")


@pytest.mark.parametrize("text", ["", "a/b/c", "ns/", "/"])
def test_object_key_parse_rejects_other_shapes(text: str) -> None:
    with pytest.raises(ValueError, match="object key"):
        ObjectKey.parse(text)


def test_object_key_from_object() -> None:
    assert ObjectKey.from_object({"metadata": {"namespace": "ns", "name": "a"}}) == ObjectKey(
        "ns", "a"
    )
    assert ObjectKey.from_object({"metadata": {"name": "n"}}) == ObjectKey(None, "n")
    with pytest.raises(ValueError, match=r"metadata\.name"):
        ObjectKey.from_object({"metadata": {"namespace": "ns"}})
    with pytest.raises(ValueError, match="metadata"):
        ObjectKey.from_object({})


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("ns", "a/b"), "name"),
        (("a/b", "x"), "namespace"),
        (("ns", ".."), "name"),
        (("ns", "a%2F"), "name"),
    ],
)
def test_resource_info_path_refuses_segments_that_change_the_url(
    args: tuple[str, str], field: str
) -> None:
    with pytest.raises(ValueError, match=f"invalid {field}"):
        CONFIGMAPS.path(*args)
    with pytest.raises(ValueError, match="invalid subresource"):
        CONFIGMAPS.path("ns", "x", "a/b")
