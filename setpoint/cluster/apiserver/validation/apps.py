"""Deployments, ReplicaSets, StatefulSets and DaemonSets (``pkg/apis/apps/validation``, and the
selector immutability of ``pkg/registry/apps/*/strategy.go``), 1.32."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.validation import go_values
from setpoint.cluster.apiserver.validation.pod_template import (
    restart_always,
    selector_mismatch,
    template_of,
    validate_pod_template,
)
from setpoint.cluster.apiserver.validation.selectors import (
    IMMUTABLE,
    as_selector,
    is_empty_selector,
    non_negative,
    same_selector,
    validate_label_selector,
)

_PERCENT: Final = re.compile(r"^[0-9]+%$")
_PERCENT_MESSAGE: Final = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
#: StatefulSet spec fields an update may change (the rest is immutable).
_STATEFUL_SET_MUTABLE: Final = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def _spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _selector_errors(spec: Mapping[str, Any], noun: str, invalid_detail: str) -> list[FieldError]:
    """The strict selector checks shared by deployments, replica sets and stateful sets."""
    selector = spec.get("selector")
    errors: list[FieldError] = []
    if not isinstance(selector, Mapping):
        errors.append(fe.required("spec.selector", ""))
    else:
        errors.extend(validate_label_selector(selector, "spec.selector"))
        if is_empty_selector(selector):
            errors.append(
                fe.invalid(
                    "spec.selector",
                    go_values.label_selector(selector),
                    f"empty selector is invalid for {noun}",
                )
            )
    if as_selector(selector) is None:
        errors.append(
            fe.invalid("spec.selector", go_values.label_selector(selector), invalid_detail)
        )
    return errors


@lru_cache(maxsize=256)
def _parse_percent(text: str) -> int | None:
    return int(text[:-1]) if _PERCENT.match(text) else None


def _percent(value: object) -> int | None:
    return _parse_percent(value) if isinstance(value, str) else None


def _int_or_percent(value: object, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        if _percent(value) is None:
            return [fe.invalid(path, go_values.int_or_string(value), _PERCENT_MESSAGE)]
        return []
    return non_negative(value, path)


def _int_or_percent_value(value: object) -> int:
    percent = _percent(value)
    if percent is not None:
        return percent
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _not_over_100_percent(value: object, path: str) -> list[FieldError]:
    percent = _percent(value)
    if percent is None or percent <= 100:
        return []
    return [fe.invalid(path, go_values.int_or_string(value), "must not be greater than 100%")]


def _deployment_strategy(spec: Mapping[str, Any]) -> list[FieldError]:
    strategy = spec.get("strategy")
    strategy = strategy if isinstance(strategy, Mapping) else {}
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    path = "spec.strategy.rollingUpdate"
    if kind == "Recreate":
        if rolling is not None:
            return [fe.forbidden(path, "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if kind == "RollingUpdate":
        if not isinstance(rolling, Mapping):
            return [fe.required(path, "this should be defaulted and never be nil")]
        unavailable = rolling.get("maxUnavailable")
        surge = rolling.get("maxSurge")
        errors = _int_or_percent(unavailable, f"{path}.maxUnavailable")
        errors += _int_or_percent(surge, f"{path}.maxSurge")
        if _int_or_percent_value(unavailable) == 0 and _int_or_percent_value(surge) == 0:
            errors.append(
                fe.invalid(
                    f"{path}.maxUnavailable",
                    go_values.int_or_string(unavailable),
                    "may not be 0 when `maxSurge` is 0",
                )
            )
        return errors + _not_over_100_percent(unavailable, f"{path}.maxUnavailable")
    return [fe.not_supported("spec.strategy", kind or "", ["Recreate", "RollingUpdate"])]


def _replica_set_like(spec: Mapping[str, Any], kind: str) -> list[FieldError]:
    """``ValidatePodTemplateSpecForReplicaSet`` after the selector parsed."""
    parsed = as_selector(spec.get("selector"))
    if parsed is None:
        return []
    template = template_of(spec)
    errors = selector_mismatch(spec.get("selector"), template, "spec.template", parsed)
    errors.extend(validate_pod_template(template, "spec.template"))
    return errors + restart_always(template, "spec.template", kind)


def validate_deployment(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateDeployment`` / ``ValidateDeploymentUpdate`` and the immutable selector."""
    spec = _spec(obj)
    errors = non_negative(spec.get("replicas"), "spec.replicas")
    errors += _selector_errors(spec, "deployment", "invalid label selector")
    errors += _replica_set_like(spec, "ReplicaSet")
    errors += _deployment_strategy(spec)
    errors += non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    errors += non_negative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool):
        errors += non_negative(deadline, "spec.progressDeadlineSeconds")
        min_ready = spec.get("minReadySeconds")
        if deadline <= (min_ready if isinstance(min_ready, int) else 0):
            errors.append(
                fe.invalid(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )
    return errors + _immutable_selector(spec, old)


def _immutable_selector(spec: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    if old is None:
        return []
    selector = spec.get("selector")
    if same_selector(selector, _spec(old).get("selector")):
        return []
    return [fe.invalid("spec.selector", go_values.label_selector(selector), IMMUTABLE)]


def validate_replica_set(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateReplicaSet`` / ``ValidateReplicaSetUpdate`` and the immutable selector."""
    spec = _spec(obj)
    errors = non_negative(spec.get("replicas"), "spec.replicas")
    errors += non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    # Upstream says "deployment" here too.
    errors += _selector_errors(spec, "deployment", "invalid label selector")
    errors += _replica_set_like(spec, "ReplicaSet")
    return errors + _immutable_selector(spec, old)


def _stateful_set_strategy(spec: Mapping[str, Any]) -> list[FieldError]:
    strategy = spec.get("updateStrategy")
    strategy = strategy if isinstance(strategy, Mapping) else {}
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    path = "spec.updateStrategy"
    if not kind:
        return [fe.required(path, "")]
    if kind == "OnDelete":
        if rolling is not None:
            return [
                fe.invalid(
                    f"{path}.rollingUpdate",
                    fe.GoValue("&apps.RollingUpdateStatefulSetStrategy{...}"),
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        if not isinstance(rolling, Mapping):
            return []
        errors = non_negative(rolling.get("partition"), f"{path}.rollingUpdate.partition")
        unavailable = rolling.get("maxUnavailable")
        if unavailable is not None:
            unavailable_path = f"{path}.rollingUpdate.maxUnavailable"
            errors += _int_or_percent(unavailable, unavailable_path)
            if _int_or_percent_value(unavailable) == 0:
                errors.append(
                    fe.invalid(
                        unavailable_path, go_values.int_or_string(unavailable), "cannot be 0"
                    )
                )
            errors += _not_over_100_percent(unavailable, unavailable_path)
        return errors
    return [
        fe.invalid(
            path,
            fe.GoValue(
                f"apps.StatefulSetUpdateStrategy{{Type:{fe.go_quote(str(kind))}, "
                + (
                    "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}"
                    if rolling is None
                    else "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(...)}"
                )
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        )
    ]


def validate_stateful_set(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateStatefulSet`` / ``ValidateStatefulSetUpdate``."""
    spec = _spec(obj)
    errors: list[FieldError] = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        errors.append(fe.required("spec.podManagementPolicy", ""))
    elif policy not in ("OrderedReady", "Parallel"):
        errors.append(
            fe.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    errors += _stateful_set_strategy(spec)
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, Mapping):
        for key in ("whenDeleted", "whenScaled"):
            value = retention.get(key)
            if value not in ("Retain", "Delete"):
                errors.append(
                    fe.not_supported(
                        f"spec.persistentVolumeClaimRetentionPolicy.{key}",
                        value or "",
                        ["Retain", "Delete"],
                    )
                )
    errors += non_negative(spec.get("replicas"), "spec.replicas")
    errors += non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, Mapping):
        errors += non_negative(ordinals.get("start"), "spec.ordinals.start")
    errors += _selector_errors(spec, "statefulset", "")
    template = template_of(spec)
    if as_selector(spec.get("selector")) is not None:
        errors += selector_mismatch(spec.get("selector"), template, "spec.template")
        errors += validate_pod_template(template, "spec.template")
    errors += restart_always(template, "spec.template", "StatefulSet")
    if old is not None:
        new_rest = {k: v for k, v in spec.items() if k not in _STATEFUL_SET_MUTABLE}
        old_rest = {k: v for k, v in _spec(old).items() if k not in _STATEFUL_SET_MUTABLE}
        if _normal(new_rest) != _normal(old_rest):
            errors.append(
                fe.forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                    "'minReadySeconds' are forbidden",
                )
            )
    return errors


def _normal(value: Any) -> Any:
    """``Semantic.DeepEqual``: nil and empty maps/lists compare equal."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _daemon_set_strategy(spec: Mapping[str, Any]) -> list[FieldError]:
    strategy = spec.get("updateStrategy")
    strategy = strategy if isinstance(strategy, Mapping) else {}
    kind = strategy.get("type")
    path = "spec.updateStrategy"
    if kind == "OnDelete":
        return []
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, Mapping):
            return [fe.required(f"{path}.rollingUpdate", "")]
        unavailable = rolling.get("maxUnavailable")
        surge = rolling.get("maxSurge")
        rolling_path = f"{path}.rollingUpdate"
        errors = _int_or_percent(unavailable, f"{rolling_path}.maxUnavailable")
        errors += _int_or_percent(surge, f"{rolling_path}.maxSurge")
        errors += _not_over_100_percent(unavailable, f"{rolling_path}.maxUnavailable")
        errors += _not_over_100_percent(surge, f"{rolling_path}.maxSurge")
        has_unavailable = _int_or_percent_value(unavailable) != 0
        has_surge = _int_or_percent_value(surge) != 0
        if has_unavailable and has_surge:
            errors.append(
                fe.invalid(
                    f"{rolling_path}.maxSurge",
                    go_values.int_or_string(surge),
                    "may not be set when maxUnavailable is non-zero",
                )
            )
        elif not has_unavailable and not has_surge:
            errors.append(
                fe.required(f"{rolling_path}.maxUnavailable", "cannot be 0 when maxSurge is 0")
            )
        return errors
    return [fe.not_supported(path, kind or "", ["RollingUpdate", "OnDelete"])]


def validate_daemon_set(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateDaemonSet`` / ``ValidateDaemonSetUpdate`` and the immutable selector."""
    spec = _spec(obj)
    selector = spec.get("selector")
    errors = validate_label_selector(selector, "spec.selector")
    template = template_of(spec)
    if as_selector(selector) is not None:
        errors += selector_mismatch(selector, template, "spec.template")
    if isinstance(selector, Mapping) and is_empty_selector(selector):
        errors.append(
            fe.invalid(
                "spec.selector",
                go_values.label_selector(selector),
                "empty selector is invalid for daemonset",
            )
        )
    errors += validate_pod_template(template, "spec.template")
    errors += restart_always(template, "spec.template", "DaemonSet")
    errors += non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    errors += non_negative(spec.get("templateGeneration"), "spec.templateGeneration")
    errors += _daemon_set_strategy(spec)
    errors += non_negative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
    return errors + _immutable_selector(spec, old)
