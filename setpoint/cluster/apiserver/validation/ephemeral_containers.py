"""Ephemeral container checks (``validateEphemeralContainers`` and
``ValidatePodEphemeralContainersUpdate``, 1.32).

Ephemeral containers (``kubectl debug``) are added through the ``pods/ephemeralcontainers``
subresource, never on create. Each needs a DNS-1123 name unique across every container of the
pod and an image; its ``targetContainerName`` must name a regular or init container; the fields
that would make it part of the workload (ports, probes, resources, lifecycle, restart policy,
volume sub-paths) are forbidden. Once added, one may be neither removed nor changed.
"""

from __future__ import annotations

import difflib
import json
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.validation.object_meta import dns1123_label_problems

PATH: Final = "spec.ephemeralContainers"
#: ``EphemeralContainerCommon`` fields outside upstream's allow list, in the struct's order.
FORBIDDEN_FIELDS: Final = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
FORBIDDEN_DETAIL: Final = "cannot be set for an Ephemeral Container"


def _entries(spec: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = spec.get(key)
    if not isinstance(value, list):
        return []
    return [entry if isinstance(entry, dict) else {} for entry in value]


def _is_set(value: object) -> bool:
    """Whether a field holds something other than its zero value (as Go's reflection sees)."""
    if isinstance(value, dict):
        return any(_is_set(v) for v in value.values())
    return value not in (None, "", [], 0, False)


def validate_ephemeral_containers(pod: dict[str, Any]) -> list[FieldError]:
    """The problems of ``spec.ephemeralContainers`` (``validateEphemeralContainers``)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return []
    errors: list[FieldError] = []
    others = {
        str(c.get("name"))
        for key in ("containers", "initContainers")
        for c in _entries(spec, key)
        if c.get("name")
    }
    names = set(others)
    for index, container in enumerate(_entries(spec, "ephemeralContainers")):
        path = f"{PATH}[{index}]"
        name = container.get("name")
        if not isinstance(name, str) or not name:
            errors.append(fe.required(f"{path}.name"))
        else:
            errors.extend(fe.invalid(f"{path}.name", name, p) for p in dns1123_label_problems(name))
        image = container.get("image")
        if not isinstance(image, str) or not image:
            errors.append(fe.required(f"{path}.image"))
        elif image != image.strip():
            errors.append(
                fe.invalid(f"{path}.image", image, "must not have leading or trailing whitespace")
            )
        if isinstance(name, str) and name:
            if name in names:
                errors.append(fe.duplicate(f"{path}.name", name))
            names.add(name)
        target = container.get("targetContainerName")
        if target and target not in others:
            errors.append(fe.not_found(f"{path}.targetContainerName", target))
        for field in FORBIDDEN_FIELDS:
            if _is_set(container.get(field)):
                errors.append(fe.forbidden(f"{path}.{field}", FORBIDDEN_DETAIL))
        for mount_index, mount in enumerate(_entries(container, "volumeMounts")):
            for field in ("subPath", "subPathExpr"):
                if mount.get(field):
                    errors.append(
                        fe.forbidden(
                            f"{path}.volumeMounts[{mount_index}].{field}", FORBIDDEN_DETAIL
                        )
                    )
    return errors


def validate_ephemeral_create(pod: dict[str, Any]) -> list[FieldError]:
    """A new pod may not have ephemeral containers (``ValidatePodCreate``)."""
    spec = pod.get("spec")
    if isinstance(spec, dict) and spec.get("ephemeralContainers"):
        return [fe.forbidden(PATH, "cannot be set on create")]
    return []


def validate_ephemeral_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """Existing ephemeral containers may be neither removed nor changed."""
    new_spec = new.get("spec") if isinstance(new.get("spec"), dict) else {}
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    assert isinstance(new_spec, dict) and isinstance(old_spec, dict)
    by_name = {str(c.get("name")): c for c in _entries(new_spec, "ephemeralContainers")}
    errors: list[FieldError] = []
    for existing in _entries(old_spec, "ephemeralContainers"):
        name = str(existing.get("name"))
        quoted = json.dumps(name)
        found = by_name.get(name)
        if found is None:
            errors.append(
                fe.forbidden(PATH, f"existing ephemeral containers {quoted} may not be removed\n")
            )
        elif found != existing:
            # Upstream appends a Go cmp.Diff of the two; a unified diff of their JSON here.
            diff = difflib.unified_diff(
                json.dumps(existing, indent=1, sort_keys=True).splitlines(),
                json.dumps(found, indent=1, sort_keys=True).splitlines(),
                lineterm="",
                n=0,
            )
            changed = "\n".join(
                line for line in diff if line[:1] in "+-" and line[:3] not in ("---", "+++")
            )
            errors.append(
                fe.forbidden(
                    PATH, f"existing ephemeral containers {quoted} may not be changed\n{changed}"
                )
            )
    return errors
