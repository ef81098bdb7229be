"""MemcachedProxy (cache.example.com/v1alpha1): an mcrouter in front of a memcached pool.

The proxy of the seed talk (ianlewis/memcached-operator): its configuration lists the pods behind
a Service, and is rendered into a content-addressed ConfigMap; when the pods change, a new
ConfigMap and a rolling update of the proxy Deployment follow.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from setpoint.api.resources import CustomResource, IntOrString, PrinterColumn

DEFAULT_MCROUTER_IMAGE = "mcrouter/mcrouter:latest"


class ServiceReference(BaseModel):
    """The Service whose endpoints make the memcached pool."""

    name: str = Field(min_length=1, description="The Service's name.")
    namespace: str | None = Field(
        default=None, description="The Service's namespace; default: the proxy's."
    )
    port: IntOrString = Field(description="The Service port: its number or its name.")


class ProxyRules(BaseModel):
    """How requests are routed to the pool."""

    type: Literal["sharded", "replicated"] = Field(
        default="sharded",
        description=(
            "sharded: each key lives on one server (consistent hashing); "
            "replicated: writes go to every server."
        ),
    )
    service: ServiceReference


class McrouterSpec(BaseModel):
    """The mcrouter proxy's container."""

    image: str = Field(default=DEFAULT_MCROUTER_IMAGE, min_length=1)
    port: int = Field(default=11211, ge=1, le=65535, description="The port mcrouter serves.")


class MemcachedProxySpec(BaseModel):
    """MemcachedProxySpec defines the desired state of MemcachedProxy."""

    rules: ProxyRules
    mcrouter: McrouterSpec = Field(default_factory=McrouterSpec)


class MemcachedProxyStatus(BaseModel):
    """MemcachedProxyStatus defines the observed state of MemcachedProxy."""

    observed_generation: int | None = Field(default=None, alias="observedGeneration")
    config_map: str | None = Field(
        default=None, alias="configMap", description="The ConfigMap of the current config."
    )
    servers: list[str] = Field(default_factory=list, description="The pool's podIP:port servers.")
    conditions: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Ready: the proxy Deployment is available with the current config.",
    )


class MemcachedProxy(
    CustomResource,
    group="cache.example.com",
    version="v1alpha1",
    kind="MemcachedProxy",
    printer_columns=[
        PrinterColumn("Type", ".spec.rules.type"),
        PrinterColumn("Service", ".spec.rules.service.name"),
        PrinterColumn("Config", ".status.configMap"),
        PrinterColumn("Ready", '.status.conditions[?(@.type=="Ready")].status'),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ],
):
    """MemcachedProxy is the Schema for the memcachedproxies API."""

    spec: MemcachedProxySpec
    status: MemcachedProxyStatus | None = None

    @classmethod
    def sample(cls) -> MemcachedProxy:
        """The sample of config/samples: a sharded proxy for memcached-sample's Service."""
        return cls.model_validate(
            {
                "metadata": {"name": "memcachedproxy-sample"},
                "spec": {
                    "rules": {
                        "type": "sharded",
                        "service": {"name": "memcached-sample", "port": 11211},
                    }
                },
            }
        )
