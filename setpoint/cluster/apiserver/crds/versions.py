"""A CRD's versions: which is stored and served, their schemas and subresources, the order
discovery lists them in (``version.CompareKubeAwareVersionStrings``) and deprecation warnings.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from setpoint.cluster.apiserver.crds.definition import as_text, names_of, spec_of, versions_of
from setpoint.cluster.apiserver.schema.structural import CompiledSchema, compile_schema


def storage_version(crd: Mapping[str, Any]) -> str | None:
    """The name of the version marked ``storage: true`` (the first one, if several)."""
    for version in versions_of(crd):
        if version.get("storage"):
            name = version.get("name")
            return name if isinstance(name, str) else None
    return None


def served_versions(crd: Mapping[str, Any]) -> list[str]:
    """Names of the served versions, in spec order."""
    return [str(v.get("name")) for v in versions_of(crd) if v.get("served")]


def find_version(crd: Mapping[str, Any], version: str) -> Mapping[str, Any] | None:
    """The ``spec.versions`` entry called ``version``."""
    for entry in versions_of(crd):
        if entry.get("name") == version:
            return entry
    return None


def version_schema(crd: Mapping[str, Any], version: str) -> dict[str, Any] | None:
    """The ``openAPIV3Schema`` of ``version`` (None if the version or schema is missing)."""
    entry = find_version(crd, version)
    if entry is None:
        return None
    schema = entry.get("schema")
    if not isinstance(schema, Mapping):
        return None
    result = schema.get("openAPIV3Schema")
    return dict(result) if isinstance(result, Mapping) else None


def compiled_schema(crd: Mapping[str, Any], version: str) -> CompiledSchema:
    """The compiled schema of ``version``, cached across calls (compiled once per schema)."""
    return compile_schema(version_schema(crd, version))


def version_subresources(crd: Mapping[str, Any], version: str) -> Mapping[str, Any]:
    """``subresources`` of ``version`` (``{}`` if none)."""
    entry = find_version(crd, version)
    subresources = entry.get("subresources") if entry is not None else None
    return subresources if isinstance(subresources, Mapping) else {}


def has_status_subresource(crd: Mapping[str, Any], version: str) -> bool:
    """Whether ``version`` has the ``status`` subresource."""
    return version_subresources(crd, version).get("status") is not None


def scale_subresource(crd: Mapping[str, Any], version: str) -> Mapping[str, Any] | None:
    """The ``scale`` subresource spec (specReplicasPath, ...) of ``version``, if enabled."""
    scale = version_subresources(crd, version).get("scale")
    return scale if isinstance(scale, Mapping) else None


def is_namespaced(crd: Mapping[str, Any]) -> bool:
    """Whether the custom resources are namespaced."""
    return spec_of(crd).get("scope") == "Namespaced"


_KUBE_VERSION: Final = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")

_VERSION_STABILITY: Final = {"alpha": 0, "beta": 1, None: 2}


def compare_kube_versions(a: str, b: str) -> int:
    """``version.CompareKubeAwareVersionStrings``: > 0 if ``a`` has the higher priority.

    ``v2`` > ``v1`` > ``v1beta2`` > ``v1beta1`` > ``v1alpha1`` > non-Kubernetes names, which
    compare among themselves in reverse alphabetical order (as upstream does).
    """
    if a == b:
        return 0
    match_a, match_b = _KUBE_VERSION.match(a), _KUBE_VERSION.match(b)
    if match_a is None and match_b is None:
        return (b > a) - (b < a)
    if match_a is None:
        return -1
    if match_b is None:
        return 1
    stability_a, stability_b = _VERSION_STABILITY[match_a[2]], _VERSION_STABILITY[match_b[2]]
    if stability_a != stability_b:
        return stability_a - stability_b
    if int(match_a[1]) != int(match_b[1]):
        return int(match_a[1]) - int(match_b[1])
    return int(match_a[3] or 0) - int(match_b[3] or 0)


def versions_by_priority(names: Iterable[str]) -> list[str]:
    """Version names, highest priority first (discovery lists the preferred version first)."""
    return sorted(names, key=functools.cmp_to_key(compare_kube_versions), reverse=True)


def deprecation_warning(crd: Mapping[str, Any], version: str) -> str | None:
    """The ``Warning`` header text for requests to a deprecated version, or None.

    The version's ``deprecationWarning`` if set, else upstream's default, e.g.
    ``example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget``.
    """
    entry = find_version(crd, version)
    if entry is None or not entry.get("deprecated"):
        return None
    custom = entry.get("deprecationWarning")
    if isinstance(custom, str):
        return custom
    group = as_text(spec_of(crd).get("group"))
    kind = as_text(names_of(crd).get("kind"))
    message = f"{group}/{version} {kind} is deprecated"
    newer = []
    for other in versions_of(crd):
        name = as_text(other.get("name"))
        newer_and_stable = not other.get("deprecated") and compare_kube_versions(version, name) < 0
        if other.get("served") and newer_and_stable:
            newer.append(name)
    if newer:
        message += f"; use {group}/{versions_by_priority(newer)[0]} {kind}"
    return message
