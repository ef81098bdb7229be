"""``PodSet``: a number of identical Pods, kept like a ReplicaSet keeps its Pods.

As the operator-sdk workshop's PodSet: ``spec.replicas`` (1..10), and in ``status`` the names of
the live Pods and how many there are.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from setpoint.api.resources import CustomResource, PrinterColumn


class PodSetSpec(BaseModel):
    """PodSetSpec defines the desired state of PodSet."""

    replicas: int = Field(default=1, ge=1, le=10, description="How many Pods to keep.")


class PodSetStatus(BaseModel):
    """PodSetStatus defines the observed state of PodSet."""

    model_config = ConfigDict(populate_by_name=True)

    pod_names: list[str] = Field(default_factory=list, alias="podNames")
    available_replicas: int = Field(default=0, alias="availableReplicas")


class PodSet(
    CustomResource,
    group="app.example.com",
    version="v1alpha1",
    kind="PodSet",
    printer_columns=[
        PrinterColumn("Desired", ".spec.replicas", "integer"),
        PrinterColumn("Available", ".status.availableReplicas", "integer"),
    ],
):
    """PodSet is the Schema for the podsets API."""

    spec: PodSetSpec = Field(default_factory=PodSetSpec)
    status: PodSetStatus | None = None

    @classmethod
    def sample(cls) -> PodSet:
        """Three Pods."""
        return cls(spec=PodSetSpec(replicas=3))
