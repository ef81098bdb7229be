"""PriorityClasses (``scheduling.k8s.io/v1``): the two system classes and the reserved range.

kube-apiserver creates ``system-node-critical`` and ``system-cluster-critical`` when it starts
(the ``scheduling/bootstrap-system-priority-classes`` post-start hook) if they are missing.
Names starting ``system-`` are reserved for those two, user classes may not go above one
billion, and a class's value never changes (``ValidatePriorityClass``/``...Update``).
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.registry.kind_behaviour import KindBehaviour
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations, WriteOptions
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

SYSTEM_PREFIX: Final = "system-"
HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
#: The system classes: name → (value, description), as ``pkg/apis/scheduling`` declares them.
SYSTEM_PRIORITY_CLASSES: Final = {
    "system-node-critical": (
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    "system-cluster-critical": (
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.",
    ),
}


def system_priority_class(name: str) -> dict[str, Any]:
    """The PriorityClass object of a system class."""
    value, description = SYSTEM_PRIORITY_CLASSES[name]
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": False,
        "description": description,
        "preemptionPolicy": "PreemptLowerPriority",
    }


async def ensure_system_priority_classes(
    operations: ObjectOperations, resource: ServedResource
) -> None:
    """Create the system classes that are missing."""
    for name in SYSTEM_PRIORITY_CLASSES:
        if operations.storage.get(resource.storage_key(None, name)) is None:
            await operations.create(
                resource, None, system_priority_class(name), WriteOptions(server_built=True)
            )


def _known_system_class_error(name: str, value: object, global_default: object) -> str:
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known[0]:
        return f"value of {name} PriorityClass must be {known[0]}"
    if global_default is True:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


class PriorityClassBehaviour(KindBehaviour):
    """PriorityClass rules: reserved names and values, an immutable value."""

    def kind_errors(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str,
    ) -> list[FieldError]:
        errors: list[FieldError] = []
        name = str((obj.get("metadata") or {}).get("name") or "")
        value = obj.get("value")
        if name.startswith(SYSTEM_PREFIX):
            problem = _known_system_class_error(name, value, obj.get("globalDefault"))
            if problem:
                errors.append(
                    fe.forbidden(
                        "metadata.name",
                        f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for "
                        f"system use only. error: {problem}",
                    )
                )
        elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
            errors.append(
                fe.forbidden(
                    "value",
                    "maximum allowed value of a user defined priority is "
                    f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
                )
            )
        if old is not None and old.get("value") != value:
            errors.append(fe.forbidden("value", "may not be changed in an update."))
        return errors
