"""The base class of typed custom resources, and what a resource declares about itself."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from setpoint.api.resources.markers import Rule

__all__ = [
    "CustomResource",
    "ObjectMeta",
    "PrinterColumn",
    "ResourceDeclaration",
    "ScaleSubresource",
    "default_plural",
    "fill_type_fields",
]

Scope = Literal["Namespaced", "Cluster"]
ColumnType = Literal["integer", "number", "string", "boolean", "date"]

_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")


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


@dataclass(frozen=True)
class PrinterColumn:
    """A column ``kubectl get`` shows (``additionalPrinterColumns``)."""

    name: str
    json_path: str
    type: ColumnType = "string"
    description: str | None = None
    format: str | None = None
    priority: int = 0

    def as_manifest(self) -> dict[str, Any]:
        column: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            column["description"] = self.description
        if self.format:
            column["format"] = self.format
        if self.priority:
            column["priority"] = self.priority
        return column


@dataclass(frozen=True)
class ScaleSubresource:
    """The ``scale`` subresource: where the replica counts and the label selector live."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None

    def as_manifest(self) -> dict[str, Any]:
        scale = {
            "specReplicasPath": self.spec_replicas_path,
            "statusReplicasPath": self.status_replicas_path,
        }
        if self.label_selector_path:
            scale["labelSelectorPath"] = self.label_selector_path
        return scale


def default_plural(kind: str) -> str:
    """The lower-case plural kubebuilder derives from a kind (``Policy`` -> ``policies``)."""
    word = kind.lower()
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


@dataclass(frozen=True)
class ResourceDeclaration:
    """What a :class:`CustomResource` subclass declares in its class statement."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    scope: Scope = "Namespaced"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    printer_columns: tuple[PrinterColumn, ...] = ()
    selectable_fields: tuple[str, ...] = ()
    status_subresource: bool | None = None
    scale: ScaleSubresource | None = None
    served: bool = True
    storage: bool | None = None
    deprecated: bool = False
    deprecation_warning: str | None = None
    rules: tuple[Rule, ...] = ()
    api_approval: str | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    def check(self, model: str) -> None:
        """Raise ``TypeError`` naming the model and the field when a declaration is invalid."""
        problems = []
        if not self.group or "." not in self.group:
            problems.append(f"group={self.group!r} must be a DNS subdomain with a dot")
        if not _VERSION.match(self.version):
            problems.append(f"version={self.version!r} must look like v1, v1beta1, v2alpha3")
        if not _KIND.match(self.kind):
            problems.append(f"kind={self.kind!r} must be CamelCase, starting with a capital")
        for label, value in (("plural", self.plural), ("singular", self.singular)):
            if not _DNS_LABEL.match(value):
                problems.append(f"{label}={value!r} must be a lower-case DNS label")
        for short in self.short_names:
            if not _DNS_LABEL.match(short):
                problems.append(f"short name {short!r} must be a lower-case DNS label")
        if self.scope not in ("Namespaced", "Cluster"):
            problems.append(f"scope={self.scope!r} must be 'Namespaced' or 'Cluster'")
        if problems:
            raise TypeError(f"custom resource {model}: " + "; ".join(problems))


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
