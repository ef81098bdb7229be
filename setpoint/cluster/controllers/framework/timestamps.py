"""Kubernetes ``Time`` and ``MicroTime`` text from a clock (controllers never read the OS time)."""

from __future__ import annotations

from datetime import UTC, datetime

from setpoint.api.clock import Clock


def time_text(clock: Clock) -> str:
    """The clock's now as a ``Time`` (RFC 3339, seconds, UTC)."""
    return clock.now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time_text(clock: Clock) -> str:
    """The clock's now as a ``MicroTime`` (RFC 3339, microseconds, UTC)."""
    return clock.now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> datetime | None:
    """A ``Time`` or ``MicroTime`` as an aware datetime (None when missing or malformed)."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
