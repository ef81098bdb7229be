"""Jobs and CronJobs (``pkg/apis/batch/validation``, 1.32): counts, completion modes, the pod
template's restart policy, the generated selector, cron schedules and time zones, and the fields
of a Job that cannot change."""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.go_format import GoValue
from setpoint.cluster.apiserver.registry.builtin_defaults import (
    JOB_CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_JOB_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from setpoint.cluster.apiserver.validation import go_values
from setpoint.cluster.apiserver.validation.cron_schedule import schedule_error
from setpoint.cluster.apiserver.validation.pod_template import (
    template_labels,
    template_of,
    validate_pod_template,
)
from setpoint.cluster.apiserver.validation.selectors import (
    IMMUTABLE,
    as_selector,
    non_negative,
    same_selector,
    validate_label_selector,
)

_RESTART_POLICIES: Final = ("OnFailure", "Never")
_COMPLETION_MODES: Final = ("NonIndexed", "Indexed")
_REPLACEMENT_POLICIES: Final = ("Failed", "TerminatingOrFailed")
_CONCURRENCY_POLICIES: Final = ("Allow", "Forbid", "Replace")
_MAX_PARALLELISM_INDEXED: Final = 100_000
_TIME_ZONE_PART: Final = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")
#: CronJob names leave room for the 11-character suffix of the Jobs they create.
_CRON_JOB_NAME_MAX: Final = 52
#: Fields of a Job spec that cannot change after creation (besides template and selector).
_JOB_IMMUTABLE: Final = (
    "completionMode",
    "podFailurePolicy",
    "backoffLimitPerIndex",
    "managedBy",
    "successPolicy",
)
#: A pod template has no short Go rendering; upstream prints the whole struct.
_TEMPLATE_VALUE: Final = GoValue("core.PodTemplateSpec{...}")


def _spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _job_spec_rules(spec: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateJobSpec`` (without the selector)."""
    errors: list[FieldError] = []
    for key in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ):
        errors += non_negative(spec.get(key), f"{path}.{key}")
    max_failed = spec.get("maxFailedIndexes")
    if max_failed is not None:
        errors += non_negative(max_failed, f"{path}.maxFailedIndexes")
        if spec.get("backoffLimitPerIndex") is None:
            errors.append(
                fe.required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified")
            )
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in _COMPLETION_MODES:
            errors.append(fe.not_supported(f"{path}.completionMode", mode, _COMPLETION_MODES))
        if mode == "Indexed":
            if spec.get("completions") is None:
                errors.append(fe.required(f"{path}.completions", "when completion mode is Indexed"))
            parallelism = spec.get("parallelism")
            if isinstance(parallelism, int) and parallelism > _MAX_PARALLELISM_INDEXED:
                errors.append(
                    fe.invalid(
                        f"{path}.parallelism",
                        parallelism,
                        f"must be less than or equal to {_MAX_PARALLELISM_INDEXED} "
                        "when completion mode is Indexed",
                    )
                )
    if mode in (None, "NonIndexed"):
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(key) is not None:
                errors.append(
                    fe.invalid(f"{path}.{key}", spec[key], "requires indexed completion mode")
                )
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in _REPLACEMENT_POLICIES:
        errors.append(
            fe.not_supported(f"{path}.podReplacementPolicy", replacement, _REPLACEMENT_POLICIES)
        )
    template = template_of(spec)
    errors += validate_pod_template(template, f"{path}.template")
    pod_spec = template.get("spec")
    policy = pod_spec.get("restartPolicy") if isinstance(pod_spec, Mapping) else None
    policy_path = f"{path}.template.spec.restartPolicy"
    if policy in ("Always", "", None):
        errors.append(fe.required(policy_path, 'valid values: "OnFailure", "Never"'))
    elif policy not in _RESTART_POLICIES:
        errors.append(fe.not_supported(policy_path, policy, _RESTART_POLICIES))
    elif spec.get("podFailurePolicy") is not None and policy != "Never":
        errors.append(
            fe.invalid(
                policy_path, policy, 'only "Never" is supported when podFailurePolicy is specified'
            )
        )
    return errors


def _job_selector(spec: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateJobSpec``'s selector part."""
    selector = spec.get("selector")
    errors: list[FieldError] = []
    if not isinstance(selector, Mapping):
        errors.append(fe.required("spec.selector", ""))
    else:
        errors += validate_label_selector(selector, "spec.selector")
    parsed = as_selector(selector)
    if parsed is not None:
        labels = template_labels(template_of(spec))
        if not parsed.matches(labels if isinstance(labels, Mapping) else {}):
            errors.append(
                fe.invalid(
                    "spec.template.metadata.labels",
                    go_values.string_map(labels),
                    "`selector` does not match template `labels`",
                )
            )
    return errors


def _generated_selector(job: Mapping[str, Any]) -> list[FieldError]:
    """``validateGeneratedSelector``: the generated labels are there and selected."""
    spec = _spec(job)
    selector = spec.get("selector")
    if spec.get("manualSelector") is True or not isinstance(selector, Mapping):
        return []
    metadata = job.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    uid = str(metadata.get("uid") or "")
    name = str(metadata.get("name") or "")
    errors: list[FieldError] = []
    if not uid:
        errors.append(fe.required("metadata.uid", ""))
    labels = template_labels(template_of(spec))
    present = labels if isinstance(labels, Mapping) else {}
    expected = {
        LEGACY_JOB_CONTROLLER_UID_LABEL: uid,
        LEGACY_JOB_NAME_LABEL: name,
        JOB_CONTROLLER_UID_LABEL: uid,
        JOB_NAME_LABEL: name,
    }
    for key, value in expected.items():
        path = f"spec.template.metadata.labels[{key}]"
        if key not in present:
            errors.append(fe.required(path, value))
        elif present[key] != value:
            errors.append(fe.invalid(path, go_values.string_map(labels), f"must be '{value}'"))
    parsed = as_selector(selector)
    if parsed is not None and not parsed.matches(expected):
        errors.append(
            fe.invalid(
                "spec.selector",
                go_values.label_selector(selector),
                "`selector` not auto-generated",
            )
        )
    return errors


def validate_job(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateJob`` / ``ValidateJobUpdate``."""
    spec = _spec(obj)
    errors = _generated_selector(obj) if old is None else []
    errors += _job_spec_rules(spec, "spec")
    errors += _job_selector(spec)
    if old is None:
        return errors
    old_spec = _spec(old)
    if spec.get("completionMode") != "Indexed" and spec.get("completions") != old_spec.get(
        "completions"
    ):
        errors.append(fe.invalid("spec.completions", spec.get("completions"), IMMUTABLE))
    if not same_selector(spec.get("selector"), old_spec.get("selector")):
        errors.append(
            fe.invalid("spec.selector", go_values.label_selector(spec.get("selector")), IMMUTABLE)
        )
    if _normal(spec.get("template")) != _normal(old_spec.get("template")):
        errors.append(fe.invalid("spec.template", _TEMPLATE_VALUE, IMMUTABLE))
    for key in _JOB_IMMUTABLE:
        if _normal(spec.get(key)) != _normal(old_spec.get(key)):
            value = spec.get(key)
            shown = value if isinstance(value, str | int) or value is None else GoValue("{...}")
            errors.append(fe.invalid(f"spec.{key}", shown, IMMUTABLE))
    return errors


def _normal(value: Any) -> Any:
    """``Semantic.DeepEqual``: nil and empty maps/lists compare equal."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _time_zone(zone: object, path: str) -> list[FieldError]:
    if zone is None:
        return []
    text = str(zone)
    if not text:
        return [fe.invalid(path, text, "timeZone must be nil or non-empty string")]
    for part in text.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.match(part):
            return [fe.invalid(path, text, f"unknown time zone {text}")]
    errors: list[FieldError] = []
    if text.lower() == "local":
        errors.append(
            fe.invalid(
                path,
                text,
                "timeZone must be an explicit time zone as defined in "
                "https://www.iana.org/time-zones",
            )
        )
    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        errors.append(fe.invalid(path, text, f"unknown time zone {text}"))
    return errors


def validate_cron_job(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateCronJobCreate`` / ``ValidateCronJobUpdate``."""
    spec = _spec(obj)
    old_spec = _spec(old) if old is not None else None
    errors: list[FieldError] = []
    schedule = spec.get("schedule")
    if not schedule or not isinstance(schedule, str):
        errors.append(fe.required("spec.schedule", ""))
    else:
        problem = schedule_error(schedule)
        if problem is not None:
            errors.append(fe.invalid("spec.schedule", schedule, problem))
        allow_tz = old_spec is not None and "TZ" in str(old_spec.get("schedule") or "")
        if allow_tz and "TZ" in schedule and spec.get("timeZone") is not None:
            errors.append(
                fe.invalid(
                    "spec.schedule",
                    schedule,
                    "cannot use both timeZone field and TZ or CRON_TZ in schedule",
                )
            )
        elif not allow_tz and "TZ" in schedule:
            errors.append(
                fe.invalid(
                    "spec.schedule",
                    schedule,
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                )
            )
    errors += non_negative(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds")
    if old_spec is None or old_spec.get("timeZone") != spec.get("timeZone"):
        errors += _time_zone(spec.get("timeZone"), "spec.timeZone")
    policy = spec.get("concurrencyPolicy")
    if not policy:
        errors.append(fe.required("spec.concurrencyPolicy", ""))
    elif policy not in _CONCURRENCY_POLICIES:
        errors.append(fe.not_supported("spec.concurrencyPolicy", policy, _CONCURRENCY_POLICIES))
    job_template = spec.get("jobTemplate")
    job_template = job_template if isinstance(job_template, Mapping) else {}
    job_spec = _spec(job_template)
    errors += _job_spec_rules(job_spec, "spec.jobTemplate.spec")
    if job_spec.get("selector") is not None:
        errors.append(
            fe.invalid(
                "spec.jobTemplate.spec.selector",
                go_values.label_selector(job_spec.get("selector")),
                "`selector` will be auto-generated",
            )
        )
    if job_spec.get("manualSelector") is True:
        errors.append(
            fe.not_supported("spec.jobTemplate.spec.manualSelector", True, ["nil", "false"])
        )
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errors += non_negative(spec.get(key), f"spec.{key}")
    if old is None:
        metadata = obj.get("metadata")
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        if isinstance(name, str) and len(name) > _CRON_JOB_NAME_MAX:
            errors.append(
                fe.invalid(
                    "metadata.name", name, f"must be no more than {_CRON_JOB_NAME_MAX} characters"
                )
            )
    return errors
