"""Pod templates of workloads (``ValidatePodTemplateSpec``): the template's labels and the pod
spec's container rules (images may be left out of a template), then the restart policy and
``activeDeadlineSeconds`` rules each workload adds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.selectors import LabelSelector
from setpoint.cluster.apiserver.validation import go_values
from setpoint.cluster.apiserver.validation.pod_spec import validate_template_pod_spec
from setpoint.cluster.apiserver.validation.selectors import as_selector, validate_labels


def template_of(spec: Mapping[str, Any]) -> dict[str, Any]:
    """``spec.template`` (an empty template when missing)."""
    template = spec.get("template")
    return template if isinstance(template, dict) else {}


def template_labels(template: Mapping[str, Any]) -> object:
    """The template's ``metadata.labels`` (None when unset)."""
    metadata = template.get("metadata")
    return metadata.get("labels") if isinstance(metadata, Mapping) else None


def validate_pod_template(template: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec`` at ``path`` (``spec.template``)."""
    errors = validate_labels(template_labels(template), f"{path}.labels")
    errors.extend(validate_template_pod_spec(template.get("spec"), f"{path}.spec"))
    return errors


def selector_mismatch(
    selector: object, template: Mapping[str, Any], path: str, parsed: LabelSelector | None = None
) -> list[FieldError]:
    """The "`selector` does not match template `labels`" error when a non-empty selector misses
    them (``parsed``: the selector already parsed, if the caller has it)."""
    if parsed is None:
        parsed = as_selector(selector)
    labels = template_labels(template)
    if parsed is None or parsed.empty:  # a nil selector selects nothing: a mismatch
        return []
    if parsed.matches(labels if isinstance(labels, Mapping) else {}):
        return []
    return [
        fe.invalid(
            f"{path}.metadata.labels",
            go_values.string_map(labels),
            "`selector` does not match template `labels`",
        )
    ]


def restart_always(template: Mapping[str, Any], path: str, kind: str) -> list[FieldError]:
    """Workloads that keep pods running: restartPolicy Always, no activeDeadlineSeconds."""
    spec = template.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    errors: list[FieldError] = []
    policy = spec.get("restartPolicy")
    if policy != "Always":
        errors.append(fe.not_supported(f"{path}.spec.restartPolicy", policy or "", ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errors.append(
            fe.forbidden(
                f"{path}.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return errors
