"""Names of API types and objects: group/version/kind, group/version/resource, object keys.

Kubernetes addresses a *type* by group, version and kind (what is inside the JSON) and a
*collection* by group, version and resource (the plural in the URL). ``ResourceInfo`` ties the
two together and knows the REST path of a collection, an object, or a subresource. ``ObjectKey``
names one object: ``namespace/name`` or just ``name`` for cluster-scoped objects.

The core group is the empty string: ``apiVersion: v1`` means group ``""``, version ``"v1"``,
served under ``/api/v1``; every other group is served under ``/apis/<group>/<version>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

__all__ = [
    "GroupVersion",
    "GroupVersionKind",
    "GroupVersionResource",
    "ObjectKey",
    "ResourceInfo",
    "parse_api_version",
]

CORE_API_PREFIX = "/api"  # the legacy core group ("") is served here
GROUPED_API_PREFIX = "/apis"  # every named group is served here


def parse_api_version(api_version: str) -> GroupVersion:
    """Split an ``apiVersion`` string into group and version.

    ``"v1"`` is the core group (group ``""``); ``"apps/v1"`` is group ``apps``, version ``v1``.
    Raises ``ValueError`` naming the input when it is empty or has more than one ``/``.
    """
    if not isinstance(api_version, str):
        raise ValueError(f"invalid apiVersion {api_version!r}: must be a string")
    if api_version == "":
        raise ValueError('invalid apiVersion "": must not be empty')
    parts = api_version.split("/")
    if len(parts) == 1:
        return GroupVersion("", parts[0])
    if len(parts) == 2 and parts[0] and parts[1]:
        return GroupVersion(parts[0], parts[1])
    raise ValueError(
        f"unexpected GroupVersion string: {api_version!r}: "
        'expected "<version>" or "<group>/<version>"'
    )


def _check_path_segment(field: str, value: str) -> None:
    """Refuse values that would change the meaning of a URL path (apimachinery's rules)."""
    if value in (".", ".."):
        raise ValueError(f"invalid {field} {value!r}: may not be '{value}'")
    for forbidden in ("/", "%"):
        if forbidden in value:
            raise ValueError(f"invalid {field} {value!r}: may not contain '{forbidden}'")


def _api_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


@dataclass(frozen=True, slots=True)
class GroupVersion:
    """An API group and version, e.g. ``apps/v1`` (group ``""`` is the core group)."""

    group: str
    version: str

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` string: ``"v1"`` for the core group, else ``"group/version"``."""
        return _api_version(self.group, self.version)

    @classmethod
    def parse(cls, api_version: str) -> GroupVersion:
        """Parse an ``apiVersion`` string (see :func:`parse_api_version`)."""
        return parse_api_version(api_version)

    def with_kind(self, kind: str) -> GroupVersionKind:
        """The GroupVersionKind of ``kind`` in this group version."""
        return GroupVersionKind(self.group, self.version, kind)

    def with_resource(self, resource: str) -> GroupVersionResource:
        """The GroupVersionResource of ``resource`` in this group version."""
        return GroupVersionResource(self.group, self.version, resource)

    def __str__(self) -> str:
        return self.api_version


class _InGroupVersion:
    """The ``apiVersion`` and :class:`GroupVersion` of a name that carries a group and version."""

    __slots__ = ()
    group: str
    version: str

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` string: ``"v1"`` for the core group, else ``"group/version"``."""
        return _api_version(self.group, self.version)

    @property
    def group_version(self) -> GroupVersion:
        """The group and version alone."""
        return GroupVersion(self.group, self.version)


@dataclass(frozen=True, slots=True)
class GroupVersionKind(_InGroupVersion):
    """A type: group, version and kind (``Kind`` as written in objects, e.g. ``Deployment``)."""

    group: str
    version: str
    kind: str

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> GroupVersionKind:
        """Build from an ``apiVersion`` string and a kind."""
        gv = parse_api_version(api_version)
        return cls(gv.group, gv.version, kind)

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> GroupVersionKind:
        """Read ``apiVersion`` and ``kind`` of an object.

        Raises ``ValueError`` naming the missing field when either is absent or empty.
        """
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if not isinstance(api_version, str) or not api_version:
            raise ValueError("object has no apiVersion: apiVersion must be a non-empty string")
        if not isinstance(kind, str) or not kind:
            raise ValueError("object has no kind: kind must be a non-empty string")
        return cls.from_api_version(api_version, kind)

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


@dataclass(frozen=True, slots=True)
class GroupVersionResource(_InGroupVersion):
    """A collection: group, version and resource (the lower-case plural in URLs)."""

    group: str
    version: str
    resource: str

    def __str__(self) -> str:
        return f"{self.api_version}, Resource={self.resource}"


@dataclass(frozen=True, slots=True)
class ResourceInfo(_InGroupVersion):
    """Everything needed to address a resource over REST, as discovery reports it.

    ``resource`` is the plural (``deployments``), ``kind`` the type (``Deployment``),
    ``list_kind`` the list type (``DeploymentList``), ``subresources`` e.g. ``("status",)``.
    """

    group: str
    version: str
    kind: str
    resource: str
    namespaced: bool
    list_kind: str
    singular: str = ""
    verbs: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()

    @property
    def gvk(self) -> GroupVersionKind:
        """The type of this resource's objects."""
        return GroupVersionKind(self.group, self.version, self.kind)

    @property
    def gvr(self) -> GroupVersionResource:
        """The collection of this resource."""
        return GroupVersionResource(self.group, self.version, self.resource)

    @property
    def group_version_path(self) -> str:
        """``/api/v1`` for the core group, ``/apis/<group>/<version>`` otherwise."""
        if self.group:
            return f"{GROUPED_API_PREFIX}/{self.group}/{self.version}"
        return f"{CORE_API_PREFIX}/{self.version}"

    def path(
        self,
        namespace: str | None = None,
        name: str | None = None,
        subresource: str | None = None,
    ) -> str:
        """The REST path of the collection, one object, or one object's subresource.

        For a namespaced resource without ``namespace`` the path lists across all namespaces.
        ``namespace`` is ignored for cluster-scoped resources. ``subresource`` needs ``name``.
        """
        if subresource and not name:
            raise ValueError(f"subresource {subresource!r} of {self.resource} requires a name")
        for field, value in (
            ("namespace", namespace),
            ("name", name),
            ("subresource", subresource),
        ):
            if value:
                _check_path_segment(field, value)
        parts = [self.group_version_path]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{namespace}")
        parts.append(self.resource)
        if name:
            parts.append(name)
            if subresource:
                parts.append(subresource)
        return "/".join(parts)


class ObjectKey(tuple[str | None, str]):
    """The name of one object: ``namespace/name``, or ``name`` when cluster-scoped (namespace None).

    An empty namespace is normalised to ``None`` so that both spellings compare equal. Immutable
    and hashable: a ``(namespace, name)`` tuple underneath, so the hashing and comparing that
    work queues and caches do several times per event run in C (it also compares equal to that
    plain tuple).
    """

    __slots__ = ()
    __match_args__ = ("namespace", "name")

    def __new__(cls, namespace: str | None, name: str) -> ObjectKey:
        return tuple.__new__(cls, (namespace or None, name))

    if TYPE_CHECKING:

        @property
        def namespace(self) -> str | None:
            """The namespace; None for cluster-scoped objects."""

        @property
        def name(self) -> str:
            """The name."""

    else:
        namespace = property(itemgetter(0), doc="The namespace; None for cluster-scoped objects.")
        name = property(itemgetter(1), doc="The name.")

    def __getnewargs__(self) -> tuple[str | None, str]:
        # copy and pickle rebuild a key from (namespace, name), not from one tuple.
        return (self[0], self[1])

    def __repr__(self) -> str:
        return f"ObjectKey(namespace={self[0]!r}, name={self[1]!r})"

    def __str__(self) -> str:
        namespace, name = self
        return f"{namespace}/{name}" if namespace else name

    @classmethod
    def parse(cls, text: str) -> ObjectKey:
        """Parse ``"ns/name"`` or ``"name"``; raises ``ValueError`` for other shapes."""
        parts = text.split("/")
        if len(parts) == 1 and parts[0]:
            return cls(None, parts[0])
        if len(parts) == 2 and parts[1]:
            return cls(parts[0] or None, parts[1])
        raise ValueError(f"invalid object key {text!r}: expected 'name' or 'namespace/name'")

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> ObjectKey:
        """The key of an object from ``metadata.namespace`` and ``metadata.name``."""
        metadata = obj.get("metadata")
        if not isinstance(metadata, Mapping):
            raise ValueError("object has no metadata: metadata must be an object")
        name = metadata.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("object has no name: metadata.name must be a non-empty string")
        namespace = metadata.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise ValueError("metadata.namespace must be a string")
        return cls(namespace or None, name)
