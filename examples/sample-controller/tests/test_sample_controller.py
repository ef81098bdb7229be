"""sample-controller's acceptance scenarios, against the local cluster and its Deployment
controller (the Deployment's available replicas are real, not patched by the test)."""

from __future__ import annotations

from typing import Any

import pytest
from sample_controller_operator.api.v1alpha1.foo import Foo, FooSpec
from sample_controller_operator.operator import op

from setpoint.client import Client, Invalid, NotFound
from setpoint.testing import install_crds, run_operator, wait_for, wait_for_event


@pytest.fixture
async def operator(client: Client, kubeconfig: str, namespace: str) -> Any:
    await install_crds(client, Foo)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace) as running:
        yield running


def foo(namespace: str, name: str = "example-foo", **spec: Any) -> Foo:
    return Foo(metadata={"name": name, "namespace": namespace}, spec=FooSpec(**spec))


async def deployment(client: Client, namespace: str, name: str) -> dict[str, Any]:
    return await client.get("apps/v1", "Deployment", name, namespace=namespace)


async def test_a_foo_gets_its_deployment_and_tracks_its_available_replicas(
    client: Client, namespace: str, operator: Any
) -> None:
    created = await client.create(foo(namespace, deployment_name="web", replicas=2))
    made = await wait_for(lambda: deployment(client, namespace, "web"), what="the Deployment")
    labels = {"app": "nginx", "controller": "example-foo"}
    assert made["spec"]["selector"]["matchLabels"] == labels
    assert made["spec"]["template"]["metadata"]["labels"] == labels
    (container,) = made["spec"]["template"]["spec"]["containers"]
    assert (container["name"], container["image"]) == ("nginx", "nginx:latest")
    (owner,) = made["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Foo", "example-foo", True)
    synced = await wait_for(
        lambda: client.get(Foo, "example-foo", namespace=namespace),
        lambda obj: obj.status is not None and obj.status.available_replicas == 2,
        timeout=30,
        what="availableReplicas 2 from the Deployment controller",
    )
    assert synced.metadata.generation == created.metadata.generation
    event = await wait_for_event(client, synced, reason="Synced", type="Normal")
    assert event["note"] == "Foo synced successfully"


async def test_replicas_follow_the_foo_and_the_deployment_is_kept(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create(foo(namespace, deployment_name="web", replicas=1))
    await wait_for(lambda: deployment(client, namespace, "web"), what="the Deployment")
    await client.patch(Foo, "example-foo", {"spec": {"replicas": 3}}, namespace=namespace)
    await wait_for(
        lambda: deployment(client, namespace, "web"),
        lambda d: d["spec"]["replicas"] == 3,
        what="the Deployment scaled to 3",
    )
    # A manual scale is reverted.
    await client.patch(
        "apps/v1", "Deployment", "web", {"spec": {"replicas": 7}}, namespace=namespace
    )
    await wait_for(
        lambda: deployment(client, namespace, "web"),
        lambda d: d["spec"]["replicas"] == 3,
        what="the manual scale reverted",
    )
    # A deleted Deployment is recreated.
    first = await deployment(client, namespace, "web")
    await client.delete("apps/v1", "Deployment", "web", namespace=namespace)
    await wait_for(
        lambda: deployment(client, namespace, "web"),
        lambda d: d["metadata"]["uid"] != first["metadata"]["uid"],
        what="the Deployment recreated",
    )


async def test_a_deployment_the_foo_does_not_control_is_left_alone(
    client: Client, namespace: str, operator: Any
) -> None:
    labels = {"app": "other"}
    theirs = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "taken", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    before = await client.create(theirs)
    created = await client.create(foo(namespace, deployment_name="taken", replicas=2))
    event = await wait_for_event(client, created, reason="ErrResourceExists", type="Warning")
    assert event["note"] == 'Resource "taken" already exists and is not managed by Foo'
    after = await deployment(client, namespace, "taken")
    assert after["spec"]["replicas"] == 1
    assert "ownerReferences" not in after["metadata"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"]


async def test_without_a_deployment_name_nothing_happens_and_a_rename_keeps_the_old_one(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create(foo(namespace, name="nameless"))
    await client.create(foo(namespace, deployment_name="first"))
    await wait_for(lambda: deployment(client, namespace, "first"), what="the first Deployment")
    await client.patch(
        Foo, "example-foo", {"spec": {"deploymentName": "second"}}, namespace=namespace
    )
    await wait_for(lambda: deployment(client, namespace, "second"), what="the second Deployment")
    # sample-controller #75: the old Deployment stays (still owned, so it goes with the Foo).
    assert await deployment(client, namespace, "first")
    names = [
        d["metadata"]["name"]
        for d in await client.list("apps/v1", "Deployment", namespace=namespace)
    ]
    assert sorted(names) == ["first", "second"]


async def test_deleting_the_foo_collects_its_deployment(
    client: Client, namespace: str, operator: Any
) -> None:
    await client.create(foo(namespace, deployment_name="web"))
    await wait_for(lambda: deployment(client, namespace, "web"), what="the Deployment")
    await client.delete(Foo, "example-foo", namespace=namespace)

    async def gone() -> bool:
        try:
            await deployment(client, namespace, "web")
        except NotFound:
            return True
        return False

    await wait_for(gone, timeout=30, what="the Deployment garbage-collected")


@pytest.mark.parametrize("replicas", [0, 11])
async def test_replicas_out_of_bounds_are_refused_by_the_server(
    client: Client, namespace: str, replicas: int
) -> None:
    await install_crds(client, Foo)
    body = {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": "bad", "namespace": namespace},
        "spec": {"deploymentName": "web", "replicas": replicas},
    }
    with pytest.raises(Invalid, match=r"spec\.replicas"):
        await client.create(body)
