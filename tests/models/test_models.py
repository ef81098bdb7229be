"""The built-in models: names, serialization, unknown fields, and their kind constants."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from setpoint import kinds, models
from setpoint.client.typed_objects import as_dict, static_type_fields
from setpoint.manager.kind_ref import kind_of, model_of
from setpoint.manager.typed_mutate import model_mutate


def test_a_new_object_serializes_only_what_was_set() -> None:
    deployment = models.Deployment(
        metadata=models.ObjectMeta(name="web"),
        spec=models.DeploymentSpec(replicas=2),
    )
    expected = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 2},
    }
    assert deployment.model_dump(mode="json", by_alias=True) == expected
    assert as_dict(deployment) == expected
    # Defaults need no None checks, and editing them in place counts as setting them.
    deployment.spec.template.spec.containers.append(models.Container(name="c", image="nginx"))
    deployment.spec.template.metadata.labels = {"app": "web"}
    assert as_dict(deployment)["spec"] == {
        "replicas": 2,
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    }


def test_metadata_takes_a_dict_or_either_object_meta() -> None:
    from setpoint.api.resources import ObjectMeta as CustomResourceMeta

    for metadata in (
        {"name": "x", "labels": {"a": "b"}},
        models.ObjectMeta(name="x", labels={"a": "b"}),
        CustomResourceMeta(name="x", labels={"a": "b"}),
    ):
        config_map = models.ConfigMap(metadata=metadata)  # type: ignore[arg-type]
        assert isinstance(config_map.metadata, models.ObjectMeta)
        assert as_dict(config_map)["metadata"] == {"name": "x", "labels": {"a": "b"}}


def test_json_names_and_python_names() -> None:
    pod = models.Pod.model_validate(
        {
            "metadata": {"name": "p", "ownerReferences": [{"kind": "ReplicaSet", "name": "r"}]},
            "spec": {"containers": [{"name": "c", "imagePullPolicy": "Always"}]},
            "status": {"podIP": "10.0.0.1", "hostIPs": [{"ip": "10.1.0.1"}], "qosClass": "X"},
        }
    )
    assert pod.api_version == "v1" and pod.kind == "Pod"
    assert pod.status.pod_ip == "10.0.0.1"
    assert pod.status.host_ips[0].ip == "10.1.0.1"
    assert pod.status.qos_class == "X"
    assert pod.spec.containers[0].image_pull_policy == "Always"
    assert pod.metadata.owner_references == [{"kind": "ReplicaSet", "name": "r"}]
    probe = models.Probe.model_validate({"exec": {"command": ["true"]}, "periodSeconds": 5})
    assert probe.exec_ is not None and probe.exec_.command == ["true"]
    assert probe.model_dump(by_alias=True) == {"exec": {"command": ["true"]}, "periodSeconds": 5}
    service = models.ServiceSpec(cluster_ip="None", external_ips=["1.2.3.4"])
    assert service.model_dump(by_alias=True) == {"clusterIP": "None", "externalIPs": ["1.2.3.4"]}


def test_unknown_fields_and_nulls_are_kept() -> None:
    sent: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "managedFields": [{"manager": "kubectl"}]},
        "spec": {
            "newField": {"a": 1},
            "template": {
                "metadata": {"creationTimestamp": None},
                "spec": {"containers": [{"name": "c", "resizePolicy": [{"x": "y"}]}]},
            },
        },
    }
    decoded = models.Deployment.model_validate(sent)
    assert decoded.model_dump(mode="json", by_alias=True) == sent
    sent_by_the_runtime = as_dict(decoded)
    assert sent_by_the_runtime["spec"]["template"]["metadata"] == {}  # no null is sent
    assert sent_by_the_runtime["spec"]["newField"] == {"a": 1}


def test_the_type_is_checked_and_filled_in() -> None:
    with pytest.raises(ValidationError, match="expected 'Deployment'"):
        models.Deployment.model_validate({"apiVersion": "apps/v1", "kind": "ReplicaSet"})
    with pytest.raises(ValidationError, match="name"):
        models.Container.model_validate({"image": "nginx"})
    assert models.ConfigMap().model_dump(by_alias=True) == {"apiVersion": "v1", "kind": "ConfigMap"}


def test_every_kind_constant_has_its_model() -> None:
    for name in kinds.__all__:
        kind = getattr(kinds, name)
        if not isinstance(kind, kinds.Kind):
            continue
        model = kind.model
        assert model is getattr(models, name)
        assert static_type_fields(model) == tuple(kind)
        assert kind_of(model, "for_") == tuple(kind)
        assert model_of(model) is model
    assert kinds.Deployment.model is models.Deployment
    with pytest.raises(LookupError, match=r"no built-in model for Widget\.example\.com/v1"):
        kinds.Kind("example.com/v1", "Widget").model  # noqa: B018


def test_kind_constants_do_not_import_pydantic() -> None:
    code = (
        "import sys, setpoint.kinds\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
        "assert 'setpoint.api.models' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_a_typed_mutate_edits_in_place_or_replaces() -> None:
    current = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"a": "1", "b": "2"}},
        "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate"}, "extra": True},
    }
    spec_before = current["spec"]
    labels_before = current["metadata"]["labels"]

    def replace_spec(deployment: models.Deployment) -> None:
        deployment.spec = models.DeploymentSpec(replicas=3)
        del deployment.metadata.labels["b"]  # type: ignore[union-attr]

    await model_mutate(models.Deployment, replace_spec)(current)
    # The replaced spec is a new mapping (what the server defaulted in it is no difference);
    # the edited labels are the same mapping, with the deleted key gone.
    assert current["spec"] == {"replicas": 3}
    assert current["spec"] is not spec_before
    assert current["metadata"]["labels"] == {"a": "1"}
    assert current["metadata"]["labels"] is labels_before

    def edit_spec(deployment: models.Deployment) -> None:
        deployment.spec.replicas = 4

    await model_mutate(models.Deployment, edit_spec)(current)
    assert current["spec"] == {"replicas": 4}


def test_owner_references_and_metadata_helpers_take_models() -> None:
    from setpoint.api import meta
    from setpoint.api.owners import is_controlled_by, set_controller_reference

    owner = models.ConfigMap(metadata=models.ObjectMeta(name="o", namespace="n", uid="u-1"))
    child = models.Deployment(metadata=models.ObjectMeta(name="c", namespace="n"))
    set_controller_reference(owner, child)
    assert isinstance(child.metadata, models.ObjectMeta)
    assert child.metadata.owner_references is not None
    assert child.metadata.owner_references[0]["uid"] == "u-1"
    assert is_controlled_by(child, owner)
    assert meta.owner_references(child)[0]["name"] == "o"  # type: ignore[arg-type]
    assert as_dict(child)["metadata"]["ownerReferences"][0]["kind"] == "ConfigMap"


async def test_a_typed_mutate_keeps_what_was_built_into_a_new_part() -> None:
    current: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {}}

    def build(deployment: models.Deployment) -> None:
        spec = models.DeploymentSpec(replicas=1)
        spec.template.spec.containers.append(models.Container(name="web", image="nginx"))
        deployment.spec = spec

    await model_mutate(models.Deployment, build)(current)
    assert current["spec"] == {
        "replicas": 1,
        "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}},
    }
