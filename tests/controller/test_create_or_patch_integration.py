"""create_or_patch against the local cluster: spec and status patched separately."""

from __future__ import annotations

from typing import Any

from setpoint.client import Client
from setpoint.controller.create_or_update import OperationResult, create_or_patch


def deployment(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
    }


def desired_spec(obj: dict[str, Any], replicas: int = 1) -> None:
    # Set only the fields this controller owns, in place: the API server defaults the rest
    # (strategy, restartPolicy, imagePullPolicy, ...), and replacing whole sub-objects would
    # undo those defaults on every reconcile and never be a no-op.
    labels = {"app": "web"}
    spec = obj.setdefault("spec", {})
    spec["replicas"] = replicas
    spec["selector"] = {"matchLabels": labels}
    template = spec.setdefault("template", {})
    template.setdefault("metadata", {})["labels"] = labels
    containers = template.setdefault("spec", {}).setdefault("containers", [{}])
    containers[0].update(name="web", image="nginx:1.27")


async def test_create_or_patch_reports_what_it_wrote(client: Client, namespace: str) -> None:
    obj = deployment(namespace)
    result, created = await create_or_patch(client, obj, desired_spec)
    assert result is OperationResult.CREATED
    rv = created["metadata"]["resourceVersion"]

    result, _ = await create_or_patch(client, obj, lambda o: desired_spec(o))
    assert result is OperationResult.UNCHANGED
    assert obj["metadata"]["resourceVersion"] == rv

    result, patched = await create_or_patch(client, obj, lambda o: desired_spec(o, 3))
    assert result is OperationResult.UPDATED
    assert patched["spec"]["replicas"] == 3

    def set_status(o: dict[str, Any]) -> None:
        o.setdefault("status", {})["observedGeneration"] = 99

    result, with_status = await create_or_patch(client, obj, set_status)
    assert result is OperationResult.UPDATED_STATUS_ONLY
    assert with_status["status"]["observedGeneration"] == 99

    def both(o: dict[str, Any]) -> None:
        desired_spec(o, 2)
        o["status"]["observedGeneration"] = 100

    result, final = await create_or_patch(client, obj, both, optimistic=True)
    assert result is OperationResult.UPDATED_STATUS
    fetched = await client.get("apps/v1", "Deployment", "web", namespace=namespace)
    assert fetched["spec"]["replicas"] == 2
    assert fetched["status"]["observedGeneration"] == 100
    assert final["metadata"]["resourceVersion"] == fetched["metadata"]["resourceVersion"]
