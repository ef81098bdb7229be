"""Defaults kube-apiserver fills into a CRD on write (``v1/defaults.go``) and the stored-versions
bookkeeping of its status.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from setpoint.cluster.apiserver.crds.definition import as_mapping, as_text
from setpoint.cluster.apiserver.crds.versions import storage_version


def default_crd(crd: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``crd`` with the v1 defaults applied (``SetDefaults_CustomResourceDefinition``).

    ``names.singular`` = lower-cased kind, ``names.listKind`` = kind + ``List``,
    ``conversion.strategy: None``, a webhook service port of 443, and the storage version
    recorded in ``status.storedVersions`` if it is not there yet.
    """
    result: dict[str, Any] = copy.deepcopy(dict(crd))
    spec = result.setdefault("spec", {})
    if not isinstance(spec, dict):
        return result
    names = spec.setdefault("names", {})
    if isinstance(names, dict):
        kind = as_text(names.get("kind"))
        if not names.get("singular"):
            names["singular"] = kind.lower()
        if not names.get("listKind") and kind:
            names["listKind"] = kind + "List"
    conversion = spec.get("conversion")
    if conversion is None:
        spec["conversion"] = {"strategy": "None"}
    elif isinstance(conversion, dict):
        client_config = as_mapping(conversion.get("webhook")).get("clientConfig")
        if isinstance(client_config, dict):
            service = client_config.get("service")
            if isinstance(service, dict) and service.get("port") is None:
                service["port"] = 443
    record_storage_version(result)
    return result


def record_storage_version(crd: dict[str, Any]) -> None:
    """Add the storage version to ``status.storedVersions`` if missing (on create and update)."""
    storage = storage_version(crd)
    if storage is None:
        return
    status = crd.setdefault("status", {})
    if not isinstance(status, dict):
        return
    stored = status.get("storedVersions")
    if not isinstance(stored, list):
        stored = status["storedVersions"] = []
    if storage not in stored:
        stored.append(storage)
