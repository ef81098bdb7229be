"""Discovery and REST mapping: which URL serves a kind, and is it namespaced?

:class:`RESTMapper` reads legacy discovery (``/api``, ``/api/v1``, ``/apis``, ``/apis/g/v``),
which every API server serves, and caches one group version at a time. A lookup that misses the
cache refetches that group version once, so a CRD created a moment ago is found; a kind that is
still missing raises :class:`~setpoint.client.errors.NoKindMatch` naming the kind and version.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from setpoint.api.gvk import GroupVersion, ResourceInfo, parse_api_version
from setpoint.client import json_codec
from setpoint.client.errors import NoKindMatch, NotFound
from setpoint.client.transport import Transport

__all__ = ["RESTMapper", "parse_resource_list"]


@dataclass(slots=True)
class _GroupVersionResources:
    by_kind: dict[str, ResourceInfo] = field(default_factory=dict)
    by_plural: dict[str, ResourceInfo] = field(default_factory=dict)
    by_short_name: dict[str, ResourceInfo] = field(default_factory=dict)


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))


def parse_resource_list(
    group_version: GroupVersion, document: Mapping[str, Any]
) -> list[ResourceInfo]:
    """The resources of an ``APIResourceList``; subresources are attached to their parent."""
    entries = [e for e in document.get("resources") or [] if isinstance(e, Mapping)]
    subresources: dict[str, list[str]] = {}
    for entry in entries:
        name = entry.get("name")
        if isinstance(name, str) and "/" in name:
            parent, sub = name.split("/", 1)
            subresources.setdefault(parent, []).append(sub)
    infos: list[ResourceInfo] = []
    for entry in entries:
        name = entry.get("name")
        kind = entry.get("kind")
        if not isinstance(name, str) or "/" in name or not isinstance(kind, str) or not kind:
            continue
        infos.append(
            ResourceInfo(
                group=group_version.group,
                version=group_version.version,
                kind=kind,
                resource=name,
                namespaced=bool(entry.get("namespaced", False)),
                list_kind=f"{kind}List",
                singular=str(entry.get("singularName") or kind.lower()),
                verbs=_strings(entry.get("verbs")),
                short_names=_strings(entry.get("shortNames")),
                categories=_strings(entry.get("categories")),
                subresources=tuple(subresources.get(name, ())),
            )
        )
    return infos


class RESTMapper:
    """Maps kinds and plurals to :class:`ResourceInfo` using the server's discovery documents."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._cache: dict[GroupVersion, _GroupVersionResources] = {}
        # (apiVersion, kind) -> what resource_for answered, while _cache is unchanged: a hit
        # then costs one dict lookup instead of parsing the apiVersion.
        self._answers: dict[tuple[str, str], ResourceInfo] = {}
        # Counts the changes of cached discovery, so that users can tell when to drop what
        # they derived from it.
        self.generation = 0
        self._generation: dict[GroupVersion, int] = {}
        self._locks: dict[GroupVersion, asyncio.Lock] = {}
        self._groups: dict[str, tuple[str, list[str]]] | None = None  # group -> (preferred, all)

    def _changed(self) -> None:
        self._answers.clear()
        self.generation += 1

    def invalidate(self, api_version: str | None = None) -> None:
        """Forget cached discovery for one group version, or everything."""
        if api_version is None:
            self._cache.clear()
            self._groups = None
        else:
            self._cache.pop(parse_api_version(api_version), None)
        self._changed()

    def cached_resource_for(self, api_version: str, kind: str) -> ResourceInfo | None:
        """What :meth:`resource_for` answered for this kind, if discovery has not changed since
        (None: call :meth:`resource_for`)."""
        return self._answers.get((api_version, kind))

    async def resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        """The resource serving ``kind`` in ``api_version``; refreshes discovery on a miss.

        Raises :class:`NoKindMatch` when the server really does not serve it, and ``ValueError``
        for a malformed ``api_version``.
        """
        answer = self._answers.get((api_version, kind))
        if answer is not None:
            return answer
        gv = parse_api_version(api_version)
        cached = self._cache.get(gv)
        if cached is not None and kind in cached.by_kind:
            answer = self._answers[(api_version, kind)] = cached.by_kind[kind]
            return answer
        resources = await self._refresh(gv, seen=cached)
        if resources is not None and kind in resources.by_kind:
            answer = self._answers[(api_version, kind)] = resources.by_kind[kind]
            return answer
        raise NoKindMatch(api_version, kind, known_versions=await self._versions_serving(gv, kind))

    async def resource_for_plural(self, api_version: str, resource: str) -> ResourceInfo:
        """The resource named ``resource`` (plural, singular or short name) in ``api_version``."""
        gv = parse_api_version(api_version)
        cached = self._cache.get(gv)
        found = _lookup_plural(cached, resource)
        if found is not None:
            return found
        resources = await self._refresh(gv, seen=cached)
        found = _lookup_plural(resources, resource)
        if found is not None:
            return found
        raise NoKindMatch(api_version, resource)

    async def resources(self, api_version: str) -> list[ResourceInfo]:
        """All resources of one group version (empty if the server does not serve it)."""
        gv = parse_api_version(api_version)
        cached = self._cache.get(gv)
        if cached is None:
            cached = await self._refresh(gv, seen=None)
        return list(cached.by_plural.values()) if cached is not None else []

    async def preferred_version(self, group: str) -> str:
        """The server's preferred version of ``group`` (``""`` is the core group: ``v1``)."""
        groups = await self._load_groups(force=False)
        if group not in groups:
            groups = await self._load_groups(force=True)
        if group not in groups:
            raise NoKindMatch(group or "v1", "*")
        return groups[group][0]

    async def find(self, name: str, *, group: str | None = None) -> ResourceInfo:
        """Resolve a bare kind, plural, singular or short name (as ``kubectl get`` does).

        Searches the preferred version of every group (or only ``group``); the core group wins
        ties, then groups in discovery order.
        """
        for attempt in range(2):
            groups = await self._load_groups(force=attempt > 0)
            names = [group] if group is not None else list(groups)
            for group_name in names:
                if group_name not in groups:
                    continue
                preferred = groups[group_name][0]
                gv = GroupVersion(group_name, preferred)
                resources = self._cache.get(gv) or await self._refresh(gv, seen=None)
                if resources is None:
                    continue
                found = resources.by_kind.get(name) or _lookup_plural(resources, name.lower())
                if found is not None:
                    return found
            if attempt == 0:
                for gv in [gv for gv in self._cache if group is None or gv.group == group]:
                    self._cache.pop(gv, None)
                self._changed()
        raise NoKindMatch(group or "", name)

    async def _refresh(
        self, gv: GroupVersion, *, seen: _GroupVersionResources | None
    ) -> _GroupVersionResources | None:
        # ``seen`` is what the caller found in the cache (documents the call; the generation
        # counter is what detects a refresh that happened while waiting for the lock).
        del seen
        lock = self._locks.setdefault(gv, asyncio.Lock())
        generation = self._generation.get(gv, 0)
        async with lock:
            # Another task refreshed while we waited: its result is as fresh as ours would be.
            if self._generation.get(gv, 0) != generation:
                return self._cache.get(gv)
            path = f"/apis/{gv.group}/{gv.version}" if gv.group else f"/api/{gv.version}"
            try:
                response = await self._transport.request("GET", path)
            except NotFound:
                self._cache.pop(gv, None)
                self._generation[gv] = generation + 1
                self._changed()
                return None
            document = json_codec.decode(response.body)
            resources = _GroupVersionResources()
            for info in parse_resource_list(gv, document if isinstance(document, dict) else {}):
                resources.by_plural[info.resource] = info
                # The first resource listed for a kind wins (as client-go's priority mapper).
                resources.by_kind.setdefault(info.kind, info)
                for short in info.short_names:
                    resources.by_short_name.setdefault(short, info)
            self._cache[gv] = resources
            self._generation[gv] = generation + 1
            self._changed()
            return resources

    async def _load_groups(self, *, force: bool) -> dict[str, tuple[str, list[str]]]:
        if self._groups is not None and not force:
            return self._groups
        groups: dict[str, tuple[str, list[str]]] = {}
        core = json_codec.decode((await self._transport.request("GET", "/api")).body)
        core_versions = _strings(core.get("versions")) if isinstance(core, dict) else ()
        if core_versions:
            groups[""] = (core_versions[0], list(core_versions))
        document = json_codec.decode((await self._transport.request("GET", "/apis")).body)
        for item in _group_items(document):
            name = item.get("name")
            versions = [
                v["version"]
                for v in item.get("versions") or []
                if isinstance(v, Mapping) and isinstance(v.get("version"), str)
            ]
            if not isinstance(name, str) or not versions:
                continue
            preferred = item.get("preferredVersion")
            preferred_version = (
                preferred.get("version") if isinstance(preferred, Mapping) else None
            ) or versions[0]
            groups[name] = (str(preferred_version), versions)
        self._groups = groups
        return groups

    async def _versions_serving(self, gv: GroupVersion, kind: str) -> tuple[str, ...]:
        # Only for the error message: which other versions of the group serve this kind.
        try:
            groups = await self._load_groups(force=True)
        except Exception:  # the message is best effort; the NoKindMatch is what matters
            return ()
        if gv.group not in groups:
            return ()
        found: list[str] = []
        for version in groups[gv.group][1]:
            other = GroupVersion(gv.group, version)
            if other == gv:
                continue
            resources = self._cache.get(other) or await self._refresh(other, seen=None)
            if resources is not None and kind in resources.by_kind:
                found.append(other.api_version)
        return tuple(found)


def _group_items(document: Any) -> Iterable[Mapping[str, Any]]:
    if not isinstance(document, dict):
        return []
    return [g for g in document.get("groups") or [] if isinstance(g, Mapping)]


def _lookup_plural(resources: _GroupVersionResources | None, name: str) -> ResourceInfo | None:
    if resources is None:
        return None
    found = resources.by_plural.get(name) or resources.by_short_name.get(name)
    if found is not None:
        return found
    for info in resources.by_plural.values():
        if info.singular == name:
            return info
    return None
