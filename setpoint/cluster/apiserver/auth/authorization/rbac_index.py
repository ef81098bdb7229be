"""The RBAC objects in memory, indexed by subject, kept current by one storage watch.

Authorizing a request must not scan every binding: bindings are indexed by the subject they
name (a user, a group, or a service account, which is the user
``system:serviceaccount:NS:NAME``), cluster-wide for ClusterRoleBindings and per namespace for
RoleBindings, so a decision looks at the bindings of the caller's name and groups only. Roles
are kept as parsed rules. Like upstream's informers the index follows a watch: a write is
seen by requests that arrive after the write was acknowledged (the watch is fed before the
reply is sent).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from setpoint.cluster.apiserver.auth.authorization.rules import PolicyRule, rules_of
from setpoint.cluster.apiserver.auth.identity import UserInfo
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.storage import Storage, Watch, WatchOverflowError

log = logging.getLogger(__name__)

RBAC_GROUP: Final = "rbac.authorization.k8s.io"
#: The storage prefix of the four RBAC resources.
RBAC_PREFIX: Final = f"/{RBAC_GROUP}/"
SERVICE_ACCOUNT_PREFIX: Final = "system:serviceaccount:"
#: Enough for a burst of bindings created by a test suite in one loop turn.
WATCH_BUFFER: Final = 100_000

SubjectKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Subject:
    """A binding's subject: kind ``User``, ``Group`` or ``ServiceAccount``."""

    kind: str
    name: str
    namespace: str = ""

    def key(self, binding_namespace: str) -> SubjectKey | None:
        """The index key of the identity this subject names (None: it names nobody)."""
        if self.kind == "User":
            return ("User", self.name)
        if self.kind == "Group":
            return ("Group", self.name)
        if self.kind == "ServiceAccount":
            namespace = self.namespace or binding_namespace
            if not namespace:
                return None
            return ("User", f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{self.name}")
        return None

    def describe(self, binding_namespace: str) -> str:
        """``User "alice"`` / ``ServiceAccount "sa/ns"`` (upstream's ``describeSubject``)."""
        if self.kind == "ServiceAccount":
            namespace = self.namespace or binding_namespace
            return f'{self.kind} "{self.name}/{namespace}"'
        return f'{self.kind} "{self.name}"'


@dataclass(frozen=True, slots=True)
class Binding:
    """A RoleBinding (``namespace`` set) or a ClusterRoleBinding."""

    name: str
    namespace: str
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    def describe(self, subject: Subject) -> str:
        """Where an allowing rule came from, as upstream's authorizer reason names it."""
        if self.namespace:
            return (
                f'RoleBinding "{self.name}/{self.namespace}" of {self.role_kind} '
                f'"{self.role_name}" to {subject.describe(self.namespace)}'
            )
        return (
            f'ClusterRoleBinding "{self.name}" of {self.role_kind} "{self.role_name}" '
            f"to {subject.describe('')}"
        )


def user_keys(user: UserInfo) -> list[SubjectKey]:
    """The index keys that may name ``user``: its name and each of its groups."""
    return [("User", user.username), *(("Group", group) for group in user.groups)]


def _binding_of(obj: dict[str, Any]) -> Binding:
    metadata = obj.get("metadata") or {}
    ref_value = obj.get("roleRef")
    ref: dict[str, Any] = ref_value if isinstance(ref_value, dict) else {}
    subjects: list[Subject] = []
    for item in obj.get("subjects") or []:
        if isinstance(item, dict):
            subjects.append(
                Subject(
                    str(item.get("kind") or ""),
                    str(item.get("name") or ""),
                    str(item.get("namespace") or ""),
                )
            )
    return Binding(
        str(metadata.get("name") or ""),
        str(metadata.get("namespace") or ""),
        str(ref.get("kind") or ""),
        str(ref.get("name") or ""),
        tuple(subjects),
    )


class RBACIndex:
    """Roles, ClusterRoles and their bindings, by subject; :meth:`start` before use."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.roles: dict[tuple[str, str], tuple[PolicyRule, ...]] = {}
        self.cluster_roles: dict[str, tuple[PolicyRule, ...]] = {}
        #: The stored ClusterRole objects (aggregation reads their labels and rules).
        self.cluster_role_objects: dict[str, dict[str, Any]] = {}
        self._cluster_bindings: dict[str, Binding] = {}
        self._bindings: dict[tuple[str, str], Binding] = {}
        self._cluster_by_subject: dict[SubjectKey, set[str]] = {}
        self._by_subject: dict[tuple[str, SubjectKey], set[str]] = {}
        #: The revision of each indexed object, by storage key.
        self._revisions: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        #: Called after a ClusterRole was added, changed or removed (aggregation listens).
        self.on_cluster_role_change: list[Callable[[], None]] = []

    # -- reading ---------------------------------------------------------------------

    def cluster_bindings_for(self, user: UserInfo) -> Iterator[tuple[Binding, Subject]]:
        """The ClusterRoleBindings naming ``user`` (by name, then by subject), with the
        subject that names it."""
        names: set[str] = set()
        for key in user_keys(user):
            names |= self._cluster_by_subject.get(key, set())
        for name in sorted(names):
            binding = self._cluster_bindings[name]
            subject = _matching_subject(binding, user)
            if subject is not None:
                yield binding, subject

    def bindings_for(self, user: UserInfo, namespace: str) -> Iterator[tuple[Binding, Subject]]:
        """The RoleBindings in ``namespace`` naming ``user``, with the subject that names it."""
        names: set[str] = set()
        for key in user_keys(user):
            names |= self._by_subject.get((namespace, key), set())
        for name in sorted(names):
            binding = self._bindings[(namespace, name)]
            subject = _matching_subject(binding, user)
            if subject is not None:
                yield binding, subject

    def role_rules(self, kind: str, name: str, namespace: str) -> tuple[PolicyRule, ...] | None:
        """The rules of the role a binding refers to (None: no such role)."""
        if kind == "ClusterRole":
            return self.cluster_roles.get(name)
        if kind == "Role":
            return self.roles.get((namespace, name))
        return None

    def current(self) -> bool:
        """Whether the index holds exactly the stored RBAC objects (at their revisions)."""
        stored = {record.key: record.revision for record in self._storage.list(RBAC_PREFIX)}
        return stored == self._revisions

    async def caught_up(self) -> None:
        """Return once :meth:`current` (for tests and tools that just wrote RBAC objects)."""
        while not self.current():
            self._changed.clear()
            await self._changed.wait()

    # -- keeping current ----------------------------------------------------------------

    async def start(self) -> None:
        """List the RBAC objects, then follow their changes in the background."""
        watch = self._list_and_watch()
        self._task = asyncio.create_task(self._follow(watch), name="rbac-index")

    async def stop(self) -> None:
        """Stop following changes."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _list_and_watch(self) -> Watch:
        """Relist, and watch from the revision listed (no await between: nothing is missed,
        and the history cannot move past that revision in between)."""
        revision = self._storage.revision
        self.roles.clear()
        self.cluster_roles.clear()
        self.cluster_role_objects.clear()
        self._cluster_bindings.clear()
        self._bindings.clear()
        self._cluster_by_subject.clear()
        self._by_subject.clear()
        self._revisions.clear()
        for record in self._storage.list(RBAC_PREFIX):
            self._put(record.key, decode(record.value))
            self._revisions[record.key] = record.revision
        watch = self._storage.watch(RBAC_PREFIX, revision, buffer=WATCH_BUFFER)
        self._cluster_roles_changed()
        self._changed.set()
        return watch

    async def _follow(self, watch: Watch) -> None:
        while True:
            try:
                async for event in watch:
                    self._remove(event.key)
                    self._revisions.pop(event.key, None)
                    if event.type != "DELETED":
                        self._put(event.key, decode(event.value))
                        self._revisions[event.key] = event.revision
                    self._changed.set()
                    if event.key.startswith(f"{RBAC_PREFIX}clusterroles/"):
                        self._cluster_roles_changed()
                return  # the storage closed the watch: it is shutting down
            except WatchOverflowError:
                log.warning("RBAC index fell behind; listing again")
            finally:
                watch.close()
            watch = self._list_and_watch()

    def _cluster_roles_changed(self) -> None:
        for callback in self.on_cluster_role_change:
            try:
                callback()
            except Exception:
                log.exception("ClusterRole change callback failed")

    def _put(self, key: str, obj: dict[str, Any]) -> None:
        parts = key[len(RBAC_PREFIX) :].split("/")
        resource = parts[0]
        if resource == "roles" and len(parts) == 3:
            self.roles[(parts[1], parts[2])] = rules_of(obj)
        elif resource == "clusterroles" and len(parts) == 2:
            self.cluster_roles[parts[1]] = rules_of(obj)
            self.cluster_role_objects[parts[1]] = obj
        elif resource == "rolebindings" and len(parts) == 3:
            binding = _binding_of(obj)
            self._bindings[(parts[1], parts[2])] = binding
            for subject in binding.subjects:
                subject_key = subject.key(parts[1])
                if subject_key is not None:
                    self._by_subject.setdefault((parts[1], subject_key), set()).add(parts[2])
        elif resource == "clusterrolebindings" and len(parts) == 2:
            binding = _binding_of(obj)
            self._cluster_bindings[parts[1]] = binding
            for subject in binding.subjects:
                subject_key = subject.key("")
                if subject_key is not None:
                    self._cluster_by_subject.setdefault(subject_key, set()).add(parts[1])

    def _remove(self, key: str) -> None:
        parts = key[len(RBAC_PREFIX) :].split("/")
        resource = parts[0]
        if resource == "roles" and len(parts) == 3:
            self.roles.pop((parts[1], parts[2]), None)
        elif resource == "clusterroles" and len(parts) == 2:
            self.cluster_roles.pop(parts[1], None)
            self.cluster_role_objects.pop(parts[1], None)
        elif resource == "rolebindings" and len(parts) == 3:
            binding = self._bindings.pop((parts[1], parts[2]), None)
            if binding is not None:
                for subject in binding.subjects:
                    subject_key = subject.key(parts[1])
                    if subject_key is not None:
                        _discard(self._by_subject, (parts[1], subject_key), parts[2])
        elif resource == "clusterrolebindings" and len(parts) == 2:
            cluster_binding = self._cluster_bindings.pop(parts[1], None)
            if cluster_binding is not None:
                for subject in cluster_binding.subjects:
                    subject_key = subject.key("")
                    if subject_key is not None:
                        _discard(self._cluster_by_subject, subject_key, parts[1])


def _discard(table: dict[Any, set[str]], key: Any, name: str) -> None:
    names = table.get(key)
    if names is not None:
        names.discard(name)
        if not names:
            del table[key]


def _matching_subject(binding: Binding, user: UserInfo) -> Subject | None:
    """The first subject of ``binding`` that names ``user`` (upstream's ``appliesTo``)."""
    wanted = set(user_keys(user))
    for subject in binding.subjects:
        if subject.key(binding.namespace) in wanted:
            return subject
    return None
