"""Pod checks the schema cannot express (``ValidatePodSpec`` and ``ValidatePodCreate``, 1.32).

The OpenAPI schema leaves ``spec`` optional and ``image`` optional everywhere, yet a pod must
have containers, and each of its containers an image (only workload templates may leave the
image out, for config management to fill in). Container names are DNS-1123 labels, unique
across regular and init containers; container ports are in range, named and unique per
container. Messages and order follow upstream: regular containers,
then init containers, then the pod-only image checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.validation.object_meta import dns1123_label_problems
from setpoint.cluster.apiserver.validation.ports import container_port_errors

_CONTAINER_LISTS = ("containers", "initContainers")
_IMAGE_WHITESPACE = "must not have leading or trailing whitespace"


def _containers(
    spec: dict[str, Any], key: str, prefix: str = "spec"
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(path, container)`` of each entry of ``spec[key]``."""
    value = spec.get(key)
    if not isinstance(value, list):
        return
    for index, container in enumerate(value):
        # Entries of the wrong type are the schema check's to report.
        yield f"{prefix}.{key}[{index}]", container if isinstance(container, dict) else {}


def _validate_names(spec: dict[str, Any], prefix: str = "spec") -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for key in _CONTAINER_LISTS:
        for path, container in _containers(spec, key, prefix):
            name = container.get("name")
            if not isinstance(name, str) or not name:
                errors.append(fe.required(f"{path}.name"))
                errors.extend(container_port_errors(container.get("ports"), f"{path}.ports"))
                continue
            errors.extend(fe.invalid(f"{path}.name", name, p) for p in dns1123_label_problems(name))
            errors.extend(container_port_errors(container.get("ports"), f"{path}.ports"))
            if name in seen:
                errors.append(fe.duplicate(f"{path}.name", name))
            seen.add(name)
        if key == "containers" and not spec.get(key):
            errors.append(fe.required(f"{prefix}.containers"))
    return errors


def _validate_images(spec: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    for key in _CONTAINER_LISTS:
        for path, container in _containers(spec, key):
            image = container.get("image")
            if not isinstance(image, str) or not image:
                errors.append(fe.required(f"{path}.image"))
            elif image != image.strip():
                errors.append(
                    fe.invalid(
                        f"{path}.image", image, "must not have leading or trailing whitespace"
                    )
                )
    return errors


def validate_pod_spec(pod: dict[str, Any]) -> list[FieldError]:
    """The container problems of a pod about to be created or updated."""
    spec = pod.get("spec")
    if spec is None:
        spec = {}
    elif not isinstance(spec, dict):
        return []  # the schema check reports the wrong type
    return _validate_names(spec) + _validate_images(spec)


def validate_template_pod_spec(spec: object, prefix: str) -> list[FieldError]:
    """The container problems of a pod template's ``spec`` at ``prefix``
    (``spec.template.spec``): names as for a pod; images may be left out."""
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        return []
    return _validate_names(spec, prefix)
