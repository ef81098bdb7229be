"""Custom resources declared as pydantic models, and the CRD manifests generated from them.

A resource is a subclass of :class:`CustomResource` that names its group, version and kind in
the class statement and declares ``spec`` (and usually ``status``) as pydantic models::

    class FooSpec(BaseModel):
        deployment_name: str = Field(alias="deploymentName", min_length=1)
        replicas: int = Field(default=1, ge=0)

    class FooStatus(BaseModel):
        available_replicas: int = Field(default=0, alias="availableReplicas")

    class Foo(CustomResource, group="samplecontroller.k8s.io", version="v1alpha1", kind="Foo"):
        spec: FooSpec
        status: FooStatus | None = None

The class is then the kind everywhere a kind is accepted (``for_=Foo``, ``client.get(Foo,
...)``), ``ctx.get()`` returns ``Foo`` instances, and :func:`crd_manifest` turns one or more
versions of it into an ``apiextensions.k8s.io/v1`` CustomResourceDefinition whose schema is
structural (``schema`` explains the translation from pydantic's JSON Schema). ``markers`` holds
the Kubernetes-specific annotations a field can carry (int-or-string, list types, CEL rules ...).
"""

from setpoint.api.resources.custom_resource import (
    CustomResource,
    ObjectMeta,
    PrinterColumn,
    ResourceDeclaration,
    ScaleSubresource,
)
from setpoint.api.resources.definition import crd_manifest, crd_manifests
from setpoint.api.resources.markers import (
    EmbeddedResource,
    IntOrString,
    ListType,
    MapType,
    PreserveUnknownFields,
    Rule,
)
from setpoint.api.resources.schema import SchemaError, structural_schema

__all__ = [
    "CustomResource",
    "EmbeddedResource",
    "IntOrString",
    "ListType",
    "MapType",
    "ObjectMeta",
    "PreserveUnknownFields",
    "PrinterColumn",
    "ResourceDeclaration",
    "Rule",
    "ScaleSubresource",
    "SchemaError",
    "crd_manifest",
    "crd_manifests",
    "structural_schema",
]
