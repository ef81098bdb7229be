"""sample-controller's Foo, written with setpoint: the generator tests' sample project."""

from __future__ import annotations

from pydantic import BaseModel, Field

import setpoint
from setpoint import kinds
from setpoint.api.rbac import Permission
from setpoint.api.resources import CustomResource, PrinterColumn


class FooSpec(BaseModel):
    """FooSpec is the spec for a Foo resource."""

    deployment_name: str = Field(alias="deploymentName", min_length=1)
    replicas: int = Field(default=1, ge=0, le=10)


class FooStatus(BaseModel):
    """FooStatus is the status for a Foo resource."""

    available_replicas: int = Field(default=0, alias="availableReplicas")


class Foo(
    CustomResource,
    group="samplecontroller.k8s.io",
    version="v1alpha1",
    kind="Foo",
    printer_columns=[PrinterColumn("Available", ".status.availableReplicas", "integer")],
):
    """Foo is a specification for a Foo resource."""

    spec: FooSpec
    status: FooStatus | None = None


op = setpoint.Operator("foo-operator")


@op.reconciler(
    for_=Foo,
    owns=[kinds.Deployment],
    permissions=[Permission("", "configmaps", ["get"], reason="reads its settings")],
)
async def reconcile(ctx: setpoint.Context, request: setpoint.Request) -> None:
    foo = await ctx.get()
    if isinstance(foo, Foo):  # a typed object, decoded from the cache
        await ctx.patch_status(FooStatus(availableReplicas=foo.spec.replicas))
