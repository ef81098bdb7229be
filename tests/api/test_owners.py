"""Owner and controller references, as controller-runtime's controllerutil behaves."""

from typing import Any

import pytest

from setpoint.api import (
    AlreadyOwnedError,
    CrossNamespaceOwnerError,
    controller_of,
    controller_reference,
    is_controlled_by,
    owner_reference,
    set_controller_reference,
    set_owner_reference,
    validate_owner_references,
)


def obj(
    kind: str, name: str, uid: str, namespace: str | None = "ns", api: str = "example.com/v1"
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "uid": uid}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": metadata}


OWNER = obj("Widget", "w", "uid-w")


def test_owner_reference_shape() -> None:
    assert owner_reference(OWNER) == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "name": "w",
        "uid": "uid-w",
    }
    assert controller_reference(OWNER) == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "name": "w",
        "uid": "uid-w",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def test_owner_without_uid_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"metadata\.uid"):
        owner_reference({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})


def test_set_controller_reference() -> None:
    child = obj("ConfigMap", "c", "uid-c", api="v1")
    assert set_controller_reference(OWNER, child) is True
    assert set_controller_reference(OWNER, child) is False
    assert child["metadata"]["ownerReferences"] == [controller_reference(OWNER)]
    assert controller_of(child) == controller_reference(OWNER)
    assert is_controlled_by(child, OWNER)
    assert not is_controlled_by(child, obj("Widget", "w2", "uid-2"))


def test_another_controller_is_refused() -> None:
    child = obj("ConfigMap", "c", "uid-c", api="v1")
    set_controller_reference(OWNER, child)
    other = obj("Gadget", "g", "uid-g")
    with pytest.raises(AlreadyOwnedError) as error:
        set_controller_reference(other, child)
    assert str(error.value) == "Object ns/c is already owned by another Widget controller w"
    assert error.value.existing["uid"] == "uid-w"
    assert child["metadata"]["ownerReferences"] == [controller_reference(OWNER)]


def test_namespace_rules() -> None:
    cluster_scoped = obj("ClusterThing", "t", "uid-t", namespace=None)
    with pytest.raises(
        CrossNamespaceOwnerError,
        match="cluster-scoped resource must not have a namespace-scoped owner",
    ):
        set_controller_reference(OWNER, cluster_scoped)
    elsewhere = obj("ConfigMap", "c", "uid-c", namespace="other")
    with pytest.raises(CrossNamespaceOwnerError) as error:
        set_owner_reference(OWNER, elsewhere)
    assert str(error.value) == (
        "cross-namespace owner references are disallowed, "
        "owner's namespace ns, obj's namespace other"
    )
    # A cluster-scoped owner may own namespaced objects.
    assert set_controller_reference(cluster_scoped, obj("ConfigMap", "c", "uid-c")) is True


def test_set_owner_reference_upserts_and_keeps_flags() -> None:
    child = obj("ConfigMap", "c", "uid-c", api="v1")
    set_controller_reference(OWNER, child)
    second = obj("Gadget", "g", "uid-g")
    assert set_owner_reference(second, child) is True
    assert set_owner_reference(second, child) is False
    assert set_owner_reference(OWNER, child) is False  # keeps controller=True
    refs = child["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == ["uid-w", "uid-g"]
    assert refs[0]["controller"] is True


def test_recreated_owner_replaces_stale_reference() -> None:
    child = obj("ConfigMap", "c", "uid-c", api="v1")
    set_controller_reference(OWNER, child)
    recreated = obj("Widget", "w", "uid-new")
    assert set_controller_reference(recreated, child) is True
    assert [r["uid"] for r in child["metadata"]["ownerReferences"]] == ["uid-new"]


def test_validate_owner_references() -> None:
    good = controller_reference(OWNER)
    assert validate_owner_references([good]) == []
    assert validate_owner_references(
        [{"apiVersion": "v1", "kind": "", "name": "n", "uid": ""}]
    ) == [
        'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
    ]
    assert validate_owner_references(
        [{"apiVersion": "apps/", "kind": "K", "name": "n", "uid": "u"}]
    ) == ['metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty']
    second = {**controller_reference(obj("Gadget", "g", "uid-g"))}
    (problem,) = validate_owner_references([good, second])
    assert problem.startswith("metadata.ownerReferences: Invalid value: ")
    assert problem.endswith(
        'Only one reference can have Controller set to true. Found "true" in references for '
        "Widget/w and Gadget/g"
    )
