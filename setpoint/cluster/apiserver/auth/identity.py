"""The identity behind a request (``user.Info`` upstream)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final


@dataclass(frozen=True, slots=True)
class UserInfo:
    """A user as authentication describes it: name, uid, groups and extra attributes."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``authentication.k8s.io`` ``UserInfo`` object (empty fields left out)."""
        document: dict[str, Any] = {"username": self.username}
        if self.uid:
            document["uid"] = self.uid
        if self.groups:
            document["groups"] = list(self.groups)
        if self.extra:
            document["extra"] = {key: list(values) for key, values in self.extra.items()}
        return document


#: Members of this group are allowed every request (kube-apiserver's privileged group).
PRIVILEGED_GROUP: Final = "system:masters"
#: Every authenticated user is in this group.
AUTHENTICATED_GROUP: Final = "system:authenticated"

#: The user the local cluster's admin token stands for.
ADMIN: Final = UserInfo("setpoint-admin", (PRIVILEGED_GROUP, AUTHENTICATED_GROUP))
