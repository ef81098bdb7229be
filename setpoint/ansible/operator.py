"""``AnsibleOperator``: an ``Operator`` whose controllers run the roles and playbooks of a
watches.yaml.

One controller per watch, named ``<kind>.<group>``, reconciling the watched kind with an
:class:`~setpoint.ansible.reconciler.AnsibleReconciler`. Its primary events pass Operator SDK's
predicates (a new generation, or any change of a kind without generations; annotation changes
with ``watchAnnotationsChanges``; the watch's ``selector``). The proxy Ansible talks to runs with
the operator; when a run creates a dependent, the CR's controller starts watching that kind
(``watchDependentResources``, minus the ``blacklist``), so a dependent changed or deleted by
someone else runs the reconcile again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from setpoint.ansible.metrics import record_build_info
from setpoint.ansible.proxy import (
    PRIMARY_RESOURCE_ANNOTATION,
    PRIMARY_RESOURCE_TYPE_ANNOTATION,
    DependentCreated,
    OwnerInjectingProxy,
)
from setpoint.ansible.reconciler import AnsibleReconciler
from setpoint.ansible.runner import default_artifacts_root
from setpoint.ansible.triggers import (
    DependentChanged,
    NoGeneration,
    PrimaryTrigger,
    TriggeringAnnotationHandler,
    TriggeringOwnerHandler,
    Triggers,
)
from setpoint.ansible.user_metrics import DEFAULT_USER_METRICS_PORT, UserMetricsServer
from setpoint.ansible.watches import GroupVersionKind, Watch, load_watches
from setpoint.controller.handlers import Handler
from setpoint.controller.predicates import (
    AnnotationsChanged,
    GenerationChanged,
    LabelSelectorPredicate,
    Predicate,
    or_,
)
from setpoint.controller.source import KindSource
from setpoint.manager.operator import Operator

__all__ = ["AnsibleOperator", "load_operator", "operator_name_for"]

log = logging.getLogger("setpoint.ansible")


def operator_name_for(directory: Path) -> str:
    """A DNS label from the project directory's name (``memcached-operator``)."""
    name = re.sub(r"[^a-z0-9-]+", "-", directory.resolve().name.lower()).strip("-")[:63]
    return name.strip("-") or "ansible-operator"


class _Proxy:
    """The proxy as a manager runnable; reconciles wait for its address."""

    needs_leader_election = False

    def __init__(self, operator: AnsibleOperator) -> None:
        self.operator = operator
        self.server: OwnerInjectingProxy | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        operator = self.operator
        self.server = OwnerInjectingProxy(
            operator.client,
            operator.cache,
            namespaces=operator._namespaces,
            on_dependent=operator._watch_dependent,
        )
        await self.server.start()
        self._ready.set()

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()

    async def url(self) -> str:
        await self._ready.wait()
        assert self.server is not None
        return self.server.url


class AnsibleOperator(Operator):
    """An operator made of a watches.yaml: ``AnsibleOperator(watches, name=...)``.

    ``watches``: the parsed entries (see :func:`load_operator` to read a file).
    ``snake_case_parameters``: when given, overrides every watch's ``snakeCaseParameters``
    (``False`` keeps the CR's field names as they are). ``artifacts_root``: where runs keep
    their directories (default: ``$SETPOINT_ANSIBLE_ARTIFACTS`` or ``/tmp/setpoint-ansible``).
    ``user_metrics_port``: where the ``osdk_metric`` module's metrics are received on
    127.0.0.1 (Operator SDK's 5050; a free port when taken, ``0`` for any). Other options are
    the ``Operator``'s.
    """

    def __init__(
        self,
        watches: Sequence[Watch],
        name: str = "ansible-operator",
        client: Any = None,
        *,
        artifacts_root: Path | None = None,
        user_metrics_port: int = DEFAULT_USER_METRICS_PORT,
        **manager_options: Any,
    ) -> None:
        super().__init__(name, client, **manager_options)
        self.watches = list(watches)
        self.artifacts_root = artifacts_root or default_artifacts_root()
        self.triggers = Triggers()
        self.proxy = _Proxy(self)
        self.user_metrics = UserMetricsServer(user_metrics_port)
        self.add(self.user_metrics, needs_leader_election=False)
        record_build_info()
        self._manager_options = dict(manager_options)
        self._dependent_watches: set[tuple[str, str, str, bool]] = set()
        self._dependent_lock = asyncio.Lock()
        self.reconcilers: dict[GroupVersionKind, AnsibleReconciler] = {}
        self.add(self.proxy, needs_leader_election=False)
        for watch in self.watches:
            self._register(watch)

    def fresh(self, client: Any = None, **manager_options: Any) -> AnsibleOperator:
        """A new, unstarted copy with the same watches (a manager runs once)."""
        return AnsibleOperator(
            self.watches,
            self.name,
            client,
            artifacts_root=self.artifacts_root,
            user_metrics_port=self.user_metrics.port,
            **manager_options,
        )

    def _register(self, watch: Watch) -> None:
        reconciler = AnsibleReconciler(
            watch,
            self.proxy,
            artifacts_root=self.artifacts_root,
            triggers=self.triggers,
            user_metrics=self.user_metrics,
        )
        self.reconcilers[watch.gvk] = reconciler
        changes: Predicate = or_(GenerationChanged(), NoGeneration())
        if watch.watch_annotations_changes:
            changes = or_(AnnotationsChanged(), changes)
        predicates: list[Predicate] = [changes]
        if watch.selector:
            predicates.append(LabelSelectorPredicate(watch.selector))
        predicates.append(PrimaryTrigger(self.triggers))
        self.add_reconciler(
            reconciler,
            for_=(watch.gvk.api_version, watch.gvk.kind),
            for_predicates=predicates,
            name=watch.name,
            max_concurrent=watch.max_concurrent_reconciles,
            # A run's own status writes must not start another run, but Operator SDK re-reads
            # and acts on every event: the generation predicate above does the filtering.
            ignore_own_writes=True,
        )

    async def _watch_dependent(self, created: DependentCreated) -> None:
        """Start watching a dependent kind for the CR kind's controller (once per kind)."""
        owner = created.owner
        gvk = _gvk(owner.api_version, owner.kind)
        watch = next((w for w in self.watches if w.gvk == gvk), None)
        if watch is None or not watch.watch_dependent_resources:
            return
        child = _gvk(created.api_version, created.kind)
        if child in watch.blacklist:
            return
        # Operator SDK's proxy (inject_owner.go, addWatchToController in proxy.go): only what
        # the cache can watch (all namespaces, or the dependent's among them); tied by owner
        # reference, or by annotation when namespaced, or cluster-scoped with
        # watchClusterScopedResources.
        if self._namespaces is not None and created.namespace not in self._namespaces:
            return
        if not created.by_owner_reference and not (
            created.namespaced or watch.watch_cluster_scoped_resources
        ):
            return
        key = (watch.name, created.api_version, created.kind, created.by_owner_reference)
        async with self._dependent_lock:
            if key in self._dependent_watches:
                return
            controller = next((c for c in self.controllers if c.name == watch.name), None)
            if controller is None:
                return
            handler: Handler
            if created.by_owner_reference:
                handler = TriggeringOwnerHandler(owner.api_version, owner.kind, self.triggers)
            else:
                handler = TriggeringAnnotationHandler(
                    owner.group_kind,
                    self.triggers,
                    PRIMARY_RESOURCE_ANNOTATION,
                    PRIMARY_RESOURCE_TYPE_ANNOTATION,
                )
            source = KindSource(
                self.cache,
                created.api_version,
                created.kind,
                handler,
                [DependentChanged()],
                resolve_scope=_scope_resolver(self),
            )
            await controller.watch(source)
            self._dependent_watches.add(key)
            log.info(
                "watching dependent %s %s for %s",
                created.api_version,
                created.kind,
                watch.name,
                extra={"controller": watch.name},
            )


def _scope_resolver(operator: AnsibleOperator) -> Any:
    async def namespaced(api_version: str, kind: str) -> bool:
        return (await operator.client.mapper.resource_for(api_version, kind)).namespaced

    return namespaced


def _gvk(api_version: str, kind: str) -> GroupVersionKind:
    group, _, version = api_version.rpartition("/")
    return GroupVersionKind(group, version, kind)


def load_operator(
    path: str | os.PathLike[str], *, name: str | None = None, **options: Any
) -> AnsibleOperator:
    """An :class:`AnsibleOperator` from a watches.yaml file or a directory holding one.

    The name defaults to the project directory's (``memcached-operator``). Raises
    ``WatchesError`` naming the entry and field of any problem.
    """
    location = Path(path)
    directory = location if location.is_dir() else location.parent
    watches = load_watches(location)
    return AnsibleOperator(watches, name or operator_name_for(directory), **options)
