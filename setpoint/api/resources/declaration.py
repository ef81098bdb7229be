"""What a custom resource declares about itself: names, scope, columns, subresources, rules.

A :class:`~setpoint.api.resources.custom_resource.CustomResource` subclass's class statement
fills a :class:`ResourceDeclaration`; the CRD generator (``definition``) reads it back through
the model's ``declaration()``, without needing the base class itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from setpoint.api.resources.markers import Rule

__all__ = [
    "ColumnType",
    "PrinterColumn",
    "ResourceDeclaration",
    "ScaleSubresource",
    "Scope",
    "default_plural",
]

Scope = Literal["Namespaced", "Cluster"]
ColumnType = Literal["integer", "number", "string", "boolean", "date"]

_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")


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
