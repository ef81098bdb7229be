"""From a recommendation to the replica count written: stabilization and rate limits.

As upstream's ``normalizeDesiredReplicas`` (no ``spec.behavior``: the highest recommendation of
the last 5 minutes when scaling down, at most twice the replicas (and at least 4) up) and
``normalizeDesiredReplicasWithBehaviors`` (the stabilization windows and the ``Pods`` /
``Percent`` policies of ``behavior.scaleUp`` and ``scaleDown``, counting the changes made within
each policy's period). Each step says why it limited the count: the reason and message of the
``AbleToScale`` and ``ScalingLimited`` conditions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

#: ``--horizontal-pod-autoscaler-downscale-stabilization``.
DOWNSCALE_STABILIZATION: Final = timedelta(minutes=5)
_SCALE_UP_LIMIT_FACTOR: Final = 2
_SCALE_UP_LIMIT_MINIMUM: Final = 4

#: autoscaling/v2 defaults of ``behavior.scaleUp`` / ``scaleDown`` (``defaults.go``).
DEFAULT_SCALE_UP: Final[dict[str, Any]] = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
DEFAULT_SCALE_DOWN: Final[dict[str, Any]] = {
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}

STABILIZED_DOWN: Final = (
    "ScaleDownStabilized",
    "recent recommendations were higher than current one, applying the highest recent "
    "recommendation",
)
STABILIZED_UP: Final = (
    "ScaleUpStabilized",
    "recent recommendations were lower than current one, applying the lowest recent recommendation",
)
READY: Final = ("ReadyForNewScale", "recommended size matches current size")
WITHIN_RANGE: Final = ("DesiredWithinRange", "the desired count is within the acceptable range")
UP_LIMIT: Final = (
    "ScaleUpLimit",
    "the desired replica count is increasing faster than the maximum scale rate",
)
DOWN_LIMIT: Final = (
    "ScaleDownLimit",
    "the desired replica count is decreasing faster than the maximum scale rate",
)
TOO_MANY: Final = (
    "TooManyReplicas",
    "the desired replica count is more than the maximum replica count",
)
TOO_FEW: Final = (
    "TooFewReplicas",
    "the desired replica count is less than the minimum replica count",
)


def rules_with_defaults(
    given: Mapping[str, Any] | None, defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """``GenerateHPAScaleUpRules``/``...DownRules``: the fields set, the defaults for the rest."""
    rules = dict(defaults.items())
    for key in ("selectPolicy", "stabilizationWindowSeconds", "policies"):
        if given is not None and given.get(key) is not None:
            rules[key] = given[key]
    return rules


@dataclass(slots=True)
class _ScaleEvent:
    at: datetime
    change: int


@dataclass(slots=True)
class ScalingHistory:
    """What one autoscaler recommended and changed recently (kept in memory, as upstream)."""

    recommendations: list[tuple[datetime, int]] = field(default_factory=list)
    ups: list[_ScaleEvent] = field(default_factory=list)
    downs: list[_ScaleEvent] = field(default_factory=list)

    def record_change(self, before: int, after: int, now: datetime, longest_period: int) -> None:
        """Remember a rescale (for the policies' periods), dropping what no period covers."""
        horizon = now - timedelta(seconds=longest_period)
        self.ups = [e for e in self.ups if e.at > horizon]
        self.downs = [e for e in self.downs if e.at > horizon]
        if after > before:
            self.ups.append(_ScaleEvent(now, after - before))
        elif after < before:
            self.downs.append(_ScaleEvent(now, before - after))


def _changed_within(events: list[_ScaleEvent], seconds: int, now: datetime) -> int:
    cutoff = now - timedelta(seconds=seconds)
    return sum(e.change for e in events if e.at > cutoff)


@dataclass(frozen=True, slots=True)
class Normalized:
    """The replica count to write, with the conditions' reasons and messages."""

    replicas: int
    stabilized: tuple[str, str]
    limited: bool
    limit: tuple[str, str]


def normalize(
    history: ScalingHistory,
    behavior: Mapping[str, Any] | None,
    current: int,
    recommended: int,
    min_replicas: int,
    max_replicas: int,
    now: datetime,
) -> Normalized:
    """The replica count to write for a recommendation (see the module docstring)."""
    if behavior is None:
        return _normalize_plain(history, current, recommended, min_replicas, max_replicas, now)
    up = rules_with_defaults(behavior.get("scaleUp"), DEFAULT_SCALE_UP)
    down = rules_with_defaults(behavior.get("scaleDown"), DEFAULT_SCALE_DOWN)
    if down.get("stabilizationWindowSeconds") is None:
        down["stabilizationWindowSeconds"] = int(DOWNSCALE_STABILIZATION.total_seconds())
    stabilized, reason = _stabilize_with_rules(history, up, down, current, recommended, now)
    replicas, limit = _rate_limited(
        history, up, down, current, stabilized, min_replicas, max_replicas, now
    )
    return Normalized(
        replicas,
        reason if stabilized != recommended else READY,
        replicas != stabilized,
        limit,
    )


def _normalize_plain(
    history: ScalingHistory,
    current: int,
    recommended: int,
    min_replicas: int,
    max_replicas: int,
    now: datetime,
) -> Normalized:
    cutoff = now - DOWNSCALE_STABILIZATION
    stabilized = recommended
    kept = [(at, value) for at, value in history.recommendations if at > cutoff]
    for _, value in kept:
        stabilized = max(stabilized, value)
    history.recommendations = [*kept, (now, recommended)]
    scale_up_limit = max(_SCALE_UP_LIMIT_FACTOR * current, _SCALE_UP_LIMIT_MINIMUM)
    if max_replicas > scale_up_limit:
        maximum, over = scale_up_limit, UP_LIMIT
    else:
        maximum, over = max_replicas, TOO_MANY
    if stabilized < min_replicas:
        replicas, limit = min_replicas, TOO_FEW
    elif stabilized > maximum:
        replicas, limit = maximum, over
    else:
        replicas, limit = stabilized, WITHIN_RANGE
    return Normalized(
        replicas,
        STABILIZED_DOWN if stabilized != recommended else READY,
        replicas != stabilized,
        limit,
    )


def _stabilize_with_rules(
    history: ScalingHistory,
    up: Mapping[str, Any],
    down: Mapping[str, Any],
    current: int,
    recommended: int,
    now: datetime,
) -> tuple[int, tuple[str, str]]:
    up_window = int(up.get("stabilizationWindowSeconds") or 0)
    down_window = int(down.get("stabilizationWindowSeconds") or 0)
    if recommended >= current:
        window, better, reason = up_window, min, STABILIZED_UP
    else:
        window, better, reason = down_window, max, STABILIZED_DOWN
    cutoff = now - timedelta(seconds=window)
    obsolete = now - timedelta(seconds=max(up_window, down_window))
    stabilized = recommended
    for at, value in history.recommendations:
        if at > cutoff:
            stabilized = better(stabilized, value)
    history.recommendations = [
        (at, value) for at, value in history.recommendations if at >= obsolete
    ] + [(now, recommended)]
    return stabilized, reason


def _rate_limited(
    history: ScalingHistory,
    up: Mapping[str, Any],
    down: Mapping[str, Any],
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    now: datetime,
) -> tuple[int, tuple[str, str]]:
    if desired > current:
        limit = _rate_limit(history, up, current, now, increasing=True)
        limit = max(limit, current)
        if max_replicas > limit:
            maximum, reason = limit, UP_LIMIT
        else:
            maximum, reason = max_replicas, TOO_MANY
        if desired > maximum:
            return maximum, reason
    elif desired < current:
        limit = _rate_limit(history, down, current, now, increasing=False)
        limit = min(limit, current)
        if min_replicas < limit:
            minimum, reason = limit, DOWN_LIMIT
        else:
            minimum, reason = min_replicas, TOO_FEW
        if desired < minimum:
            return minimum, reason
    return desired, WITHIN_RANGE


def _period_start(
    history: ScalingHistory, policy: Mapping[str, Any], current: int, now: datetime
) -> int:
    period = int(policy.get("periodSeconds") or 0)
    added = _changed_within(history.ups, period, now)
    removed = _changed_within(history.downs, period, now)
    return current - added + removed


def _rate_limit(
    history: ScalingHistory,
    rules: Mapping[str, Any],
    current: int,
    now: datetime,
    *,
    increasing: bool,
) -> int:
    """The furthest count the policies allow in one direction (upstream's
    ``calculateScaleUpLimitWithScalingRules`` and ``calculateScaleDownLimitWithBehaviors``):
    per policy, from the count at the start of its period, ``Pods`` adds or removes its value
    and ``Percent`` its share (rounded up going up, down going down); ``selectPolicy`` ``Max``
    takes the largest change, ``Min`` the smallest, ``Disabled`` none."""
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    largest_change = select != "Min"
    pick = max if largest_change == increasing else min
    result: int | None = None
    for policy in rules.get("policies") or []:
        start = _period_start(history, policy, current, now)
        value = int(policy.get("value") or 0)
        if policy.get("type") == "Pods":
            proposed = start + value if increasing else start - value
        elif increasing:
            proposed = math.ceil(start * (1 + value / 100))
        else:
            proposed = int(start * (1 - value / 100))
        result = proposed if result is None else pick(result, proposed)
    return current if result is None else result


def longest_period(behavior: Mapping[str, Any] | None) -> int:
    """The longest ``periodSeconds`` of the behavior's policies (how long changes count)."""
    if behavior is None:
        return 0
    periods = [
        int(policy.get("periodSeconds") or 0)
        for rules in (
            rules_with_defaults(behavior.get("scaleUp"), DEFAULT_SCALE_UP),
            rules_with_defaults(behavior.get("scaleDown"), DEFAULT_SCALE_DOWN),
        )
        for policy in rules.get("policies") or []
    ]
    return max(periods, default=0)
