"""Leases (``pkg/apis/coordination/validation``, 1.32): durations and transition counts."""

from __future__ import annotations

from typing import Any

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError


def validate_lease(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateLeaseSpec``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    errors: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errors.append(fe.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errors.append(
            fe.invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0")
        )
    return errors
