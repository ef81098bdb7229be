"""The custom resources of a watches.yaml as models, for ``setpoint generate``.

Operator SDK's ``create api`` makes a CRD whose ``spec`` and ``status`` keep unknown fields
(``x-kubernetes-preserve-unknown-fields``): the roles decide what the fields mean. Each watched
kind of a custom group (one with a dot) becomes a ``CustomResource`` model of that shape, from
which the CRD, the samples and the Helm chart are generated as for Python operators.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from setpoint.ansible.watches import GroupVersionKind, Watch
from setpoint.api.resources import CustomResource

__all__ = ["resource_model", "resource_models"]


def resource_model(gvk: GroupVersionKind) -> type[CustomResource]:
    """A model of ``gvk`` whose spec and status keep any field."""

    class Resource(CustomResource, group=gvk.group, version=gvk.version, kind=gvk.kind):
        spec: dict[str, Any] = Field(
            default_factory=dict, description=f"Spec defines the desired state of {gvk.kind}"
        )
        status: dict[str, Any] | None = Field(
            default=None, description=f"Status defines the observed state of {gvk.kind}"
        )

    Resource.__name__ = Resource.__qualname__ = gvk.kind
    Resource.__doc__ = f"{gvk.kind} is the Schema for the {gvk.kind.lower()} API."
    return Resource


def resource_models(watches: Sequence[Watch]) -> list[type[CustomResource]]:
    """Models of the watched kinds that are custom resources (built-in kinds are skipped)."""
    return [resource_model(watch.gvk) for watch in watches if "." in watch.gvk.group]
