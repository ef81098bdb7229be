"""The per-kind rules of built-in objects beyond their schemas, by group and kind.

Each rule is upstream's ``Validate<Kind>`` (on create) / ``Validate<Kind>Update`` (``old`` set),
minus the ``ObjectMeta`` part the server checks for every object: the spec rules a schema
cannot express (selectors matching template labels, non-negative counts, strategies, port
ranges, key names, sizes) and the fields that cannot change once set. Writes through
``/status`` get the kind's status rules (workloads' replica counts) instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver.validation.apps import (
    validate_daemon_set,
    validate_deployment,
    validate_replica_set,
    validate_stateful_set,
)
from setpoint.cluster.apiserver.validation.apps_status import (
    validate_daemon_set_status,
    validate_deployment_status,
    validate_replica_set_status,
    validate_stateful_set_status,
)
from setpoint.cluster.apiserver.validation.batch import validate_cron_job, validate_job
from setpoint.cluster.apiserver.validation.coordination import validate_lease
from setpoint.cluster.apiserver.validation.core import (
    validate_config_map,
    validate_secret,
    validate_service,
)
from setpoint.cluster.apiserver.validation.rbac import (
    validate_cluster_role,
    validate_cluster_role_binding,
    validate_role,
    validate_role_binding,
)

#: A kind's rules: the object, and the stored object on update (None on create).
KindRule = Callable[[dict[str, Any], dict[str, Any] | None], list[FieldError]]

KIND_RULES: Final[dict[tuple[str, str], KindRule]] = {
    ("apps", "Deployment"): validate_deployment,
    ("apps", "ReplicaSet"): validate_replica_set,
    ("apps", "StatefulSet"): validate_stateful_set,
    ("apps", "DaemonSet"): validate_daemon_set,
    ("batch", "Job"): validate_job,
    ("batch", "CronJob"): validate_cron_job,
    ("", "Service"): validate_service,
    ("", "ConfigMap"): validate_config_map,
    ("", "Secret"): validate_secret,
    ("coordination.k8s.io", "Lease"): validate_lease,
    ("rbac.authorization.k8s.io", "Role"): validate_role,
    ("rbac.authorization.k8s.io", "ClusterRole"): validate_cluster_role,
    ("rbac.authorization.k8s.io", "RoleBinding"): validate_role_binding,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): validate_cluster_role_binding,
}


#: Rules of ``/status`` writes.
STATUS_RULES: Final[dict[tuple[str, str], KindRule]] = {
    ("apps", "Deployment"): validate_deployment_status,
    ("apps", "ReplicaSet"): validate_replica_set_status,
    ("apps", "StatefulSet"): validate_stateful_set_status,
    ("apps", "DaemonSet"): validate_daemon_set_status,
}


def builtin_kind_errors(
    group: str, kind: str, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str
) -> list[FieldError]:
    """The kind's own problems with ``obj`` (none for kinds without rules)."""
    if subresource == "status":
        rule = STATUS_RULES.get((group, kind))
    elif subresource:
        return []
    else:
        rule = KIND_RULES.get((group, kind))
    return rule(obj, old) if rule is not None else []
