"""The CR's status conditions, as Operator SDK's Ansible operator writes them.

With ``manageStatus`` (the default) a reconcile writes three conditions:

- before the run: ``Running`` ``True`` (reason ``Running``, "Running reconciliation"), and a
  ``Successful`` condition present is set to ``False``;
- after a successful run: ``Running`` ``True`` with reason ``Successful``, "Awaiting next
  reconciliation" and ``ansibleResult`` (``ok``, ``changed``, ``skipped``, ``failures``,
  ``completion``), ``Successful`` ``True`` ("Last reconciliation succeeded") and ``Failure``
  ``False``;
- after a failed run: ``Failure`` ``True`` (reason ``Failed``, the failed tasks' messages, one
  per line, and ``ansibleResult``), ``Successful`` ``False`` and ``Running`` ``False``.

A condition whose type, status and reason did not change is left as it is (``Failure``
excepted, whose message is always rewritten); ``lastTransitionTime`` moves only when the status
does. Other status fields (what the playbook wrote with ``k8s_status``) are kept.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AWAITING_MESSAGE",
    "FAILED_REASON",
    "RUNNING_MESSAGE",
    "SUCCESSFUL_MESSAGE",
    "AnsibleResult",
    "failed_conditions",
    "running_conditions",
    "set_condition",
    "succeeded_conditions",
]

RUNNING = "Running"
SUCCESSFUL = "Successful"
FAILURE = "Failure"
RUNNING_REASON = "Running"
SUCCESSFUL_REASON = "Successful"
FAILED_REASON = "Failed"
RUNNING_MESSAGE = "Running reconciliation"
AWAITING_MESSAGE = "Awaiting next reconciliation"
SUCCESSFUL_MESSAGE = "Last reconciliation succeeded"


@dataclass(frozen=True)
class AnsibleResult:
    """The counts of a run's ``playbook_on_stats`` event for ``localhost``."""

    ok: int = 0
    changed: int = 0
    skipped: int = 0
    failures: int = 0
    completion: str = ""

    @classmethod
    def from_stats(cls, event_data: Mapping[str, Any], created: str) -> AnsibleResult:
        """From a ``playbook_on_stats`` event's data and its ``created`` time."""

        def count(name: str) -> int:
            per_host = event_data.get(name) or {}
            value = per_host.get("localhost", 0) if isinstance(per_host, Mapping) else 0
            return value if isinstance(value, int) else 0

        return cls(
            ok=count("ok"),
            changed=count("changed"),
            skipped=count("skipped"),
            failures=count("failures"),
            completion=_completion_time(created),
        )

    def as_dict(self) -> dict[str, Any]:
        """The ``ansibleResult`` field."""
        return {
            "ok": self.ok,
            "changed": self.changed,
            "skipped": self.skipped,
            "failures": self.failures,
            "completion": self.completion,
        }


def _completion_time(created: str) -> str:
    """Ansible's ``2026-11-27T15:00:00.123400+00:00`` with the fraction's trailing zeros
    dropped, as Operator SDK prints it."""
    head, dot, rest = created.partition(".")
    if not dot:
        return created
    count = len(rest) - len(rest.lstrip("0123456789"))
    digits, zone = rest[:count], rest[count:]
    digits = digits.rstrip("0")
    return f"{head}.{digits}{zone}" if digits else f"{head}{zone}"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(
    type_: str,
    status: str,
    reason: str,
    message: str,
    result: AnsibleResult | None = None,
) -> dict[str, Any]:
    condition: dict[str, Any] = {
        "type": type_,
        "status": status,
        "lastTransitionTime": _now(),
        "reason": reason,
        "message": message,
    }
    if result is not None:
        condition["ansibleResult"] = result.as_dict()
    return condition


def _find(conditions: Sequence[Mapping[str, Any]], type_: str) -> dict[str, Any] | None:
    for condition in conditions:
        if condition.get("type") == type_:
            return dict(condition)
    return None


def set_condition(conditions: list[dict[str, Any]], condition: dict[str, Any]) -> None:
    """Put ``condition`` in the list with Operator SDK's rules (see the module docs)."""
    current = _find(conditions, condition["type"])
    if current is not None:
        same = current.get("status") == condition["status"]
        if same and condition["type"] != FAILURE and current.get("reason") == condition["reason"]:
            return
        if same and current.get("lastTransitionTime"):
            condition["lastTransitionTime"] = current["lastTransitionTime"]
    conditions[:] = [c for c in conditions if c.get("type") != condition["type"]]
    conditions.append(condition)


def _with_status(conditions: list[dict[str, Any]], type_: str, status: str) -> None:
    current = _find(conditions, type_)
    if current is not None:
        current["status"] = status
        set_condition(conditions, current)


def _copy(conditions: Any) -> list[dict[str, Any]]:
    if not isinstance(conditions, list):
        return []
    return [dict(condition) for condition in conditions if isinstance(condition, Mapping)]


def running_conditions(current: Any) -> list[dict[str, Any]]:
    """The conditions to write before a run."""
    conditions = _copy(current)
    _with_status(conditions, SUCCESSFUL, "False")
    set_condition(conditions, _condition(RUNNING, "True", RUNNING_REASON, RUNNING_MESSAGE))
    return conditions


def succeeded_conditions(current: Any, result: AnsibleResult) -> list[dict[str, Any]]:
    """The conditions to write after a successful run."""
    conditions = _copy(current)
    set_condition(
        conditions, _condition(RUNNING, "True", SUCCESSFUL_REASON, AWAITING_MESSAGE, result)
    )
    set_condition(conditions, _condition(SUCCESSFUL, "True", SUCCESSFUL_REASON, SUCCESSFUL_MESSAGE))
    set_condition(conditions, _condition(FAILURE, "False", "", ""))
    return conditions


def failed_conditions(
    current: Any, message: str, result: AnsibleResult | None
) -> list[dict[str, Any]]:
    """The conditions to write after a failed run (or a run that could not start)."""
    conditions = _copy(current)
    _with_status(conditions, RUNNING, "False")
    set_condition(conditions, _condition(FAILURE, "True", FAILED_REASON, message, result))
    set_condition(conditions, _condition(SUCCESSFUL, "False", "", ""))
    return conditions
