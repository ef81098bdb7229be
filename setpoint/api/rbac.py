"""RBAC declarations: the permissions an operator asks for beyond what its code implies.

``setpoint generate`` infers most of an operator's Role from what its reconcilers watch, own
and write. What it cannot see — a Secret read by name, a call to another API — is declared
next to the reconciler::

    @op.reconciler(for_=Foo, permissions=[Permission("", "secrets", ["get"], reason="TLS key")])

These are plain data (no I/O), shared by the runtime that stores them and the generator.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["READ_VERBS", "SENSITIVE_RESOURCES", "WRITE_VERBS", "Permission"]

READ_VERBS = ("get", "list", "watch")
WRITE_VERBS = ("create", "update", "patch", "delete")

#: (api group, resource) pairs whose access is dangerous enough to be called out in the
#: generated Role: reading secrets, editing RBAC (escalation) or admission webhooks.
SENSITIVE_RESOURCES = frozenset(
    {
        ("", "secrets"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
    }
)


@dataclass(frozen=True)
class Permission:
    """One RBAC rule an operator declares: ``Permission(api_group, resource, verbs)``.

    ``resource`` may name a subresource (``"pods/log"``); ``resource_names`` narrows the
    rule to named objects; ``reason`` is written beside the rule in the generated Role.
    Wildcards (``*``) are refused: a least-privilege Role names what it needs.
    """

    api_group: str
    resource: str
    verbs: tuple[str, ...] | list[str]
    resource_names: tuple[str, ...] | list[str] = ()
    reason: str = ""

    def __post_init__(self) -> None:
        if "*" in (self.api_group, self.resource) or "*" in self.verbs:
            raise ValueError(
                f"Permission({self.api_group!r}, {self.resource!r}, {list(self.verbs)}): "
                "wildcards are not allowed; name the group, resource and verbs"
            )
        if not self.resource or not self.verbs:
            raise ValueError("Permission needs a resource and at least one verb")
        object.__setattr__(self, "verbs", tuple(self.verbs))
        object.__setattr__(self, "resource_names", tuple(self.resource_names))

    @property
    def sensitive(self) -> bool:
        """Whether this grants access that the generated Role calls out."""
        base = self.resource.split("/", 1)[0]
        if (self.api_group, base) != ("", "secrets"):
            return (self.api_group, base) in SENSITIVE_RESOURCES and any(
                verb not in READ_VERBS for verb in self.verbs
            )
        return True
