"""The base class of typed custom resources, and what a resource declares about itself."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from setpoint.api.resources.declaration import (
    PrinterColumn,
    ResourceDeclaration,
    ScaleSubresource,
    default_plural,
)

__all__ = [
    "CustomResource",
    "ObjectMeta",
    "PrinterColumn",
    "ResourceDeclaration",
    "ScaleSubresource",
    "default_plural",
    "fill_type_fields",
]


def fill_type_fields(data: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """A copy of ``data`` (an object's fields, before validation) with ``apiVersion`` and
    ``kind`` filled in; ``ValueError`` naming the field when ``data`` gives another type."""
    data = dict(data)
    for names, expected in ((("apiVersion", "api_version"), api_version), (("kind",), kind)):
        given = next((data[name] for name in names if data.get(name)), None)
        if given is None:
            data[names[0]] = expected
        elif given != expected:
            raise ValueError(f"{names[0]}: expected {expected!r}, got {given!r}")
    return data


class ObjectMeta(BaseModel):
    """The ``metadata`` of an object: the common fields typed, every other field kept."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    name: str | None = None
    generate_name: str | None = Field(default=None, alias="generateName")
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")
    generation: int | None = None
    creation_timestamp: str | None = Field(default=None, alias="creationTimestamp")
    deletion_timestamp: str | None = Field(default=None, alias="deletionTimestamp")
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[dict[str, Any]] | None = Field(default=None, alias="ownerReferences")
    finalizers: list[str] | None = None


_DECLARATION_KEYS = {
    "group",
    "version",
    "kind",
    "plural",
    "singular",
    "scope",
    "short_names",
    "categories",
    "printer_columns",
    "selectable_fields",
    "status_subresource",
    "scale",
    "served",
    "storage",
    "deprecated",
    "deprecation_warning",
    "rules",
    "api_approval",
}


class CustomResource(BaseModel):
    """Base of typed custom resources; the class statement declares the resource.

    Keywords: ``group``, ``version``, ``kind`` (required); ``plural``, ``singular`` (derived
    from the kind), ``scope`` (``"Namespaced"`` or ``"Cluster"``), ``short_names``,
    ``categories``, ``printer_columns`` (:class:`PrinterColumn`), ``selectable_fields``
    (JSON paths), ``status_subresource`` (default: on when the model has a ``status`` field),
    ``scale`` (:class:`ScaleSubresource`), ``served``, ``storage``, ``deprecated``,
    ``deprecation_warning``, ``rules`` (CEL :class:`Rule` on the whole object),
    ``api_approval`` (the ``api-approved.kubernetes.io`` annotation that groups under
    ``k8s.io`` need; "unapproved, experimental-only" when not given), ``camel_case``
    (default True: fields without an alias get their camelCase JSON name, ``max_size`` is
    ``maxSize``, in this model and the models it uses; False keeps the Python names). The
    docstring becomes the CRD schema's description.
    """

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    __resource__: ClassVar[ResourceDeclaration | None] = None
    #: camelCase JSON names for fields without an alias (``camel_case=False`` in the class
    #: statement keeps the Python names; see ``field_names``).
    __camel_case__: ClassVar[bool] = True
    __api_version__: ClassVar[str]
    __kind__: ClassVar[str]

    api_version: str = Field(default="", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        declared = {key: kwargs.pop(key) for key in list(kwargs) if key in _DECLARATION_KEYS}
        camel_case = kwargs.pop("camel_case", None)
        if camel_case is not None:
            cls.__camel_case__ = bool(camel_case)
        super().__init_subclass__(**kwargs)
        if not declared:
            return  # an intermediate base class; its subclasses declare the resource
        missing = [key for key in ("group", "version", "kind") if not declared.get(key)]
        if missing:
            raise TypeError(
                f"custom resource {cls.__name__}: the class statement must give "
                + ", ".join(f"{key}=..." for key in missing)
            )
        kind = declared["kind"]
        declared.setdefault("plural", default_plural(kind))
        declared.setdefault("singular", kind.lower())
        for key in ("short_names", "categories", "printer_columns", "selectable_fields", "rules"):
            declared[key] = tuple(declared.get(key, ()))
        declaration = ResourceDeclaration(**declared)
        declaration.check(cls.__name__)
        cls.__resource__ = declaration
        cls.__api_version__ = declaration.api_version
        cls.__kind__ = declaration.kind

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        # The declaration keywords were consumed by __init_subclass__; nothing else is expected.
        super().__pydantic_init_subclass__()
        if cls.__resource__ is not None and cls.__camel_case__:
            from setpoint.api.resources.field_names import apply_camel_case

            apply_camel_case(cls)

    @model_validator(mode="before")
    @classmethod
    def _fill_type_fields(cls, data: Any) -> Any:
        declaration = cls.__resource__
        if declaration is None or not isinstance(data, dict):
            return data
        return fill_type_fields(data, declaration.api_version, declaration.kind)

    @classmethod
    def declaration(cls) -> ResourceDeclaration:
        """The resource this class declares; ``TypeError`` for an undeclared base class."""
        if cls.__resource__ is None:
            raise TypeError(
                f"{cls.__name__} declares no resource: write "
                f"class {cls.__name__}(CustomResource, group=..., version=..., kind=...)"
            )
        return cls.__resource__

    @classmethod
    def crd(cls) -> dict[str, Any]:
        """The CustomResourceDefinition of this resource (this version only)."""
        from setpoint.api.resources.definition import crd_manifest

        return crd_manifest(cls)
