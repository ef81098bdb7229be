"""``Foo``: a Deployment of nginx with a given name and number of replicas.

Field for field sample-controller's ``Foo``: ``spec.replicas`` is optional (the Deployment then
gets 1) and bounded 1..10; ``status.availableReplicas`` is copied from the Deployment.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from setpoint.api.resources import CustomResource


class FooSpec(BaseModel):
    """FooSpec is the spec for a Foo resource."""

    model_config = ConfigDict(populate_by_name=True)

    deployment_name: str = Field(
        default="",
        alias="deploymentName",
        description="The name of the Deployment the Foo keeps; empty: the Foo does nothing.",
    )
    replicas: int | None = Field(
        default=None, ge=1, le=10, description="Replicas of the Deployment (1 when unset)."
    )


class FooStatus(BaseModel):
    """FooStatus is the status for a Foo resource."""

    model_config = ConfigDict(populate_by_name=True)

    available_replicas: int = Field(default=0, alias="availableReplicas")


class Foo(
    CustomResource,
    group="samplecontroller.k8s.io",
    version="v1alpha1",
    kind="Foo",
    api_approval="unapproved, experimental-only",
):
    """Foo is a specification for a Foo resource."""

    spec: FooSpec = Field(default_factory=FooSpec)
    status: FooStatus | None = None

    @classmethod
    def sample(cls) -> Foo:
        """The sample of sample-controller's ``artifacts/examples/example-foo.yaml``."""
        return cls(spec=FooSpec(deployment_name="example-foo", replicas=1))
