"""``POST pods/{name}/eviction``: delete a pod unless its PodDisruptionBudget forbids it.

What ``kubectl drain`` and cluster autoscalers call instead of DELETE, as kube-apiserver's
``EvictionREST`` (``pkg/registry/core/pod/storage/eviction.go``) does it:

- A pod that is already terminal (``Succeeded``/``Failed``), still ``Pending``, or already
  being deleted is deleted at once: evicting it disrupts nothing.
- Otherwise the PodDisruptionBudgets of its namespace whose selector matches its labels are
  found (a missing or empty selector matches nothing here). More than one: a ``500`` Status
  (upstream does not support it). One: when ``status.disruptionsAllowed`` is 0 the answer is
  ``429 TooManyRequests`` "Cannot evict pod as it would violate the pod's disruption budget."
  with a ``DisruptionBudget`` cause; a budget whose status is older than its spec
  (``observedGeneration < generation``) gets a 429 with ``Retry-After: 10``. When it allows a
  disruption, ``disruptionsAllowed`` is decremented and the pod recorded in
  ``status.disruptedPods`` (the disruption controller does not count it as healthy while it is
  going away) before the pod is deleted.
- A pod that is not ready does not take from the budget: it is deleted when the budget is met
  anyway (``currentHealthy >= desiredHealthy > 0``) or the budget says
  ``unhealthyPodEvictionPolicy: AlwaysAllow``, with a resourceVersion precondition so that it
  cannot have become ready meanwhile (if it did: 429).
- Before the delete, the pod gets the ``DisruptionTarget`` condition (reason
  ``EvictionByEvictionAPI``); the delete uses the Eviction's ``deleteOptions`` (grace period,
  preconditions, dry run). The answer is ``201`` with a ``Success`` Status.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, Final

from setpoint.api import status as api_status
from setpoint.api.conditions import find_status_condition, set_condition
from setpoint.api.selectors import LabelSelector, SelectorError
from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.registry.object_operations import (
    DeleteOptions,
    ObjectOperations,
    Result,
    WriteOptions,
)
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.server_clock import server_time
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.apiserver.storage.codec import encode_json

SUCCESS_BODY: Final = encode_json(
    {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
)
#: Upstream ``MaxDisruptedPodSize``: evictions approved but not yet seen by the controller.
MAX_DISRUPTED_PODS: Final = 2000
#: Conflicting writes retried before giving up (upstream ``EvictionsRetry.Steps``).
RETRIES: Final = 20
VIOLATION_MESSAGE: Final = "Cannot evict pod as it would violate the pod's disruption budget."
DISRUPTION_BUDGET_CAUSE: Final = "DisruptionBudget"
DISRUPTION_ALLOWED: Final = "DisruptionAllowed"
DISRUPTION_TARGET: Final = "DisruptionTarget"


class _Conflict(Exception):
    """A write lost a race: read again and retry."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(server_time()))


def _too_many_requests(message: str, cause: str, retry_after: int = 0) -> APIError:
    details: dict[str, Any] = {
        "causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}],
    }
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return APIError(429, StatusReason.TOO_MANY_REQUESTS, message, details=details)


def _still_processing(pdb_name: str) -> APIError:
    return _too_many_requests(
        VIOLATION_MESSAGE,
        f"The disruption budget {pdb_name} is still being processed by the server.",
        retry_after=10,
    )


def _pdb_forbidden(name: str, why: str) -> APIError:
    return status_errors.forbidden("policy", "poddisruptionbudget", name, why)


def _ready(pod: dict[str, Any]) -> bool:
    condition = find_status_condition(pod, "Ready")
    return condition is not None and condition.get("status") == "True"


def _can_ignore_budget(pod: dict[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    deleting = bool(pod["metadata"].get("deletionTimestamp"))
    return phase in ("Succeeded", "Failed", "Pending") or deleting


def _enforce_resource_version(pod: dict[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def budgets_selecting(budgets: list[dict[str, Any]], pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The budgets whose selector matches ``pod`` (a missing or empty selector matches none,
    an invalid one is skipped)."""
    labels = pod["metadata"].get("labels") or {}
    matching = []
    for budget in budgets:
        raw = (budget.get("spec") or {}).get("selector")
        if not raw or not (raw.get("matchLabels") or raw.get("matchExpressions")):
            continue
        try:
            selector = LabelSelector.from_dict(raw)
        except SelectorError:
            continue
        if selector.matches(labels):
            matching.append(budget)
    return matching


def _delete_options(eviction: dict[str, Any], query_dry_run: bool) -> DeleteOptions:
    raw = eviction.get("deleteOptions")
    if raw is not None and not isinstance(raw, dict):
        raise status_errors.bad_request("deleteOptions must be an object")
    raw = raw or {}
    options = DeleteOptions()
    grace = raw.get("gracePeriodSeconds")
    if grace is not None:
        if not isinstance(grace, int) or isinstance(grace, bool):
            raise status_errors.bad_request("deleteOptions.gracePeriodSeconds must be an integer")
        options.grace_period_seconds = grace
    if raw.get("propagationPolicy"):
        options.propagation_policy = str(raw["propagationPolicy"])
    if isinstance(raw.get("orphanDependents"), bool):
        options.orphan_dependents = raw["orphanDependents"]
    preconditions = raw.get("preconditions")
    if isinstance(preconditions, dict):
        if preconditions.get("uid"):
            options.precondition_uid = str(preconditions["uid"])
        if preconditions.get("resourceVersion"):
            options.precondition_resource_version = str(preconditions["resourceVersion"])
    dry_run = raw.get("dryRun") or []
    if not isinstance(dry_run, list) or any(value != "All" for value in dry_run):
        raise status_errors.bad_request('deleteOptions.dryRun: supported values: "All"')
    # Upstream refuses differing dry-run options in the query and the body; "All" is the only
    # value either may hold, so either one asks for a dry run.
    options.dry_run = bool(dry_run) or query_dry_run
    return options


class PodEviction:
    """Serves one eviction (see the module docstring); ``budgets()`` is the PDB resource."""

    def __init__(
        self,
        operations: ObjectOperations,
        pods: ServedResource,
        budgets: Callable[[], ServedResource | None],
        user_agent: str,
    ) -> None:
        self._ops = operations
        self._pods = pods
        self._budgets = budgets
        self._user_agent = user_agent

    async def evict(
        self, namespace: str, name: str, eviction: dict[str, Any], query_dry_run: bool
    ) -> Result:
        """Evict pod ``namespace/name`` as ``eviction`` asks."""
        body_name = (eviction.get("metadata") or {}).get("name")
        if body_name != name:
            raise status_errors.bad_request("name in URL does not match name in Eviction object")
        options = _delete_options(eviction, query_dry_run)
        user_precondition = options.precondition_resource_version is not None
        for _ in range(RETRIES):
            pod = decode(self._ops.get_record(self._pods, namespace, name).value)
            if not _can_ignore_budget(pod):
                break
            delete = options
            if _enforce_resource_version(pod) and not user_precondition:
                delete = _with_resource_version(options, pod)
            try:
                await self._mark_and_delete(namespace, name, delete)
            except _Conflict:
                if user_precondition:
                    raise _conflict(name) from None
                continue
            return Result(201, SUCCESS_BODY)
        else:
            raise _conflict(name)
        budgets = budgets_selecting(self._namespace_budgets(namespace), pod)
        if len(budgets) > 1:
            status = {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                "subresource does not support.",
                "code": 500,
            }
            return Result(500, encode_json(status))
        delete = options
        unready_delete = False
        if budgets:
            budget = budgets[0]
            if not _ready(pod) and _unhealthy_may_go(budget):
                unready_delete = True
                delete = _with_resource_version(options, pod)
            else:
                await self._take_from_budget(namespace, name, budget, options.dry_run)
        try:
            await self._mark_and_delete(namespace, name, delete)
        except _Conflict:
            if unready_delete and not user_precondition:
                # It may have become ready since: let the client come back.
                raise _still_processing(budgets[0]["metadata"]["name"]) from None
            raise _conflict(name) from None
        return Result(201, SUCCESS_BODY)

    def _namespace_budgets(self, namespace: str) -> list[dict[str, Any]]:
        served = self._budgets()
        if served is None:
            return []
        records = self._ops.storage.list(served.storage_prefix(namespace))
        return [decode(record.value) for record in records]

    async def _take_from_budget(
        self, namespace: str, pod_name: str, budget: dict[str, Any], dry_run: bool
    ) -> None:
        served = self._budgets()
        assert served is not None  # a budget was found through it
        budget_name = budget["metadata"]["name"]
        for attempt in range(RETRIES):
            if attempt:
                record = self._ops.storage.get(served.storage_key(namespace, budget_name))
                if record is None:
                    return  # gone meanwhile: nothing guards the pod any more
                budget = decode(record.value)
            status = budget.setdefault("status", {})
            if int(status.get("observedGeneration") or 0) < int(
                budget["metadata"].get("generation") or 0
            ):
                raise _still_processing(budget_name)
            allowed = int(status.get("disruptionsAllowed") or 0)
            if allowed < 0:
                raise _pdb_forbidden(budget_name, "pdb disruptions allowed is negative")
            disrupted = status.get("disruptedPods") or {}
            if len(disrupted) > MAX_DISRUPTED_PODS:
                raise _pdb_forbidden(
                    budget_name,
                    "DisruptedPods map too big - too many evictions not confirmed by PDB "
                    "controller",
                )
            if allowed == 0:
                raise _too_many_requests(
                    VIOLATION_MESSAGE,
                    f"The disruption budget {budget_name} needs "
                    f"{int(status.get('desiredHealthy') or 0)} healthy pods and has "
                    f"{int(status.get('currentHealthy') or 0)} currently",
                )
            status["disruptionsAllowed"] = allowed - 1
            if allowed - 1 == 0:
                set_disruption_allowed_condition(budget)
            if dry_run:
                return
            status["disruptedPods"] = {**disrupted, pod_name: _now()}
            try:
                await self._ops.update(
                    served, namespace, budget_name, budget, self._write_options(), "status"
                )
            except APIError as error:
                if error.code == 409:
                    continue
                raise
            return
        raise APIError.from_status(
            api_status.timeout(
                f'couldn\'t update PodDisruptionBudget "{budget_name}" due to conflicts',
                retry_after=10,
            )
        )

    async def _mark_and_delete(self, namespace: str, name: str, options: DeleteOptions) -> None:
        """Give the pod the ``DisruptionTarget`` condition, then delete it; :class:`_Conflict`
        when either write loses a race."""
        if not options.dry_run:
            record = self._ops.get_record(self._pods, namespace, name)
            pod = decode(record.value)
            expected = options.precondition_resource_version
            if expected is not None and expected != pod["metadata"].get("resourceVersion"):
                raise _Conflict
            status = pod.setdefault("status", {})
            conditions = [
                c for c in status.get("conditions") or [] if c.get("type") != DISRUPTION_TARGET
            ]
            conditions.append(
                {
                    "type": DISRUPTION_TARGET,
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": _now(),
                    "reason": "EvictionByEvictionAPI",
                    "message": "Eviction API: evicting",
                }
            )
            status["conditions"] = conditions
            try:
                result = await self._ops.update(
                    self._pods, namespace, name, pod, self._write_options(), "status"
                )
            except APIError as error:
                if error.code == 409:
                    raise _Conflict from None
                raise
            if expected is not None:
                # Our own write moved the version on; the precondition was checked above.
                written = decode(result.body)
                options = dataclasses.replace(
                    options, precondition_resource_version=written["metadata"]["resourceVersion"]
                )
        try:
            await self._ops.delete(self._pods, namespace, name, options)
        except APIError as error:
            if error.code == 409:
                raise _Conflict from None
            raise

    def _write_options(self) -> WriteOptions:
        return WriteOptions(user_agent=self._user_agent)


def _unhealthy_may_go(budget: dict[str, Any]) -> bool:
    spec = budget.get("spec") or {}
    if spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
        return True
    status = budget.get("status") or {}
    desired = int(status.get("desiredHealthy") or 0)
    return int(status.get("currentHealthy") or 0) >= desired > 0


def set_disruption_allowed_condition(budget: dict[str, Any]) -> None:
    """Set the ``DisruptionAllowed`` condition from ``status.disruptionsAllowed``
    (``SufficientPods`` / ``InsufficientPods``), as upstream's pdb helper."""
    status = budget.setdefault("status", {})
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    set_budget_condition(
        status, "True" if allowed else "False", "SufficientPods" if allowed else "InsufficientPods"
    )


def set_budget_condition(
    status: dict[str, Any], value: str, reason: str, message: str = ""
) -> None:
    """``meta.SetStatusCondition`` of ``DisruptionAllowed`` in ``status`` (for the budget's
    ``observedGeneration``), on copies of the conditions: they may be a cache's."""
    conditions = [dict(condition) for condition in status.get("conditions") or []]
    set_condition(
        conditions,
        type=DISRUPTION_ALLOWED,
        status=value,
        reason=reason,
        message=message,
        observed_generation=int(status.get("observedGeneration") or 0),
    )
    status["conditions"] = conditions


def _with_resource_version(options: DeleteOptions, pod: dict[str, Any]) -> DeleteOptions:
    return dataclasses.replace(
        options, precondition_resource_version=pod["metadata"].get("resourceVersion")
    )


def _conflict(name: str) -> APIError:
    return status_errors.conflict("", "pods", name, status_errors.OBJECT_MODIFIED)
