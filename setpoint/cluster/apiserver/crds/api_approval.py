"""The API-approval rule for protected groups (``*.k8s.io``, ``*.kubernetes.io``): their CRDs
must carry the ``api-approved.kubernetes.io`` annotation (KEP 1111).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.crds.definition import as_mapping, as_text, spec_of

API_APPROVAL_ANNOTATION: Final = "api-approved.kubernetes.io"

_PROTECTED_GROUP_SUFFIXES: Final = (".k8s.io", ".kubernetes.io")

_APPROVAL_DOC: Final = "https://github.com/kubernetes/enhancements/pull/1111"


def _is_protected_group(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith(_PROTECTED_GROUP_SUFFIXES)


def _approval_state(crd: Mapping[str, Any]) -> tuple[str, str]:
    metadata = as_mapping(crd.get("metadata"))
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    value = annotations.get(API_APPROVAL_ANNOTATION) if isinstance(annotations, Mapping) else None
    if value is None:
        reason = (
            "protected groups must have approval annotation "
            f"{fe.go_quote(API_APPROVAL_ANNOTATION)}, see {_APPROVAL_DOC}"
        )
        return "missing", reason
    text = str(value)
    if text.startswith("unapproved"):
        return "bypassed", ""
    if text.startswith(("http://", "https://")):
        return "approved", ""
    reason = (
        f"protected groups must have approval annotation {fe.go_quote(API_APPROVAL_ANNOTATION)} "
        f'with either a URL or a reason starting with "unapproved", see {_APPROVAL_DOC}'
    )
    return "invalid", reason


def api_approval_errors(crd: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    if not _is_protected_group(as_text(spec_of(crd).get("group"))):
        return []
    state, reason = _approval_state(crd)
    if old is not None and _approval_state(old)[0] == state:
        return []
    path = f"metadata.annotations[{API_APPROVAL_ANNOTATION}]"
    if state == "missing":
        return [fe.required(path, reason)]
    if state == "invalid":
        metadata = crd.get("metadata") or {}
        return [
            fe.invalid(
                path, str(metadata.get("annotations", {}).get(API_APPROVAL_ANNOTATION)), reason
            )
        ]
    return []
