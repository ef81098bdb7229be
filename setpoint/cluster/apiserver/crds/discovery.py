"""How a CRD's resources appear to clients: discovery entries and table printer columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from setpoint.api.gvk import ResourceInfo
from setpoint.cluster.apiserver.crds.definition import (
    as_list,
    as_mapping,
    as_text,
    as_texts,
    names_of,
    spec_of,
    versions_of,
)
from setpoint.cluster.apiserver.crds.versions import (
    find_version,
    is_namespaced,
    version_subresources,
)
from setpoint.cluster.apiserver.registry.served_resources import (
    CUSTOM_RESOURCE_VERBS,
    TERMINATING_CUSTOM_RESOURCE_VERBS,
)

# The column every custom resource table gets when its version declares none.
DEFAULT_PRINTER_COLUMNS: Final = (
    {
        "name": "Age",
        "type": "date",
        "description": "CreationTimestamp is a timestamp representing the server time when this "
        "object was created.",
        "jsonPath": ".metadata.creationTimestamp",
    },
)


def printer_columns(crd: Mapping[str, Any], version: str) -> list[dict[str, Any]]:
    """The ``additionalPrinterColumns`` of ``version``, or the default Age column if none.

    Tables start with a Name column before these (``tableconvertor``).
    """
    entry = find_version(crd, version)
    columns = [dict(c) for c in as_list(entry.get("additionalPrinterColumns") if entry else None)]
    return columns or [dict(c) for c in DEFAULT_PRINTER_COLUMNS]


def resource_infos(crd: Mapping[str, Any], *, terminating: bool = False) -> list[ResourceInfo]:
    """One :class:`ResourceInfo` per served version, as discovery shows the CRD's resources.

    Names come from ``status.acceptedNames`` once the CRD has them, else from the spec.
    """
    status = as_mapping(crd.get("status"))
    accepted = status.get("acceptedNames") if isinstance(status, Mapping) else None
    names = accepted if isinstance(accepted, Mapping) and accepted.get("plural") else names_of(crd)
    group = as_text(spec_of(crd).get("group"))
    kind = as_text(names.get("kind"))
    infos = []
    for entry in versions_of(crd):
        if not entry.get("served"):
            continue
        version = as_text(entry.get("name"))
        subresources = version_subresources(crd, version)
        infos.append(
            ResourceInfo(
                group=group,
                version=version,
                kind=kind,
                resource=as_text(names.get("plural")),
                namespaced=is_namespaced(crd),
                list_kind=str(names.get("listKind") or f"{kind}List"),
                singular=str(names.get("singular") or kind.lower()),
                verbs=TERMINATING_CUSTOM_RESOURCE_VERBS if terminating else CUSTOM_RESOURCE_VERBS,
                short_names=tuple(as_texts(names.get("shortNames"))),
                categories=tuple(as_texts(names.get("categories"))),
                subresources=tuple(
                    s for s in ("status", "scale") if subresources.get(s) is not None
                ),
            )
        )
    return infos
