"""create_or_patch against the local cluster: spec and status patched separately."""

from __future__ import annotations

from typing import Any

from setpoint.client import Client
from setpoint.controller.create_or_update import OperationResult, create_or_patch


def claim(namespace: str) -> dict[str, Any]:
    # A PersistentVolumeClaim: spec and a status subresource. With no class (``""``: not the
    # default one) and no volume to bind, no controller of the local cluster writes it behind
    # the test's back.
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": namespace},
        "spec": {"storageClassName": ""},
    }


def desired_spec(obj: dict[str, Any], size: int = 1) -> None:
    # Set only the fields this controller owns, in place: the API server defaults the rest,
    # and replacing whole sub-objects would undo those defaults on every reconcile and never
    # be a no-op.
    spec = obj.setdefault("spec", {})
    spec["accessModes"] = ["ReadWriteOnce"]
    spec.setdefault("resources", {})["requests"] = {"storage": f"{size}Gi"}


async def test_create_or_patch_reports_what_it_wrote(client: Client, namespace: str) -> None:
    obj = claim(namespace)
    result, created = await create_or_patch(client, obj, desired_spec)
    assert result is OperationResult.CREATED
    rv = created["metadata"]["resourceVersion"]

    result, _ = await create_or_patch(client, obj, lambda o: desired_spec(o))
    assert result is OperationResult.UNCHANGED
    assert obj["metadata"]["resourceVersion"] == rv

    result, patched = await create_or_patch(client, obj, lambda o: desired_spec(o, 3))
    assert result is OperationResult.UPDATED
    assert patched["spec"]["resources"]["requests"]["storage"] == "3Gi"

    def set_status(o: dict[str, Any]) -> None:
        o.setdefault("status", {})["phase"] = "Bound"

    result, with_status = await create_or_patch(client, obj, set_status)
    assert result is OperationResult.UPDATED_STATUS_ONLY
    assert with_status["status"]["phase"] == "Bound"

    def both(o: dict[str, Any]) -> None:
        desired_spec(o, 2)
        o["status"]["phase"] = "Lost"

    result, final = await create_or_patch(client, obj, both, optimistic=True)
    assert result is OperationResult.UPDATED_STATUS
    fetched = await client.get("v1", "PersistentVolumeClaim", "data", namespace=namespace)
    assert fetched["spec"]["resources"]["requests"]["storage"] == "2Gi"
    assert fetched["status"]["phase"] == "Lost"
    assert final["metadata"]["resourceVersion"] == fetched["metadata"]["resourceVersion"]
