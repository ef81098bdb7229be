"""Revision bookkeeping: which ReplicaSet is new, its annotations, and old-set cleanup.

Mirrors ``deploymentutil.SetNewReplicaSetAnnotations``, ``SetReplicasAnnotations``,
``MaxRevision``, ``FindNewReplicaSet`` and ``cleanupDeployment``. A rollback reuses the old
ReplicaSet whose template matches: it takes the next revision number and keeps its earlier
numbers in ``deployment.kubernetes.io/revision-history``.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from setpoint.cluster.controllers.deployment.replica_sets import (
    REVISION_ANNOTATION,
    by_creation,
    created_at,
    equal_ignore_hash,
    revision_of,
    spec_replicas,
    status_replicas,
)
from setpoint.cluster.controllers.deployment.rollout_arithmetic import (
    MAX_REPLICAS_ANNOTATION,
    deployment_replicas,
    max_surge,
)

__all__ = [
    "DESIRED_REPLICAS_ANNOTATION",
    "MAX_REVISION_HISTORY_CHARS",
    "REVISION_HISTORY_ANNOTATION",
    "find_new_replica_set",
    "history_to_delete",
    "max_revision",
    "set_new_replica_set_annotations",
    "set_replicas_annotations",
]

DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
MAX_REVISION_HISTORY_CHARS = 2000

_NOT_COPIED = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
        DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION,
        "deprecated.deployment.rollback.to",
    }
)


def max_revision(sets: Sequence[Mapping[str, Any]]) -> int:
    """``MaxRevision``: the highest revision among ``sets`` (0 when none)."""
    return max((revision_of(rs) for rs in sets), default=0)


def find_new_replica_set(
    deployment: Mapping[str, Any], sets: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """``FindNewReplicaSet``: the oldest set whose template equals the Deployment's."""
    template = (deployment.get("spec") or {}).get("template")
    for rs in by_creation(sets):
        if equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            return rs
    return None


def _annotations(obj: MutableMapping[str, Any]) -> dict[str, str]:
    metadata = obj.setdefault("metadata", {})
    annotations: dict[str, str] | None = metadata.get("annotations")
    if annotations is None:
        annotations = metadata["annotations"] = {}
    return annotations


def set_replicas_annotations(rs: MutableMapping[str, Any], desired: int, max_replicas: int) -> bool:
    """Record the Deployment's size and size + surge on ``rs``; True when something changed."""
    annotations = _annotations(rs)
    changed = False
    for key, value in (
        (DESIRED_REPLICAS_ANNOTATION, desired),
        (MAX_REPLICAS_ANNOTATION, max_replicas),
    ):
        if annotations.get(key) != str(value):
            annotations[key] = str(value)
            changed = True
    return changed


def set_new_replica_set_annotations(
    deployment: Mapping[str, Any], rs: MutableMapping[str, Any], new_revision: int, exists: bool
) -> bool:
    """Copy the Deployment's annotations to the new set and give it ``new_revision``.

    When the set already had a lower revision (a rollback), that number joins its revision
    history, trimmed to :data:`MAX_REVISION_HISTORY_CHARS`. Returns True when ``rs`` changed.
    """
    annotations = _annotations(rs)
    changed = False
    for key, value in ((deployment.get("metadata") or {}).get("annotations") or {}).items():
        if key in _NOT_COPIED or annotations.get(key) == value:
            continue
        annotations[key] = value
        changed = True
    had_revision = REVISION_ANNOTATION in annotations
    old_text = annotations.get(REVISION_ANNOTATION, "")
    try:
        old_revision = int(old_text) if old_text else 0
    except ValueError:
        return changed
    if old_revision < new_revision:
        annotations[REVISION_ANNOTATION] = str(new_revision)
        changed = True
        if had_revision:
            history = annotations.get(REVISION_HISTORY_ANNOTATION, "")
            if not history:
                annotations[REVISION_HISTORY_ANNOTATION] = old_text
            else:
                entries = history.split(",")
                total = len(history) + len(old_text) + 1
                start = 0
                while total > MAX_REVISION_HISTORY_CHARS and start < len(entries):
                    total -= len(entries[start]) + 1
                    start += 1
                if total <= MAX_REVISION_HISTORY_CHARS:
                    annotations[REVISION_HISTORY_ANNOTATION] = ",".join(
                        [*entries[start:], old_text]
                    )
    if not exists:
        replicas = deployment_replicas(deployment)
        if set_replicas_annotations(rs, replicas, replicas + max_surge(deployment)):
            changed = True
    return changed


def history_to_delete(
    deployment: Mapping[str, Any], old_sets: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """``cleanupDeployment``: old sets beyond ``revisionHistoryLimit``, lowest revision first.

    Only sets that are fully scaled down, observed and not already being deleted qualify.
    """
    limit = (deployment.get("spec") or {}).get("revisionHistoryLimit", 10)
    if limit is None:
        return []
    alive = [rs for rs in old_sets if not (rs.get("metadata") or {}).get("deletionTimestamp")]
    surplus = len(alive) - int(limit)
    if surplus <= 0:
        return []
    ordered = sorted(alive, key=lambda rs: (revision_of(rs), created_at(rs)))
    result = []
    for rs in ordered[:surplus]:
        generation = int((rs.get("metadata") or {}).get("generation") or 0)
        observed = int((rs.get("status") or {}).get("observedGeneration") or 0)
        if status_replicas(rs) != 0 or spec_replicas(rs) != 0 or generation > observed:
            continue
        result.append(rs)
    return result
