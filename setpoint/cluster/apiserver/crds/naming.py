"""The naming and establishing controllers: ``status.acceptedNames`` and the ``NamesAccepted``,
``Established`` and ``Terminating`` conditions (``controller/status/naming_controller.go``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.cluster.apiserver.crds.definition import (
    as_list,
    as_mapping,
    as_text,
    as_texts,
    names_of,
    spec_of,
)

# Condition types and reasons (apiextensions v1 and the naming/establishing controllers).
NAMES_ACCEPTED: Final = "NamesAccepted"
ESTABLISHED: Final = "Established"
TERMINATING: Final = "Terminating"


def _condition(kind: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def find_condition(crd: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    """The status condition of type ``kind``, if any."""
    status = crd.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, Mapping) and condition.get("type") == kind:
            return condition
    return None


def set_condition(
    conditions: list[dict[str, Any]], condition: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``conditions`` with ``condition`` replacing the one of its type (``SetCRDCondition``).

    The old ``lastTransitionTime`` is kept when the status does not change.
    """
    result: list[dict[str, Any]] = []
    replaced = False
    for existing in conditions:
        if existing.get("type") == condition.get("type"):
            merged = dict(condition)
            if existing.get("status") == condition.get("status"):
                merged["lastTransitionTime"] = existing.get("lastTransitionTime")
            result.append(merged)
            replaced = True
        else:
            result.append(existing)
    if not replaced:
        result.append(dict(condition))
    return result


def _used_names(
    existing: Iterable[Mapping[str, Any]], group: str, own: str
) -> tuple[set[str], set[str]]:
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in existing:
        metadata = as_mapping(other.get("metadata"))
        if metadata.get("name") == own or spec_of(other).get("group") != group:
            continue
        status = as_mapping(other.get("status"))
        accepted = status.get("acceptedNames") if isinstance(status, Mapping) else None
        if not isinstance(accepted, Mapping):
            continue
        resources.update(as_text(accepted.get(k)) for k in ("plural", "singular"))
        resources.update(as_texts(accepted.get("shortNames")))
        kinds.update(as_text(accepted.get(k)) for k in ("kind", "listKind"))
    return resources, kinds


def _conflict(requested: str, accepted: str, used: set[str]) -> str | None:
    """``equalToAcceptedOrFresh``: the conflict message, or None if the name may be taken."""
    if requested == accepted or requested not in used:
        return None
    return f"{fe.go_quote(requested)} is already in use"


def accept_names(
    crd: Mapping[str, Any], existing_crds: Iterable[Mapping[str, Any]], *, now: str = ""
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Compute ``status.acceptedNames`` and the conditions after the naming controller ran.

    ``existing_crds`` are the other stored CRDs (the CRD itself is skipped by name). Names
    already accepted by another CRD of the same group conflict. Without conflicts the result is
    ``NamesAccepted=True/NoConflicts`` and ``Established=True/InitialNamesAccepted`` (the
    establishing controller's step, done synchronously); with one, ``NamesAccepted=False`` with
    the conflict reason and ``Established=False/NotAccepted`` unless it was established before.
    ``now`` is the RFC 3339 time for ``lastTransitionTime``.
    """
    metadata = as_mapping(crd.get("metadata"))
    own = as_text(metadata.get("name")) if isinstance(metadata, Mapping) else ""
    resources, kinds = _used_names(existing_crds, as_text(spec_of(crd).get("group")), own)
    requested = names_of(crd)
    status = as_mapping(crd.get("status"))
    previous = status.get("acceptedNames") if isinstance(status, Mapping) else None
    accepted_before: Mapping[str, Any] = previous if isinstance(previous, Mapping) else {}
    names: dict[str, Any] = dict(accepted_before)
    reason, message = "", ""

    def check(field: str, used: set[str], conflict_reason: str) -> None:
        nonlocal reason, message
        wanted = as_text(requested.get(field))
        problem = _conflict(wanted, as_text(accepted_before.get(field)), used)
        if problem is not None:
            reason, message = conflict_reason, problem
        elif wanted:
            names[field] = wanted

    check("plural", resources, "PluralConflict")
    check("singular", resources, "SingularConflict")
    wanted_short = as_texts(requested.get("shortNames"))
    if wanted_short != as_texts(accepted_before.get("shortNames")):
        known = set(as_texts(accepted_before.get("shortNames")))
        problems = [
            problem
            for short in wanted_short
            if short not in known and (problem := _conflict(short, "", resources)) is not None
        ]
        if problems:
            reason = "ShortNamesConflict"
            message = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        elif wanted_short:
            names["shortNames"] = wanted_short
        else:
            names.pop("shortNames", None)
    check("kind", kinds, "KindConflict")
    check("listKind", kinds, "ListKindConflict")
    if as_texts(requested.get("categories")):
        names["categories"] = as_texts(requested.get("categories"))
    else:
        names.pop("categories", None)

    conditions = [dict(c) for c in as_list(status.get("conditions")) if isinstance(c, Mapping)]
    if reason:
        accepted_condition = _condition(NAMES_ACCEPTED, "False", reason, message, now)
    else:
        accepted_condition = _condition(
            NAMES_ACCEPTED, "True", "NoConflicts", "no conflicts found", now
        )
    conditions = set_condition(conditions, accepted_condition)
    established_before = find_condition(crd, ESTABLISHED)
    if not reason:
        established = _condition(
            ESTABLISHED, "True", "InitialNamesAccepted", "the initial names have been accepted", now
        )
        if established_before is None or established_before.get("status") != "True":
            conditions = set_condition(conditions, established)
    elif established_before is None:
        conditions = set_condition(
            conditions,
            _condition(ESTABLISHED, "False", "NotAccepted", "not all names are accepted", now),
        )
    return names, conditions


def terminating_condition(now: str = "") -> dict[str, Any]:
    """The condition a CRD gets while its custom resources are being deleted."""
    return _condition(
        TERMINATING,
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
        now,
    )
