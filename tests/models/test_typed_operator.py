"""An operator written with the built-in models: a labelled ConfigMap asks for a web
Deployment (``create_or_patch`` with a typed ``mutate``) and a Service (``apply_owned``); reads
of owned Deployments are models, events and owner references take models."""

from __future__ import annotations

import pytest

from setpoint import Context, Operator, Request, models
from setpoint.api.owners import is_controlled_by
from setpoint.client import Client
from setpoint.controller.create_or_update import OperationResult
from setpoint.testing import run_operator, wait_for, wait_for_event

pytestmark = pytest.mark.slow

WEB_LABEL = "example.com/web"


def make_operator(outcomes: list[str], seen: list[object]) -> Operator:
    op = Operator("typed-builtins")

    @op.reconciler(for_=models.ConfigMap, owns=[models.Deployment, models.Service])
    async def reconcile(ctx: Context, request: Request) -> None:
        source = await ctx.get()
        if source is None or (source.metadata.labels or {}).get(WEB_LABEL) != "true":
            return
        seen.append(source)
        replicas = int(source.data.get("replicas", "1"))
        labels = {"app": request.name}

        def mutate(deployment: models.Deployment) -> None:
            seen.append(deployment)
            # A whole spec, which the server then defaults inside: not a difference.
            deployment.spec = models.DeploymentSpec(
                replicas=replicas,
                selector=models.LabelSelector(match_labels=labels),
                template=models.PodTemplateSpec(
                    metadata=models.ObjectMeta(labels=labels),
                    spec=models.PodSpec(
                        containers=[
                            models.Container(
                                name="web",
                                image="nginx:1.27",
                                ports=[models.ContainerPort(container_port=8080, name="http")],
                            )
                        ]
                    ),
                ),
            )

        skeleton = models.Deployment(metadata=models.ObjectMeta(name=f"{request.name}-web"))
        outcome, deployment = await ctx.create_or_patch(skeleton, mutate)
        outcomes.append(outcome)
        assert isinstance(deployment, models.Deployment)
        assert is_controlled_by(deployment, source)

        service = await ctx.apply_owned(
            models.Service(
                metadata=models.ObjectMeta(name=f"{request.name}-web"),
                spec=models.ServiceSpec(
                    selector=labels, ports=[models.ServicePort(port=80, target_port="http")]
                ),
            )
        )
        assert isinstance(service, models.Service)

        owned = await ctx.owned(models.Deployment)
        assert all(isinstance(d, models.Deployment) for d in owned)
        if owned and owned[0].status.available_replicas == replicas:
            ctx.recorder.normal(source, "Available", f"{replicas} replicas available")
            ctx.recorder.normal(owned[0], "Observed", f"serves {request.name}")

    return op


async def test_an_operator_with_typed_deployment_children(
    client: Client, kubeconfig: str, namespace: str
) -> None:
    outcomes: list[str] = []
    seen: list[object] = []
    op = make_operator(outcomes, seen)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        source = await client.create(
            models.ConfigMap(
                metadata=models.ObjectMeta(
                    name="shop", namespace=namespace, labels={WEB_LABEL: "true"}
                ),
                data={"replicas": "2"},
            )
        )
        assert isinstance(source, models.ConfigMap)
        await wait_for_event(client, source, reason="Available", timeout=60)
        deployment = await client.get(models.Deployment, "shop-web", namespace=namespace)
        await wait_for_event(client, deployment, reason="Observed", timeout=30)
        assert deployment.spec.replicas == 2
        assert deployment.spec.strategy is not None  # the server's default, left alone
        owner = (deployment.metadata.owner_references or [{}])[0]
        assert (owner.get("kind"), owner.get("name"), owner.get("controller")) == (
            "ConfigMap",
            "shop",
            True,
        )
        service = await client.get(models.Service, "shop-web", namespace=namespace)
        assert service.spec.ports[0].target_port == "http"
        assert isinstance(seen[0], models.ConfigMap)
        assert any(isinstance(obj, models.Deployment) for obj in seen)
        # The Deployment's status changes re-ran the reconcile; none of them wrote it.
        assert outcomes.count(OperationResult.CREATED) == 1
        assert OperationResult.UPDATED not in outcomes
        version = deployment.metadata.resource_version

        source.data["replicas"] = "3"
        await client.update(source)

        async def scaled() -> models.Deployment | None:
            found = await client.get(models.Deployment, "shop-web", namespace=namespace)
            return found if found.spec.replicas == 3 else None

        scaled_deployment = await wait_for(scaled, timeout=30)
        assert scaled_deployment.metadata.resource_version != version
        assert OperationResult.UPDATED in outcomes
