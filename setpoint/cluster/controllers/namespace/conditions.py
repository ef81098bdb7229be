"""The conditions of a terminating namespace (``status_condition_utils.go``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: Order as upstream writes them.
CONDITION_TYPES: Final = (
    "NamespaceDeletionDiscoveryFailure",
    "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure",
    "NamespaceContentRemaining",
    "NamespaceFinalizersRemaining",
)


def deletion_conditions(
    content_errors: list[str],
    remaining: Mapping[str, int],
    finalizers: Mapping[str, int],
) -> list[dict[str, str]]:
    """The five conditions (type, status, reason, message) for one pass over the content.

    ``remaining`` counts objects left per ``<resource>.<group>``; ``finalizers`` counts objects
    per finalizer they still carry.
    """
    conditions = [
        _condition(
            CONDITION_TYPES[0],
            False,
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        _condition(
            CONDITION_TYPES[1],
            False,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
    ]
    if content_errors:
        errors = sorted(content_errors)
        conditions.append(
            _condition(
                CONDITION_TYPES[2],
                True,
                "ContentDeletionFailed",
                f"Failed to delete all resource types, {len(errors)} remaining: "
                + ", ".join(errors),
            )
        )
    else:
        conditions.append(
            _condition(
                CONDITION_TYPES[2],
                False,
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization",
            )
        )
    if remaining:
        items = sorted(f"{gr} has {n} resource instances" for gr, n in remaining.items())
        conditions.append(
            _condition(
                CONDITION_TYPES[3],
                True,
                "SomeResourcesRemain",
                "Some resources are remaining: " + ", ".join(items),
            )
        )
    else:
        conditions.append(
            _condition(
                CONDITION_TYPES[3], False, "ContentRemoved", "All content successfully removed"
            )
        )
    if finalizers:
        items = sorted(f"{f} in {n} resource instances" for f, n in finalizers.items())
        conditions.append(
            _condition(
                CONDITION_TYPES[4],
                True,
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: " + ", ".join(items),
            )
        )
    else:
        conditions.append(
            _condition(
                CONDITION_TYPES[4],
                False,
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished",
            )
        )
    return conditions


def _condition(type_: str, failing: bool, reason: str, message: str) -> dict[str, str]:
    return {
        "type": type_,
        "status": "True" if failing else "False",
        "reason": reason,
        "message": message,
    }


def merge_conditions(
    old: list[dict[str, Any]], new: list[dict[str, str]], now: str
) -> list[dict[str, Any]]:
    """``new`` with ``lastTransitionTime`` kept from ``old`` where the status did not flip."""
    previous = {c.get("type"): c for c in old if isinstance(c, dict)}
    merged: list[dict[str, Any]] = []
    for condition in new:
        before = previous.get(condition["type"])
        stamped: dict[str, Any] = dict(condition)
        if before is not None and before.get("status") == condition["status"]:
            stamped["lastTransitionTime"] = before.get("lastTransitionTime", now)
        else:
            stamped["lastTransitionTime"] = now
        merged.append(stamped)
    others = [c for c in old if isinstance(c, dict) and c.get("type") not in CONDITION_TYPES]
    return merged + others
