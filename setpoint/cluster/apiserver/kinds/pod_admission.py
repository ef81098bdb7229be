"""The mutating admission plugins kube-apiserver 1.32 runs on every new pod by default.

- **DefaultTolerationSeconds** (``plugin/pkg/admission/defaulttolerationseconds``): a pod that
  does not already tolerate them gets ``node.kubernetes.io/not-ready`` and
  ``node.kubernetes.io/unreachable`` ``NoExecute`` tolerations for 300 s.
- **Priority** (``plugin/pkg/admission/priority``): ``spec.priority`` and
  ``spec.preemptionPolicy`` from the pod's PriorityClass, else from the class marked
  ``globalDefault``, else 0 and ``PreemptLowerPriority``; a class that does not exist, or a
  priority the pod sets itself that differs from its class's, is refused (403).
- **ServiceAccount** (``plugin/pkg/admission/serviceaccount``): ``serviceAccountName`` defaults
  to ``default``; unless the pod or its ServiceAccount says ``automountServiceAccountToken:
  false``, a projected volume ``kube-api-access-<5 random>`` (a bound token for 3607 s, the
  ``kube-root-ca.crt`` ConfigMap's ``ca.crt``, the namespace from the downward API) is added
  and mounted read-only at ``/var/run/secrets/kubernetes.io/serviceaccount`` in every
  container and init container that has no mount there yet.

Unlike upstream, a pod whose ServiceAccount does not exist (yet) is admitted as if it did: the
local cluster may run without the controllers that create ``default`` accounts.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any, Final

from setpoint.cluster.apiserver import status_errors

NOT_READY_TAINT: Final = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT: Final = "node.kubernetes.io/unreachable"
NO_EXECUTE: Final = "NoExecute"
#: ``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``.
DEFAULT_TOLERATION_SECONDS: Final = 300

PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"
#: The priority of a pod without a class when no class is the global default.
DEFAULT_PRIORITY: Final = 0
#: The classes kube-apiserver creates at start (``pkg/apis/scheduling``): always known.
SYSTEM_PRIORITY_CLASSES: Final = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}

TOKEN_VOLUME_PREFIX: Final = "kube-api-access-"
TOKEN_MOUNT_PATH: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
#: ``WarnOnlyBoundTokenExpirationSeconds``: one hour and seven seconds, so that the kubelet's
#: refresh and a client's re-read can be told apart in the audit log.
TOKEN_EXPIRATION_SECONDS: Final = 3607
ROOT_CA_CONFIG_MAP: Final = "kube-root-ca.crt"
#: ``utilrand.String``'s alphabet (no vowels, no confusable characters).
_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
_NAME_SUFFIX_LENGTH: Final = 5
_PROJECTED_DEFAULT_MODE: Final = 0o644

#: Reads one object by (namespace or None, name): its JSON, or None when absent.
ObjectReader = Callable[[str | None, str], Mapping[str, Any] | None]


def default_tolerations(spec: dict[str, Any]) -> None:
    """DefaultTolerationSeconds: add the not-ready and unreachable tolerations if missing."""
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    not_ready = unreachable = False
    for toleration in tolerations:
        if not isinstance(toleration, dict):
            continue
        key = toleration.get("key") or ""
        if (toleration.get("effect") or "") not in ("", NO_EXECUTE):
            continue
        not_ready = not_ready or key in ("", NOT_READY_TAINT)
        unreachable = unreachable or key in ("", UNREACHABLE_TAINT)
    added = [
        _toleration(taint)
        for taint, present in ((NOT_READY_TAINT, not_ready), (UNREACHABLE_TAINT, unreachable))
        if not present
    ]
    if added:
        spec["tolerations"] = [*tolerations, *added]


def _toleration(taint: str) -> dict[str, Any]:
    return {
        "key": taint,
        "operator": "Exists",
        "effect": NO_EXECUTE,
        "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
    }


def admit_priority(
    spec: dict[str, Any],
    pod_name: str,
    read_class: ObjectReader,
    list_classes: Callable[[], list[Mapping[str, Any]]],
) -> None:
    """Priority: resolve the pod's priority and preemption policy (403 when they cannot be)."""
    class_name = spec.get("priorityClassName") or ""
    preemption: str | None
    if not class_name:
        default = _global_default(list_classes())
        if default is None:
            priority, preemption = DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY
        else:
            class_name = str(default["metadata"]["name"])
            priority, preemption = _class_values(default)
            spec["priorityClassName"] = class_name
    else:
        found = read_class(None, class_name)
        if found is not None:
            priority, preemption = _class_values(found)
        elif class_name in SYSTEM_PRIORITY_CLASSES:
            priority, preemption = SYSTEM_PRIORITY_CLASSES[class_name], PREEMPT_LOWER_PRIORITY
        else:
            raise status_errors.forbidden(
                "", "pods", pod_name, f"no PriorityClass with name {class_name} was found"
            )
    given = spec.get("priority")
    if given is not None and given != priority:
        raise status_errors.forbidden(
            "",
            "pods",
            pod_name,
            f"the integer value of priority ({given}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass name",
        )
    spec["priority"] = priority
    if preemption is not None:
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != preemption:
            raise status_errors.forbidden(
                "",
                "pods",
                pod_name,
                f"the string value of PreemptionPolicy ({given_policy}) must not be provided in "
                f"pod spec; priority admission controller computed {preemption} from the given "
                "PriorityClass name",
            )
        spec["preemptionPolicy"] = preemption


def _global_default(classes: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The global default class; with several, the lowest value wins (as upstream)."""
    defaults = [c for c in classes if c.get("globalDefault") is True]
    return min(defaults, key=lambda c: int(c.get("value") or 0), default=None)


def _class_values(priority_class: Mapping[str, Any]) -> tuple[int, str | None]:
    value = priority_class.get("value")
    policy = priority_class.get("preemptionPolicy")
    return (
        int(value) if isinstance(value, int) else DEFAULT_PRIORITY,
        str(policy) if isinstance(policy, str) else PREEMPT_LOWER_PRIORITY,
    )


def admit_service_account(spec: dict[str, Any], namespace: str, read_account: ObjectReader) -> None:
    """ServiceAccount: the default account name and the API access volume and mounts."""
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = spec["serviceAccount"] = account
    if not _automounts(spec, read_account(namespace, account)):
        return
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        volumes = []
    existing = next(
        (
            v["name"]
            for v in volumes
            if isinstance(v, dict)
            and isinstance(v.get("name"), str)
            and v["name"].startswith(TOKEN_VOLUME_PREFIX)
        ),
        None,
    )
    name = existing or TOKEN_VOLUME_PREFIX + "".join(
        secrets.choice(_NAME_ALPHABET) for _ in range(_NAME_SUFFIX_LENGTH)
    )
    mounted = False
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            mounts = container.get("volumeMounts")
            if not isinstance(mounts, list):
                mounts = []
            if any(isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue
            container["volumeMounts"] = [
                *mounts,
                {"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH},
            ]
            mounted = True
    if mounted and existing is None:
        spec["volumes"] = [*volumes, api_access_volume(name)]


def _automounts(spec: Mapping[str, Any], account: Mapping[str, Any] | None) -> bool:
    """The pod's ``automountServiceAccountToken``, else its account's, else true."""
    own = spec.get("automountServiceAccountToken")
    if isinstance(own, bool):
        return own
    accounts = account.get("automountServiceAccountToken") if account is not None else None
    return accounts if isinstance(accounts, bool) else True


def api_access_volume(name: str) -> dict[str, Any]:
    """The projected volume the ServiceAccount admission adds, field for field as upstream."""
    return {
        "name": name,
        "projected": {
            "sources": [
                {
                    "serviceAccountToken": {
                        "expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                        "path": "token",
                    }
                },
                {
                    "configMap": {
                        "name": ROOT_CA_CONFIG_MAP,
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
            "defaultMode": _PROJECTED_DEFAULT_MODE,
        },
    }
