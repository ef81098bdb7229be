"""Options of write requests: patch types, delete propagation and preconditions, validation."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "FieldValidation",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "delete_options_body",
    "write_params",
]


class PatchType(StrEnum):
    """Patch formats, by content type. Strings ``"merge"``, ``"json"``... are accepted too."""

    MERGE = "application/merge-patch+json"  # RFC 7386: dicts merge, null deletes, lists replace
    JSON = "application/json-patch+json"  # RFC 6902: a list of operations
    STRATEGIC = "application/strategic-merge-patch+json"  # built-in kinds only
    APPLY = "application/apply-patch+yaml"  # server-side apply (the body may be JSON)

    @classmethod
    def parse(cls, value: PatchType | str) -> PatchType:
        """Accept a member, a content type, or a short name (merge, json, strategic, apply)."""
        if isinstance(value, PatchType):
            return value
        short = {
            "merge": cls.MERGE,
            "json": cls.JSON,
            "strategic": cls.STRATEGIC,
            "apply": cls.APPLY,
        }
        if value.lower() in short:
            return short[value.lower()]
        try:
            return cls(value)
        except ValueError:
            raise ValueError(
                f"patch_type: {value!r} is not a patch type; use merge, json, strategic or apply"
            ) from None


class PropagationPolicy(StrEnum):
    """What happens to dependents of a deleted object (garbage collection)."""

    BACKGROUND = "Background"
    FOREGROUND = "Foreground"
    ORPHAN = "Orphan"

    @classmethod
    def _missing_(cls, value: object) -> PropagationPolicy | None:
        # Accept "background", "FOREGROUND"...: the API's spelling is easy to get wrong.
        if isinstance(value, str):
            for member in cls:
                if member.value.lower() == value.lower():
                    return member
        return None


class FieldValidation(StrEnum):
    """How the server treats unknown or duplicate fields in a write."""

    STRICT = "Strict"
    WARN = "Warn"
    IGNORE = "Ignore"

    @classmethod
    def _missing_(cls, value: object) -> FieldValidation | None:
        if isinstance(value, str):
            for member in cls:
                if member.value.lower() == value.lower():
                    return member
        return None


@dataclass(frozen=True, slots=True)
class Preconditions:
    """Delete only if the object still has this uid and/or resourceVersion (else 409)."""

    uid: str | None = None
    resource_version: str | None = None


def write_params(
    *,
    dry_run: bool = False,
    field_manager: str | None = None,
    field_validation: FieldValidation | str | None = None,
    force: bool | None = None,
) -> dict[str, str]:
    """Query parameters shared by create, update, patch and apply."""
    params: dict[str, str] = {}
    if dry_run:
        params["dryRun"] = "All"
    if field_manager:
        params["fieldManager"] = field_manager
    if field_validation is not None:
        params["fieldValidation"] = str(FieldValidation(field_validation))
    if force is not None:
        params["force"] = "true" if force else "false"
    return params


def delete_options_body(
    *,
    propagation_policy: PropagationPolicy | str | None = None,
    grace_period_seconds: int | None = None,
    preconditions: Preconditions | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """A ``DeleteOptions`` object for the request body."""
    body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if propagation_policy is not None:
        body["propagationPolicy"] = str(PropagationPolicy(propagation_policy))
    if grace_period_seconds is not None:
        if grace_period_seconds < 0:
            raise ValueError(f"grace_period_seconds must be >= 0, got {grace_period_seconds}")
        body["gracePeriodSeconds"] = int(grace_period_seconds)
    if preconditions is not None:
        pre: dict[str, str] = {}
        if preconditions.uid:
            pre["uid"] = preconditions.uid
        if preconditions.resource_version:
            pre["resourceVersion"] = preconditions.resource_version
        if pre:
            body["preconditions"] = pre
    if dry_run:
        body["dryRun"] = ["All"]
    return body
