"""PodDisruptionBudget status, as upstream's ``pkg/controller/disruption``."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, ClassVar, Final

from setpoint.api.selectors import LabelSelector, SelectorError
from setpoint.api.times import parse_time
from setpoint.cluster.apiserver.kinds.pod_eviction import (
    set_budget_condition,
    set_disruption_allowed_condition,
)
from setpoint.cluster.controllers.framework.controller import Controller, Watch, controller_ref
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey, key_of
from setpoint.cluster.controllers.workload_context import WriteError
from setpoint.cluster.controllers.workload_pods.pod_state import is_pod_ready

BUDGETS: Final = "policy/poddisruptionbudgets"
#: How long an approved eviction keeps its pod out of the healthy count (``DeletionTimeout``).
DELETION_TIMEOUT: Final = timedelta(minutes=2)
_PERCENT: Final = re.compile(r"^(\d+)%$")


class ExpectedCountError(Exception):
    """The pods' expected number cannot be worked out (a pod without a known controller)."""


def _selector(budget: Mapping[str, Any]) -> LabelSelector:
    """The budget's selector as the controller reads it: missing selects nothing, ``{}``
    everything, an invalid one nothing."""
    try:
        return LabelSelector.from_dict((budget.get("spec") or {}).get("selector"))
    except SelectorError:
        return LabelSelector.nothing()


def scaled(value: Any, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` rounding up; ValueError for a bad string."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _PERCENT.match(str(value))
    if match is None:
        raise ValueError(f"invalid value for IntOrString: invalid value {value!r}")
    return math.ceil(int(match.group(1)) * total / 100)


class DisruptionController(Controller):
    """Writes PodDisruptionBudget status (see the package docstring)."""

    name: ClassVar[str] = "disruption"

    def watches(self) -> list[Watch]:
        return [
            Watch(BUDGETS),
            Watch("pods", self._budgets_of_pod),
            # A controller's replica count is the denominator of percentages.
            Watch("apps/replicasets", self._budgets_in_namespace),
            Watch("apps/deployments", self._budgets_in_namespace),
            Watch("apps/statefulsets", self._budgets_in_namespace),
        ]

    def _budgets_of_pod(self, pod: Object) -> Iterable[ObjectKey]:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        for budget in self.access.list(BUDGETS, namespace):
            if _selector(budget).matches(labels):
                yield key_of(budget)

    def _budgets_in_namespace(self, obj: Object) -> Iterable[ObjectKey]:
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        return [key_of(budget) for budget in self.access.list(BUDGETS, namespace)]

    async def reconcile(self, key: ObjectKey) -> float | None:
        budget = self.access.get(BUDGETS, key.namespace, key.name)
        if budget is None:
            return None
        selector = _selector(budget)
        pods = [
            pod
            for pod in self.access.list("pods", key.namespace)
            if selector.matches((pod.get("metadata") or {}).get("labels") or {})
        ]
        if not pods:
            self.access.event(budget, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = self._expected_count(budget, pods)
        except (ExpectedCountError, ValueError) as error:
            self.access.event(
                budget,
                "Warning",
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {error}",
            )
            await self._fail_safe(budget, str(error))
            return None
        if unmanaged:
            self.access.event(
                budget,
                "Warning",
                "UnmanagedPods",
                "Pods selected by this PodDisruptionBudget (selector: "
                f"{_go_selector(budget)}) were found to be unmanaged. As a result, the status "
                "of the PDB cannot be calculated correctly, which may result in undefined "
                'behavior. To account for these pods please set ".spec.minAvailable" field of '
                "the PDB to an integer value.",
            )
        now = self.access.clock.now()
        disrupted, recheck = self._disrupted_pods(budget, pods, now)
        healthy = _count_healthy(pods, disrupted, now)
        await self._write_status(budget, healthy, desired, expected, disrupted)
        if recheck is not None:
            return max((recheck - now).total_seconds(), 0.001)
        return None

    def _expected_count(
        self, budget: Mapping[str, Any], pods: list[Mapping[str, Any]]
    ) -> tuple[int, int, list[str]]:
        """(expected pods, desired healthy, unmanaged pod names), as ``getExpectedPodCount``."""
        spec = budget.get("spec") or {}
        max_unavailable = spec.get("maxUnavailable")
        min_available = spec.get("minAvailable")
        if max_unavailable is not None:
            expected, unmanaged = self._expected_scale(pods)
            desired = max(expected - scaled(max_unavailable, expected), 0)
            return expected, desired, unmanaged
        if min_available is not None:
            if isinstance(min_available, int) and not isinstance(min_available, bool):
                return len(pods), min_available, []
            expected, unmanaged = self._expected_scale(pods)
            return expected, scaled(min_available, expected), unmanaged
        return 0, 0, []

    def _expected_scale(self, pods: list[Mapping[str, Any]]) -> tuple[int, list[str]]:
        """The sum of the replica counts of the pods' controllers (each counted once)."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            meta = pod.get("metadata") or {}
            ref = controller_ref(pod)
            if ref is None:
                unmanaged.append(meta.get("name") or "")
                continue
            if ref.get("uid") in scales:
                continue
            found = self._controller_scale(ref, meta.get("namespace") or "")
            if found is None:
                raise ExpectedCountError(f'found no controllers for pod "{meta.get("name")}"')
            uid, replicas = found
            scales[uid] = replicas
        return sum(scales.values()), unmanaged

    def _controller_scale(self, ref: Mapping[str, Any], namespace: str) -> tuple[str, int] | None:
        """(uid, spec.replicas) of the controller ``ref`` names: a ReplicaSet's Deployment
        when it has one, else the ReplicaSet, or a StatefulSet (upstream's finders)."""
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        kind = ref.get("kind")
        name = str(ref.get("name", ""))
        if group not in ("apps", "extensions"):
            return None
        if kind == "ReplicaSet":
            replica_set = self.access.get("apps/replicasets", namespace, name)
            if replica_set is None or replica_set["metadata"].get("uid") != ref.get("uid"):
                return None
            owner = controller_ref(replica_set)
            if owner is not None and owner.get("kind") == "Deployment":
                deployment = self.access.get("apps/deployments", namespace, owner.get("name", ""))
                if deployment is None or deployment["metadata"].get("uid") != owner.get("uid"):
                    return None
                return str(owner.get("uid")), _replicas(deployment)
            return str(ref.get("uid")), _replicas(replica_set)
        if kind == "StatefulSet":
            stateful_set = self.access.get("apps/statefulsets", namespace, name)
            if stateful_set is None or stateful_set["metadata"].get("uid") != ref.get("uid"):
                return None
            return str(ref.get("uid")), _replicas(stateful_set)
        return None

    def _disrupted_pods(
        self, budget: Mapping[str, Any], pods: list[Mapping[str, Any]], now: datetime
    ) -> tuple[dict[str, str], datetime | None]:
        """``buildDisruptedPodMap``: approved evictions still expected to happen, and when
        the first of them expires."""
        recorded = (budget.get("status") or {}).get("disruptedPods") or {}
        kept: dict[str, str] = {}
        recheck: datetime | None = None
        for pod in pods:
            meta = pod.get("metadata") or {}
            if meta.get("deletionTimestamp"):
                continue
            name = meta.get("name") or ""
            if name not in recorded:
                continue
            try:
                expected_deletion = parse_time(recorded[name]) + DELETION_TIMEOUT
            except (TypeError, ValueError):
                continue
            if expected_deletion < now:
                self.access.event(
                    pod,
                    "Warning",
                    "NotDeleted",
                    f"Pod was expected by PDB {budget['metadata'].get('namespace')}/"
                    f"{budget['metadata'].get('name')} to be deleted but it wasn't",
                )
                continue
            kept[name] = recorded[name]
            if recheck is None or expected_deletion < recheck:
                recheck = expected_deletion
        return kept, recheck

    async def _write_status(
        self,
        budget: Mapping[str, Any],
        healthy: int,
        desired: int,
        expected: int,
        disrupted: dict[str, str],
    ) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        status = budget.get("status") or {}
        generation = int(budget["metadata"].get("generation") or 0)
        new_status: dict[str, Any] = {
            "observedGeneration": generation,
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "conditions": list(status.get("conditions") or []),
        }
        if disrupted:
            new_status["disruptedPods"] = disrupted
        updated = {**budget, "status": new_status}
        set_disruption_allowed_condition(updated)
        if _same_status(status, updated["status"]):
            return
        try:
            await self.access.update_status(BUDGETS, updated)
        except WriteError as error:
            if error.code == 404:
                return
            raise

    async def _fail_safe(self, budget: Mapping[str, Any], message: str) -> None:
        """Allow no disruption when the status cannot be worked out (upstream's ``failSafe``)."""
        status = dict(budget.get("status") or {})
        status["disruptionsAllowed"] = 0
        set_budget_condition(status, "False", "SyncFailed", message)
        if _same_status(budget.get("status") or {}, status):
            return
        try:
            await self.access.update_status(BUDGETS, {**budget, "status": status})
        except WriteError as error:
            if error.code == 404:
                return
            raise


def _replicas(obj: Mapping[str, Any]) -> int:
    replicas = (obj.get("spec") or {}).get("replicas")
    return replicas if isinstance(replicas, int) else 1


def _count_healthy(
    pods: list[Mapping[str, Any]], disrupted: Mapping[str, str], now: datetime
) -> int:
    healthy = 0
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            continue
        since = disrupted.get(meta.get("name") or "")
        if since is not None and parse_time(since) + DELETION_TIMEOUT > now:
            continue
        if is_pod_ready(pod):
            healthy += 1
    return healthy


def _same_status(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Equal but for the conditions' ``lastTransitionTime`` (kept when the status stays)."""

    def comparable(status: Mapping[str, Any]) -> dict[str, Any]:
        conditions = [
            {k: v for k, v in c.items() if k != "lastTransitionTime"}
            for c in status.get("conditions") or []
        ]
        rest = {k: v for k, v in status.items() if k != "conditions" and v not in (None, {}, 0)}
        return {**rest, "conditions": conditions}

    return comparable(old) == comparable(new)


def _go_selector(budget: Mapping[str, Any]) -> str:
    """The selector as Go's ``%v`` prints a ``*metav1.LabelSelector`` (its generated
    ``String()``), which upstream puts in the UnmanagedPods Event."""
    selector = (budget.get("spec") or {}).get("selector") or {}
    labels = "".join(
        f"{key}: {value}," for key, value in sorted((selector.get("matchLabels") or {}).items())
    )
    expressions = "".join(
        "LabelSelectorRequirement{"
        f"Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or []
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
