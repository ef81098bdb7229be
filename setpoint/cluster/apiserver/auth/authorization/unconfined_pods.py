"""Who may make code run when ``--run-pods`` cannot isolate pods.

Under ``--run-pods`` a pod's command runs on the machine. Where the kubelet cannot sandbox it
(no bubblewrap, or no unprivileged user namespaces: see
:mod:`setpoint.cluster.controllers.kubelet.sandbox`), it would run as the server's own user, able
to read the data directory and its admin credentials: whoever may create a pod would be
cluster-admin. So, unless the cluster was started with ``--run-pods=unsafe``, only members of
``system:masters`` may then write what makes code run: pods and the workloads whose controllers
create pods from a template (create, update, patch), and ``exec``/``attach``/
``ephemeralcontainers`` of pods. Everyone else gets 403 naming the reason and the flag. The
built-in controllers write through the registry, not this path: a Deployment an admin created
still gets its pods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.identity import PRIVILEGED_GROUP, UserInfo

#: (group, plural) of what runs code: pods and the kinds that create pods from a template.
POD_MAKERS: Final = frozenset(
    {
        ("", "pods"),
        ("", "replicationcontrollers"),
        ("", "podtemplates"),
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("apps", "daemonsets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
    }
)
#: Pod subresources that run a command in a container (any method).
RUNNING_SUBRESOURCES: Final = frozenset({"exec", "attach", "ephemeralcontainers"})
_WRITES: Final = frozenset({"POST", "PUT", "PATCH"})


class UnconfinedPodsGate:
    """Refuses non-admins what would run code unconfined; ``reason``: why isolation is off."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def check(self, method: str, parts: Sequence[str], user: UserInfo) -> None:
        """Raise 403 when ``user`` may not make this request (``parts``: the URL path)."""
        if PRIVILEGED_GROUP in user.groups:
            return
        target = _target(parts)
        if target is None:
            return
        group, plural, name, subresource = target
        if (group, plural) not in POD_MAKERS:
            return
        if subresource:
            if not (plural == "pods" and subresource in RUNNING_SUBRESOURCES):
                return
        elif method not in _WRITES:
            return
        raise status_errors.forbidden(
            group,
            plural,
            name,
            f"--run-pods cannot isolate pods on this machine ({self.reason}), so only members "
            f"of {PRIVILEGED_GROUP} may run code in them; serve the cluster with "
            "--run-pods=unsafe to let every identity that may create pods run code as the "
            "server's user",
        )


def _target(parts: Sequence[str]) -> tuple[str, str, str, str] | None:
    """(group, plural, name, subresource) of a namespaced resource path, else None."""
    if len(parts) >= 2 and parts[0] == "api":
        group, rest = "", list(parts[2:])
    elif len(parts) >= 3 and parts[0] == "apis":
        group, rest = parts[1], list(parts[3:])
    else:
        return None
    if len(rest) < 3 or rest[0] != "namespaces":
        return None
    rest = rest[2:]
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    return group, plural, name, subresource
