"""Real objects from the local cluster, after its controllers and kubelet filled them in, decode
into the built-in models and encode back to the same JSON."""

from __future__ import annotations

from typing import Any

import pytest

from setpoint import kinds, models
from setpoint.client import Client, Conflict, NotFound
from setpoint.client.typed_objects import as_dict
from setpoint.testing import wait_for

pytestmark = pytest.mark.slow

LABELS = {"app": "web"}


def pod_template(image: str = "nginx:1.27") -> dict[str, Any]:
    return {
        "metadata": {"labels": LABELS},
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": image,
                    "ports": [{"containerPort": 80, "name": "http"}],
                    "env": [
                        {"name": "MODE", "value": "prod"},
                        {
                            "name": "POD",
                            "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                        },
                    ],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                    "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                    "volumeMounts": [{"name": "conf", "mountPath": "/etc/web"}],
                }
            ],
            "volumes": [{"name": "conf", "configMap": {"name": "web"}}],
            # Not typed by the models: kept as sent.
            "dnsConfig": {"options": [{"name": "ndots", "value": "2"}]},
        },
    }


def without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def assert_round_trip(obj: dict[str, Any], model: type[models.KubeObject]) -> None:
    decoded = model.model_validate(obj)
    assert decoded.model_dump(mode="json", by_alias=True) == obj
    # What the runtime sends: the same, without nulls.
    assert as_dict(decoded) == without_nulls(obj)


async def test_workloads_and_their_pods_round_trip(client: Client, namespace: str) -> None:
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": namespace},
            "data": {"index.html": "hello"},
        }
    )
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "web", "namespace": namespace},
            "stringData": {"password": "s3cret"},
        }
    )
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"selector": LABELS, "ports": [{"port": 80, "targetPort": "http"}]},
        }
    )
    await client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace, "labels": LABELS},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": LABELS},
                "template": pod_template(),
            },
        }
    )
    await client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": namespace},
            "spec": {
                "replicas": 1,
                "serviceName": "web",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "db", "image": "postgres:16"}]},
                },
            },
        }
    )
    await client.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "once", "namespace": namespace},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "once", "image": "busybox", "command": ["true"]}],
                    }
                }
            },
        }
    )

    async def deployment_available() -> bool:
        deployment = await client.get(models.Deployment, "web", namespace=namespace)
        return deployment.status.available_replicas == 2

    await wait_for(deployment_available, timeout=60)

    async def running_pods() -> list[models.Pod]:
        pods = await client.list(models.Pod, namespace=namespace)
        return [p for p in pods if p.status.phase == "Running" and p.status.container_statuses]

    await wait_for(running_pods, timeout=60)

    checked: dict[str, int] = {}
    for kind in (
        kinds.Deployment,
        kinds.ReplicaSet,
        kinds.Pod,
        kinds.StatefulSet,
        kinds.Job,
        kinds.Service,
        kinds.ConfigMap,
        kinds.Secret,
        kinds.ServiceAccount,
        kinds.Event,
    ):
        objects = await client.list(*kind, namespace=namespace)
        for obj in objects:
            assert_round_trip(obj, kind.model)
        checked[kind.kind] = len(objects)
    namespace_obj = await client.get(*kinds.Namespace, namespace)
    assert_round_trip(namespace_obj, models.Namespace)
    for kind in ("Deployment", "ReplicaSet", "Pod", "StatefulSet", "Job", "Service", "Event"):
        assert checked[kind] >= 1, checked

    deployment = await client.get(models.Deployment, "web", namespace=namespace)
    assert deployment.status.ready_replicas == 2
    assert any(c.type == "Available" and c.status == "True" for c in deployment.status.conditions)
    container = deployment.spec.template.spec.containers[0]
    assert container.env[1].value_from is not None
    assert container.env[1].value_from.field_ref is not None
    assert container.env[1].value_from.field_ref.field_path == "metadata.name"
    assert container.readiness_probe is not None
    assert container.readiness_probe.http_get is not None
    assert container.readiness_probe.http_get.port == "http"
    assert container.resources.requests == {"cpu": "100m", "memory": "64Mi"}
    assert deployment.spec.template.spec.volumes[0].config_map is not None
    pod = (await running_pods())[0]
    assert pod.status.pod_ip
    assert pod.spec.node_name
    assert pod.metadata.owner_references
    service = await client.get(models.Service, "web", namespace=namespace)
    assert service.spec.cluster_ip
    assert service.spec.ports[0].target_port == "http"


async def test_read_modify_write_keeps_fields_the_models_do_not_type(
    client: Client, namespace: str
) -> None:
    created = await client.create(
        models.Deployment(
            metadata=models.ObjectMeta(name="web", namespace=namespace),
            spec=models.DeploymentSpec(
                replicas=1,
                selector=models.LabelSelector(match_labels=LABELS),
                template=models.PodTemplateSpec.model_validate(pod_template()),
            ),
        )
    )
    assert isinstance(created, models.Deployment)
    assert created.metadata.uid
    assert created.spec.strategy is not None  # defaulted by the server
    for _ in range(20):  # the deployment controller writes status meanwhile
        current = await client.get(models.Deployment, "web", namespace=namespace)
        current.spec.replicas = 3
        try:
            updated = await client.update(current)
        except Conflict:
            continue
        break
    assert isinstance(updated, models.Deployment)
    assert updated.spec.replicas == 3
    raw = await client.get(*kinds.Deployment, "web", namespace=namespace)
    assert raw["spec"]["template"]["spec"]["dnsConfig"] == {
        "options": [{"name": "ndots", "value": "2"}]
    }
    assert raw["spec"]["progressDeadlineSeconds"] == 600


async def test_client_writes_take_and_return_models(client: Client, namespace: str) -> None:
    applied = await client.apply(
        models.ConfigMap(
            metadata=models.ObjectMeta(name="settings", namespace=namespace),
            data={"mode": "a"},
        ),
        field_manager="typed-test",
    )
    assert isinstance(applied, models.ConfigMap)
    assert applied.data == {"mode": "a"}
    patched = await client.patch(applied, {"data": {"extra": "b"}})
    assert isinstance(patched, models.ConfigMap)
    assert patched.data == {"mode": "a", "extra": "b"}
    listed = await client.list(models.ConfigMap, namespace=namespace)
    assert "settings" in {item.metadata.name for item in listed}
    assert all(isinstance(item, models.ConfigMap) for item in listed)
    await client.delete(patched)
    with pytest.raises(NotFound):
        await client.get(models.ConfigMap, "settings", namespace=namespace)
