"""What the server serves: one :class:`ServedResource` per group/version/resource.

A ``ServedResource`` carries everything the generic handlers need to know about a resource:
its names for URLs and discovery, its scope and verbs, its subresources, how it is keyed in
storage and which per-kind rules (generation tracking, name format, field selectors) apply.
The built-in table lives in :mod:`setpoint.cluster.apiserver.registry.builtin_resources`; custom
resources get theirs from their CRD.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from setpoint.api.field_errors import FieldError

NameRule = Literal["subdomain", "label", "path_segment"]

#: The verbs of an ordinary resource, in the order kube-apiserver's discovery lists them.
STANDARD_VERBS: tuple[str, ...] = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)
#: The verbs of a custom resource, in the order apiextensions-apiserver lists them.
CUSTOM_RESOURCE_VERBS: tuple[str, ...] = (
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
)
#: Verbs left on a custom resource whose CRD is being deleted.
TERMINATING_CUSTOM_RESOURCE_VERBS: tuple[str, ...] = (
    "delete",
    "deletecollection",
    "get",
    "list",
    "watch",
)
#: Verbs of the ``status`` and ``scale`` subresources.
SUBRESOURCE_VERBS: tuple[str, ...] = ("get", "patch", "update")

#: Validates a custom resource body, pruning and defaulting it in place: called with the body,
#: the stored object on update (None on create; values equal to it are not re-validated) and
#: the subresource written (``"status"`` validates only the status); returns the field errors
#: and the paths of unknown fields (for Strict/Warn field validation).
ObjectValidator = Callable[
    [dict[str, Any], dict[str, Any] | None, str], tuple[list[FieldError], list[str]]
]


class ObjectConverter(Protocol):
    """Converts a custom resource's objects to one of its CRD's versions (see
    :mod:`.custom_resource_conversion`)."""

    async def convert(
        self, objects: Sequence[dict[str, Any]], version: str
    ) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class ServedResource:
    """One resource in one served version, with the rules the generic handlers apply to it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = STANDARD_VERBS
    subresources: tuple[str, ...] = ()
    #: Whether ``metadata.generation`` is set on create and bumped when the spec changes.
    tracks_generation: bool = False
    name_rule: NameRule = "subdomain"
    #: Field-selector fields beyond metadata.name/metadata.namespace, with their extractors.
    field_selectors: Mapping[str, Callable[[dict[str, Any]], str]] = field(default_factory=dict)
    #: Storage is shared between versions (and for events, between groups): the key prefix
    #: group/resource used for storage.
    storage_group: str | None = None
    storage_resource: str | None = None
    #: Custom resources only.
    is_custom: bool = False
    #: The version objects are stored in (custom resources; built-ins served in a version
    #: other than the stored one, such as autoscaling/v1 HorizontalPodAutoscalers).
    storage_version: str = ""
    validator: ObjectValidator | None = None
    #: A custom resource's ``subresources.scale`` (specReplicasPath, statusReplicasPath, ...).
    scale_spec: Mapping[str, Any] | None = None
    deprecated_warning: str | None = None
    #: The CRD's own name, for custom resources.
    crd_name: str = ""
    #: The CRD is being deleted: discovery shows fewer verbs and creates are refused.
    terminating: bool = False
    #: A custom resource version's ``openAPIV3Schema`` (what ``/openapi`` publishes for it).
    openapi_schema: Mapping[str, Any] | None = None
    #: A custom resource's table columns (``additionalPrinterColumns``, or the default Age).
    printer_columns: tuple[Mapping[str, Any], ...] = ()
    #: Converts a custom resource's objects between its CRD's versions (``spec.conversion``).
    converter: ObjectConverter | None = None
    #: The versions a custom resource's objects may be stored in (``status.storedVersions``).
    stored_versions: tuple[str, ...] = ()

    # Worked out once from the fields above (every request reads them; not arguments).
    #: ``v1`` or ``apps/v1``: the apiVersion of the objects.
    api_version: str = field(init=False, repr=False, compare=False)
    #: ``/core/configmaps/``: the storage prefix of every object of this resource.
    storage_root: str = field(init=False, repr=False, compare=False)
    #: Whether the ``status`` subresource exists (main writes then keep the old status).
    has_status: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        group = self.storage_group if self.storage_group is not None else self.group
        derived = {
            "api_version": f"{self.group}/{self.version}" if self.group else self.version,
            "storage_root": f"/{group or 'core'}/{self.storage_resource or self.plural}/",
            "has_status": "status" in self.subresources,
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)  # frozen: set once, here

    @property
    def list_kind(self) -> str:
        """The kind of the list objects."""
        return f"{self.kind}List"

    def storage_prefix(self, namespace: str | None) -> str:
        """The key prefix of a list or watch, in one namespace or across all."""
        if self.namespaced and namespace:
            return f"{self.storage_root}{namespace}/"
        return self.storage_root

    def storage_key(self, namespace: str | None, name: str) -> str:
        """The key of one object."""
        if self.namespaced:
            return f"{self.storage_root}{namespace}/{name}"
        return f"{self.storage_root}{name}"

    @property
    def has_scale(self) -> bool:
        """Whether the ``scale`` subresource exists."""
        return "scale" in self.subresources
