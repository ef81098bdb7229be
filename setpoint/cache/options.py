"""What a :class:`~setpoint.cache.cache.Cache` watches and how it stores it.

Defaults apply to every kind; ``by_object`` overrides them per kind (controller-runtime's
``ByObject``). The options that cut memory the most: ``namespaces`` (watch only these),
``label_selector`` (cache only matching objects), ``metadata_only`` (keep only metadata),
``transform`` (drop fields before storing), and ``strip_managed_fields`` (on by default).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from setpoint.api.gvk import GroupVersionKind
from setpoint.cache.cached_object import Transform
from setpoint.cache.reflector import ReflectorOptions
from setpoint.cache.selection import canonical_field_selector, canonical_label_selector

__all__ = ["DEFAULT_SYNC_TIMEOUT_S", "CacheOptions", "ObjectOptions", "ResolvedOptions"]

#: controller-runtime's CacheSyncTimeout: long enough for a big initial list on a slow API
#: server, short enough that a missing RBAC rule fails the start instead of hanging it.
DEFAULT_SYNC_TIMEOUT_S: Final = 120.0


def _namespaces(value: Iterable[str] | None, where: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise TypeError(f"{where} must be a collection of namespace names, not a string")
    result = frozenset(value)
    for namespace in result:
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"{where}: invalid namespace {namespace!r}")
    return result


@dataclass(frozen=True, slots=True)
class ObjectOptions:
    """Per-kind overrides; a field left None inherits the :class:`CacheOptions` default."""

    namespaces: Collection[str] | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    transform: Transform | None = None
    strip_managed_fields: bool | None = None
    metadata_only: bool | None = None

    def __post_init__(self) -> None:
        namespaces = _namespaces(self.namespaces, "ObjectOptions.namespaces")
        object.__setattr__(self, "namespaces", namespaces)
        object.__setattr__(self, "label_selector", canonical_label_selector(self.label_selector))
        object.__setattr__(self, "field_selector", canonical_field_selector(self.field_selector))


@dataclass(frozen=True, slots=True)
class ResolvedOptions:
    """The effective options of one kind (defaults merged with its overrides)."""

    namespaces: frozenset[str]
    label_selector: str | None
    field_selector: str | None
    transform: Transform | None
    strip_managed_fields: bool
    metadata_only: bool


@dataclass(frozen=True, slots=True)
class CacheOptions:
    """Options of a cache.

    ``namespaces``: watch only these (one watch per namespace behind one informer); empty means
    cluster-wide. ``label_selector`` / ``field_selector``: server-side filters for every kind.
    ``transform``: applied to each object (a fresh dict) before it is stored.
    ``strip_managed_fields``: drop ``metadata.managedFields`` (default True).
    ``by_object``: per-kind :class:`ObjectOptions`, keyed by ``GroupVersionKind`` or by
    ``(api_version, kind)``. ``sync_timeout``: how long reads and :meth:`Cache.wait_for_sync`
    wait for an informer's initial list. ``reflector``: list/watch tuning.
    """

    namespaces: Collection[str] = frozenset()
    label_selector: str | None = None
    field_selector: str | None = None
    transform: Transform | None = None
    strip_managed_fields: bool = True
    by_object: Mapping[GroupVersionKind | tuple[str, str], ObjectOptions] = field(
        default_factory=dict
    )
    sync_timeout: float | None = DEFAULT_SYNC_TIMEOUT_S
    reflector: ReflectorOptions = field(default_factory=ReflectorOptions)

    def __post_init__(self) -> None:
        namespaces = _namespaces(self.namespaces, "CacheOptions.namespaces") or frozenset()
        object.__setattr__(self, "namespaces", namespaces)
        object.__setattr__(self, "label_selector", canonical_label_selector(self.label_selector))
        object.__setattr__(self, "field_selector", canonical_field_selector(self.field_selector))
        by_gvk: dict[GroupVersionKind, ObjectOptions] = {}
        for key, value in self.by_object.items():
            if isinstance(key, GroupVersionKind):
                gvk = key
            elif isinstance(key, tuple) and len(key) == 2:
                gvk = GroupVersionKind.from_api_version(key[0], key[1])
            else:
                raise TypeError(
                    f"CacheOptions.by_object key {key!r} must be a GroupVersionKind or "
                    "(api_version, kind)"
                )
            if not isinstance(value, ObjectOptions):
                raise TypeError(
                    f"CacheOptions.by_object[{key!r}] must be ObjectOptions, "
                    f"not {type(value).__name__}"
                )
            by_gvk[gvk] = value
        object.__setattr__(self, "by_object", by_gvk)
        if self.sync_timeout is not None and self.sync_timeout <= 0:
            raise ValueError(f"CacheOptions.sync_timeout must be > 0; got {self.sync_timeout}")

    def resolve(self, gvk: GroupVersionKind, *, metadata_only: bool = False) -> ResolvedOptions:
        """The effective options for ``gvk`` (``metadata_only`` forces a metadata-only view)."""
        own = self.by_object.get(gvk, _NO_OVERRIDES)
        return ResolvedOptions(
            namespaces=frozenset(own.namespaces if own.namespaces is not None else self.namespaces),
            label_selector=own.label_selector or self.label_selector,
            field_selector=own.field_selector or self.field_selector,
            transform=own.transform or self.transform,
            strip_managed_fields=(
                own.strip_managed_fields
                if own.strip_managed_fields is not None
                else self.strip_managed_fields
            ),
            metadata_only=metadata_only or bool(own.metadata_only),
        )


_NO_OVERRIDES: Final = ObjectOptions()
