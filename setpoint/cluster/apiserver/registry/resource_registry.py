"""The table of served resources and the legacy discovery documents built from it.

Built-ins are registered once at start; custom resources come and go with their CRDs, and
discovery reflects every change at once (kubectl drops its discovery cache on a lookup miss,
so a new CRD must be visible immediately).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from setpoint.cluster.apiserver.registry.served_resources import SUBRESOURCE_VERBS, ServedResource

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key of Kubernetes version names, highest priority first when sorted ascending.

    GA before beta before alpha, higher numbers first; names that are not Kubernetes-like
    sort last, alphabetically (``version.CompareKubeAwareVersionStrings``).
    """
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major = int(match.group(1))
    stage = match.group(2)
    minor = int(match.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, "")


class ResourceRegistry:
    """Served resources keyed by (group, version, plural), plus their discovery documents."""

    def __init__(self) -> None:
        self._resources: dict[tuple[str, str, str], ServedResource] = {}
        # Group order for /apis: registration order of each group's first resource.
        self._group_order: dict[str, None] = {}
        self._cache: dict[str, bytes] = {}
        #: Resources served per (group, version): every request checks its group/version.
        self._per_group_version: dict[tuple[str, str], int] = {}
        #: Bumped on every change, so derived documents (OpenAPI) know when to rebuild.
        self.generation = 0

    def add(self, resource: ServedResource) -> None:
        """Serve ``resource`` (replacing an earlier entry for the same group/version/plural)."""
        key = (resource.group, resource.version, resource.plural)
        if key not in self._resources:
            pair = (resource.group, resource.version)
            self._per_group_version[pair] = self._per_group_version.get(pair, 0) + 1
        self._resources[key] = resource
        if resource.group:
            self._group_order.setdefault(resource.group, None)
        self._cache.clear()
        self.generation += 1

    def remove(self, group: str, version: str, plural: str) -> None:
        """Stop serving one resource version; its group disappears with its last resource."""
        if self._resources.pop((group, version, plural), None) is not None:
            left = self._per_group_version[(group, version)] - 1
            if left:
                self._per_group_version[(group, version)] = left
            else:
                del self._per_group_version[(group, version)]
        if group and not any(key[0] == group for key in self._resources):
            self._group_order.pop(group, None)
        self._cache.clear()
        self.generation += 1

    def get(self, group: str, version: str, plural: str) -> ServedResource | None:
        """The served resource at this path, or None."""
        return self._resources.get((group, version, plural))

    def __iter__(self) -> Iterator[ServedResource]:
        return iter(list(self._resources.values()))

    def versions_of(self, group: str) -> list[str]:
        """Served versions of a group, preferred first."""
        versions = {key[1] for key in self._resources if key[0] == group}
        return sorted(versions, key=version_priority)

    def has_group_version(self, group: str, version: str) -> bool:
        """Whether any resource is served under this group/version."""
        return (group, version) in self._per_group_version

    def namespaced_resources(self) -> list[ServedResource]:
        """One entry per stored namespaced resource (for namespace cleanup)."""
        seen: set[str] = set()
        found: list[ServedResource] = []
        for resource in self._resources.values():
            if resource.namespaced and resource.storage_root not in seen:
                seen.add(resource.storage_root)
                found.append(resource)
        return found

    def resources_sharing_storage(self, storage_root: str) -> list[ServedResource]:
        """Every served version whose objects live under ``storage_root``."""
        return [r for r in self._resources.values() if r.storage_root == storage_root]

    # -- discovery -----------------------------------------------------------------------

    def _cached(self, key: str, build: Any) -> bytes:
        body = self._cache.get(key)
        if body is None:
            body = msgspec.json.encode(build())
            self._cache[key] = body
        return body

    def api_versions(self, server_address: str) -> bytes:
        """``/api``: the legacy core group's versions."""
        return self._cached(
            f"/api@{server_address}",
            lambda: {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
                ],
            },
        )

    def _group_document(self, group: str) -> dict[str, Any]:
        versions = [
            {"groupVersion": f"{group}/{version}", "version": version}
            for version in self.versions_of(group)
        ]
        return {"name": group, "versions": versions, "preferredVersion": dict(versions[0])}

    def api_group_list(self) -> bytes:
        """``/apis``: every named group with its versions."""
        return self._cached(
            "/apis",
            lambda: {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [self._group_document(group) for group in self._group_order],
            },
        )

    def api_group(self, group: str) -> bytes | None:
        """``/apis/{group}``, or None when the group is not served."""
        if group not in self._group_order:
            return None
        return self._cached(
            f"/apis/{group}",
            lambda: {"kind": "APIGroup", "apiVersion": "v1", **self._group_document(group)},
        )

    def aggregated_discovery(self, *, core: bool, version: str = "v2") -> bytes:
        """``/api`` (``core``) or ``/apis`` as an APIGroupDiscoveryList.

        ``version`` is the apidiscovery.k8s.io version (``v2`` or ``v2beta1``: same fields).
        """
        groups = [""] if core else list(self._group_order)
        return self._cached(
            f"aggregated/{core}/{version}",
            lambda: {
                "kind": "APIGroupDiscoveryList",
                "apiVersion": f"apidiscovery.k8s.io/{version}",
                "metadata": {},
                "items": [self._group_discovery(group) for group in groups],
            },
        )

    def _group_discovery(self, group: str) -> dict[str, Any]:
        versions = []
        for version in self.versions_of(group):
            resources = [
                _aggregated_entry(r)
                for r in sorted(self._resources.values(), key=lambda r: r.plural)
                if (r.group, r.version) == (group, version)
            ]
            versions.append({"version": version, "resources": resources, "freshness": "Current"})
        metadata = {"name": group} if group else {}
        return {"metadata": metadata, "versions": versions}

    def resource_list(self, group: str, version: str) -> bytes | None:
        """``/api/v1`` or ``/apis/{g}/{v}``, or None when that group/version is not served."""
        if not self.has_group_version(group, version):
            return None
        group_version = f"{group}/{version}" if group else version
        return self._cached(
            f"/resources/{group_version}",
            lambda: {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": group_version,
                "resources": list(
                    _resource_entries(
                        r
                        for r in self._resources.values()
                        if (r.group, r.version) == (group, version)
                    )
                ),
            },
        )


def _resource_entries(resources: Iterable[ServedResource]) -> Iterator[dict[str, Any]]:
    for resource in sorted(resources, key=lambda r: r.plural):
        entry: dict[str, Any] = {
            "name": resource.plural,
            "singularName": resource.singular or resource.kind.lower(),
            "namespaced": resource.namespaced,
            "kind": resource.kind,
            "verbs": list(resource.verbs),
        }
        if resource.short_names:
            entry["shortNames"] = list(resource.short_names)
        if resource.categories:
            entry["categories"] = list(resource.categories)
        yield entry
        for sub in resource.subresources:
            sub_entry: dict[str, Any] = {
                "name": f"{resource.plural}/{sub}",
                "singularName": "",
                "namespaced": resource.namespaced,
            }
            if sub == "scale":
                sub_entry.update(group="autoscaling", version="v1", kind="Scale")
            elif sub in OTHER_GROUP_SUBRESOURCES:
                group, version, kind = OTHER_GROUP_SUBRESOURCES[sub]
                sub_entry.update(group=group, version=version, kind=kind)
            else:
                sub_entry["kind"] = POD_SUBRESOURCES.get(sub, (resource.kind, ()))[0]
            sub_entry["verbs"] = _subresource_verbs(sub)
            yield sub_entry


#: Pod subresources served for the kubelet and scheduler: their kind and verbs in discovery.
POD_SUBRESOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "attach": ("PodAttachOptions", ("create", "get")),
    "binding": ("Binding", ("create",)),
    "log": ("Pod", ("get",)),
    "exec": ("PodExecOptions", ("create", "get")),
    "portforward": ("PodPortForwardOptions", ("create", "get")),
}


#: Subresources whose kind is of another group: (group, version, kind); their only verb is create.
OTHER_GROUP_SUBRESOURCES: dict[str, tuple[str, str, str]] = {
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
    "eviction": ("policy", "v1", "Eviction"),
}


def _subresource_verbs(sub: str) -> list[str]:
    if sub == "finalize":
        return ["update"]
    if sub in OTHER_GROUP_SUBRESOURCES:
        return ["create"]
    if sub in POD_SUBRESOURCES:
        return list(POD_SUBRESOURCES[sub][1])
    return list(SUBRESOURCE_VERBS)


def _aggregated_entry(resource: ServedResource) -> dict[str, Any]:
    kind = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    entry: dict[str, Any] = {
        "resource": resource.plural,
        "responseKind": kind,
        "scope": "Namespaced" if resource.namespaced else "Cluster",
        "singularResource": resource.singular or resource.kind.lower(),
        "verbs": list(resource.verbs),
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    subresources = []
    for sub in resource.subresources:
        if sub == "scale":
            response = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
        elif sub in POD_SUBRESOURCES:
            response = {"group": "", "version": "v1", "kind": POD_SUBRESOURCES[sub][0]}
        elif sub in OTHER_GROUP_SUBRESOURCES:
            group, version, kind_name = OTHER_GROUP_SUBRESOURCES[sub]
            response = {"group": group, "version": version, "kind": kind_name}
        else:
            response = kind
        verbs = _subresource_verbs(sub)
        subresources.append({"subresource": sub, "responseKind": response, "verbs": verbs})
    if subresources:
        entry["subresources"] = subresources
    return entry
