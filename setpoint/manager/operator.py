"""`Operator`: a manager with a decorator for reconcile functions — the short way to an operator.

::

    import setpoint

    op = setpoint.Operator("widgets")

    @op.reconciler(for_=("example.com/v1", "Widget"), owns=[("v1", "ConfigMap")])
    async def reconcile(ctx: setpoint.Context, request: setpoint.Request) -> setpoint.Result | None:
        widget = await ctx.get()
        ...

    # `setpoint run widgets.py`, or in code: asyncio.run(op.run())

A reconciler may be an async or a sync function (sync ones run in a thread pool) taking
`(ctx, request)` or just `(request)`, or an object with such a `reconcile` method (the class
form: `op.add_reconciler(WidgetReconciler(), for_=...)`, or decorate the class when it takes no
constructor arguments). `for_`/`owns` take `(api_version, kind)` pairs, `setpoint.kinds`
constants or the user's CRD model classes (then `ctx.get()`/`list()`/`owned()` return instances
of them). Controllers are built when the operator connects to the cluster, so the decorator works
at import time, before any client exists.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from setpoint.api.names import validate_dns1123_label
from setpoint.controller.builder import Builder
from setpoint.controller.controller import Controller
from setpoint.controller.handlers import MapFunction
from setpoint.controller.predicates import Predicate
from setpoint.controller.rate_limiters import RateLimiter
from setpoint.controller.reconcile import Request, Result
from setpoint.controller.source import Source
from setpoint.manager.context import Context
from setpoint.manager.kind_ref import KindRef, kind_of, model_of
from setpoint.manager.manager import Manager, ManagerError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from setpoint.api.rbac import Permission
    from setpoint.controller.recorder import EventRecorder
    from setpoint.webhook.configurations import WebhookDeclaration

__all__ = ["KindRef", "Operator", "ReconcilerDeclaration"]

TargetT = TypeVar("TargetT")


def _positional_arity(fn: Callable[..., Any]) -> int | None:
    """How many positional arguments `fn` requires (None when it takes *args)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    count = 0
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return None
        if (
            parameter.kind
            in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            and parameter.default is inspect.Parameter.empty
        ):
            count += 1
    return count


@dataclass(frozen=True)
class ReconcilerDeclaration:
    """A registered reconciler as generators see it: its kinds, models and permissions."""

    name: str
    for_: tuple[str, str]
    owns: tuple[tuple[str, str], ...]
    watches: tuple[tuple[str, str], ...]
    permissions: tuple[Permission, ...]
    models: dict[tuple[str, str], type[BaseModel]]
    need_leader_election: bool
    #: False: the Role grants exactly ``permissions`` (plus Events), nothing inferred.
    infer_permissions: bool = True


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass
class _Registration:
    target: Any
    for_: tuple[str, str]
    owns: list[tuple[str, str]]
    watches: list[tuple[tuple[str, str], MapFunction]]
    sources: list[Source]
    #: owner-chain paths, each from a directly controlled kind down to a descendant.
    owns_through: list[tuple[tuple[str, str], ...]]
    predicates: list[Predicate]
    for_predicates: list[Predicate]
    owns_predicates: list[Predicate]
    models: dict[tuple[str, str], type[BaseModel]]
    resync: float | None
    ignore_own_writes: bool
    name: str
    max_concurrent: int
    rate_limiter: RateLimiter | None
    reconcile_timeout: float | None
    need_leader_election: bool
    permissions: list[Permission] = dataclasses.field(default_factory=list)
    infer_permissions: bool = True
    controller: Controller | None = None


class _ContextReconciler:
    """Calls a `(ctx, request)` reconciler with a fresh `Context` per request."""

    def __init__(self, operator: Operator, registration: _Registration, fn: Callable[..., Any]):
        self.operator = operator
        self.registration = registration
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.log = logging.getLogger(f"setpoint.controller.{registration.name}")
        # Looked up on the first reconcile (it needs the manager's client), then kept.
        self._recorder: EventRecorder | None = None

    async def reconcile(self, request: Request) -> Result | None:
        registration = self.registration
        operator = self.operator
        api_version, kind = registration.for_
        controller = registration.controller
        recorder = self._recorder
        if recorder is None:
            recorder = self._recorder = operator.get_event_recorder(
                f"{operator.name}/{registration.name}"
            )
        ctx = Context(
            operator,
            registration.name,
            request,
            api_version=api_version,
            kind=kind,
            recorder=recorder,
            log=self.log,
            field_manager=operator.name,
            own_writes=controller.own_writes if controller is not None else None,
            models=registration.models,
            clock=operator.clock,
        )
        if self.is_async:
            result = await self.fn(ctx, request)
        else:
            # to_thread copies the context variables, so logs in the thread keep the key.
            result = await asyncio.to_thread(self.fn, ctx, request)
        if result is not None and inspect.isawaitable(result):
            result = await result
        return result  # type: ignore[no-any-return]


class Operator(Manager):
    """A named `Manager` with `@op.reconciler(...)`; the name labels the Lease and the logs.

    `manager_options` are those of `Manager` (kubeconfig, namespaces, leader_election, clock,
    ...); the Lease is named after the operator unless `leader_election_id` is given.
    `resync` (seconds, default off) re-queues every primary object of every controller that
    often, at low priority (a `reconciler(resync=...)` overrides it per controller).
    """

    def __init__(
        self, name: str, client: Any = None, *, resync: float | None = None, **manager_options: Any
    ) -> None:
        problems = validate_dns1123_label(name)
        if problems:
            raise ManagerError(f"Operator: name {name!r} is not a valid name: {problems[0]}")
        if resync is not None and not resync > 0:
            raise ManagerError(f"Operator: resync must be > 0 seconds, got {resync!r}")
        manager_options.setdefault("leader_election_id", f"{name}-leader-election")
        super().__init__(client, **manager_options)
        self.name = name
        self.resync = resync
        self._registrations: list[_Registration] = []
        self._webhooks: list[WebhookDeclaration] = []
        self._conversions: list[tuple[type[BaseModel], tuple[type[BaseModel], ...]]] = []

    def _webhook_declarations(self) -> list[WebhookDeclaration]:
        return list(self._webhooks)

    @property
    def webhooks(self) -> list[WebhookDeclaration]:
        """The admission webhooks registered (defaulters, validators, raw handlers)."""
        return list(self._webhooks)

    @property
    def conversions(self) -> list[tuple[type[BaseModel], tuple[type[BaseModel], ...]]]:
        """The conversions registered with :meth:`conversion`: ``(hub, spokes)`` each."""
        return list(self._conversions)

    def _add_webhook(self, declaration: WebhookDeclaration) -> None:
        self.add_webhook(declaration.path, declaration.handler)
        self._webhooks.append(declaration)

    def defaulter(self, model: type[BaseModel]) -> Callable[[TargetT], TargetT]:
        """Register the decorated function as the defaulter of `model` objects.

        The function gets the typed object (a `model` instance) on every create and update and
        changes it in place (sync or async); the API server receives a JSON patch of exactly
        what it changed. Served at kubebuilder's `/mutate-<group>-<version>-<kind>`.
        """
        from setpoint.webhook import Defaulter, mutate_path
        from setpoint.webhook.configurations import WebhookDeclaration

        api_version, kind = kind_of(model, "defaulter")

        def register(fn: TargetT) -> TargetT:
            path = mutate_path(*_group_version(api_version), kind)
            handler = Defaulter(model, fn)  # type: ignore[arg-type]
            self._add_webhook(WebhookDeclaration(path, api_version, kind, True, handler))
            return fn

        return register

    def validator(self, model: type[BaseModel]) -> Callable[[TargetT], TargetT]:
        """Register the decorated class (or instance) as the validator of `model` objects.

        Its optional methods `validate_create(obj)`, `validate_update(old, new)` and
        `validate_delete(obj)` (sync or async) return warnings (None, a string or strings) or
        raise `setpoint.webhook.Denied`. A class is instantiated without arguments. Served at
        `/validate-<group>-<version>-<kind>`.
        """
        from setpoint.webhook import Validator, validate_path
        from setpoint.webhook.configurations import WebhookDeclaration

        api_version, kind = kind_of(model, "validator")

        def register(target: TargetT) -> TargetT:
            instance: Any = target() if inspect.isclass(target) else target
            operations = tuple(
                operation
                for operation, method in (
                    ("CREATE", "validate_create"),
                    ("UPDATE", "validate_update"),
                    ("DELETE", "validate_delete"),
                )
                if callable(getattr(instance, method, None))
            )
            if not operations:
                raise TypeError(
                    f"Operator.validator: {target!r} has none of validate_create, "
                    "validate_update, validate_delete"
                )
            handler = Validator(
                model,
                create=getattr(instance, "validate_create", None),
                update=getattr(instance, "validate_update", None),
                delete=getattr(instance, "validate_delete", None),
            )
            path = validate_path(*_group_version(api_version), kind)
            self._add_webhook(
                WebhookDeclaration(path, api_version, kind, False, handler, operations)
            )
            return target

        return register

    def admission_webhook(
        self, path: str, *, mutating: bool = False, for_: KindRef | None = None
    ) -> Callable[[TargetT], TargetT]:
        """Register a raw handler: an async function from `setpoint.webhook.AdmissionRequest`
        to `AdmissionResponse`, served at `path` (for anything the typed handlers do not
        cover)."""

        from setpoint.webhook.configurations import WebhookDeclaration

        def register(fn: TargetT) -> TargetT:
            api_version, kind = kind_of(for_, "for_") if for_ is not None else ("", "")
            self._add_webhook(WebhookDeclaration(path, api_version, kind, mutating, fn))
            return fn

        return register

    def conversion(self, hub: type[BaseModel], *spokes: type[BaseModel]) -> None:
        """Serve conversion between `hub` and the `spokes` (each with `convert_to()` and
        `convert_from(hub)`) at kubebuilder's `/convert`."""
        from setpoint.webhook import Converter
        from setpoint.webhook.paths import CONVERT_PATH

        converter = Converter(hub, spokes)  # type: ignore[arg-type]
        self.add_conversion_webhook(CONVERT_PATH, converter)
        self._conversions.append((hub, spokes))

    def fresh(self, client: Any = None, **manager_options: Any) -> Operator:
        """A new, unstarted Operator with the same name and reconcilers, and these options.

        Runnables added with `add()` are copied when they have a ``for_manager(manager)``
        method (which makes the same runnable for another manager), as
        `setpoint.composite.Metacontroller` has.

        A manager runs once; tests (``setpoint.testing.run_operator``) and programs that run
        an operator again (against another cluster or namespace) start a fresh copy.
        """
        copy = Operator(self.name, client, resync=self.resync, **manager_options)
        for registration in self._registrations:
            copy._registrations.append(dataclasses.replace(registration, controller=None))
        for webhook in self._webhooks:
            copy._add_webhook(webhook)
        for hub, spokes in self._conversions:
            copy.conversion(hub, *spokes)
        for managed in self._runnables:
            # A runnable bound to this operator (e.g. setpoint.composite.Metacontroller) says
            # how to make its twin for the copy; others cannot be copied and are left out.
            for_manager = getattr(managed.target, "for_manager", None)
            if callable(for_manager):
                copy.add(for_manager(copy))
        return copy

    @property
    def declarations(self) -> list[ReconcilerDeclaration]:
        """What each registered reconciler watches, owns and asks for (for generators)."""
        return [
            ReconcilerDeclaration(
                name=r.name,
                for_=r.for_,
                owns=tuple(dict.fromkeys([*r.owns, *(path[0] for path in r.owns_through)])),
                watches=tuple(
                    dict.fromkeys(
                        [
                            *(kind for kind, _ in r.watches),
                            *(kind for path in r.owns_through for kind in path[1:]),
                        ]
                    )
                ),
                permissions=tuple(r.permissions),
                models=dict(r.models),
                need_leader_election=r.need_leader_election,
                infer_permissions=r.infer_permissions,
            )
            for r in self._registrations
        ]

    @property
    def controllers(self) -> list[Controller]:
        """The controllers built so far (after `connect()`)."""
        return [r.controller for r in self._registrations if r.controller is not None]

    def reconciler(
        self,
        *,
        for_: KindRef,
        owns: Sequence[KindRef] = (),
        owns_through: Sequence[Sequence[KindRef]] = (),
        watches: Sequence[tuple[KindRef, MapFunction]] = (),
        sources: Sequence[Source] = (),
        predicates: Sequence[Predicate] = (),
        for_predicates: Sequence[Predicate] = (),
        owns_predicates: Sequence[Predicate] = (),
        name: str | None = None,
        max_concurrent: int = 1,
        rate_limiter: RateLimiter | None = None,
        reconcile_timeout: float | None = None,
        need_leader_election: bool = True,
        permissions: Sequence[Permission] = (),
        infer_permissions: bool = True,
        resync: float | None = None,
        ignore_own_writes: bool = False,
    ) -> Callable[[TargetT], TargetT]:
        """Register the decorated function (or no-argument class) as a controller's reconciler.

        `for_`: the primary kind (its keys are the requests). `owns`: child kinds whose changes
        re-reconcile their controlling owner. `owns_through`: paths of kinds down an owner chain,
        e.g. `[[Deployment, ReplicaSet, Pod]]`: a change of any of them wakes the primary that
        controls the first, followed up through controller references in the cache.
        `watches`: `(kind, map_function)` pairs mapping any object to requests. `sources`:
        custom event sources (e.g. a `ChannelSource` fed from outside the cluster). `predicates`
        filter the events of every watched kind;
        `for_predicates` only those of the primary kind (e.g. `GenerationChangedPredicate()`,
        which must not drop the status-only child events `owns` relies on) and
        `owns_predicates` only those of the owned kinds. `name` defaults to the primary kind in
        lower case. `max_concurrent`: parallel reconciles (of different keys). `resync`:
        re-queue every primary object this often (seconds; default: the operator's, off).
        `ignore_own_writes` (default False: as in controller-runtime, the events of the reconcile's
        own writes wake it again, at most one extra run per burst): True opts in to dropping an
        event that carries exactly what this controller's own write through `ctx` returned; unsafe
        for a reconcile that writes and returns relying on that event (see
        `setpoint.controller.own_writes`). `permissions`: RBAC rules this reconciler needs beyond
        what `for_`/`owns`/`watches` imply (`setpoint.api.rbac.Permission`); `setpoint generate`
        adds them to the operator's Role. `infer_permissions=False`: the Role grants exactly
        `permissions` (and Events), not what `for_`/`owns`/`watches` imply, for a Role narrower than
        the inferred one; the cache then needs get/list/watch declared on every watched kind.
        Returns the decorated object unchanged.
        """

        def register(target: TargetT) -> TargetT:
            instance: Any = target
            if inspect.isclass(target):
                try:
                    instance = target()
                except TypeError as error:
                    raise TypeError(
                        f"Operator.reconciler: cannot create {target.__name__}() without "
                        f"arguments ({error}); create it yourself and call "
                        "op.add_reconciler(instance, for_=...)"
                    ) from None
            self.add_reconciler(
                instance,
                for_=for_,
                owns=owns,
                owns_through=owns_through,
                watches=watches,
                sources=sources,
                predicates=predicates,
                for_predicates=for_predicates,
                owns_predicates=owns_predicates,
                name=name,
                max_concurrent=max_concurrent,
                rate_limiter=rate_limiter,
                reconcile_timeout=reconcile_timeout,
                need_leader_election=need_leader_election,
                permissions=permissions,
                infer_permissions=infer_permissions,
                resync=resync,
                ignore_own_writes=ignore_own_writes,
            )
            return target

        return register

    def add_reconciler(
        self,
        reconciler: Any,
        *,
        for_: KindRef,
        owns: Sequence[KindRef] = (),
        owns_through: Sequence[Sequence[KindRef]] = (),
        watches: Sequence[tuple[KindRef, MapFunction]] = (),
        sources: Sequence[Source] = (),
        predicates: Sequence[Predicate] = (),
        for_predicates: Sequence[Predicate] = (),
        owns_predicates: Sequence[Predicate] = (),
        name: str | None = None,
        max_concurrent: int = 1,
        rate_limiter: RateLimiter | None = None,
        reconcile_timeout: float | None = None,
        need_leader_election: bool = True,
        permissions: Sequence[Permission] = (),
        infer_permissions: bool = True,
        resync: float | None = None,
        ignore_own_writes: bool = False,
    ) -> None:
        """Register a reconciler (function or object with `reconcile`); see `reconciler`."""
        primary = kind_of(for_, "for_")
        controller_name = name or primary[1].lower()
        if any(r.name == controller_name for r in self._registrations):
            raise ManagerError(
                f"Operator {self.name}: a controller named {controller_name!r} is already "
                "registered; pass name= to tell them apart (names label metrics and logs)"
            )
        _check_reconciler(reconciler, controller_name)
        if isinstance(watches, tuple) and len(watches) == 2 and callable(watches[1]):
            raise TypeError("watches: expected a list of (kind, map_function) pairs")
        models: dict[tuple[str, str], type[BaseModel]] = {}
        paths = [tuple(kind_of(ref, "owns_through") for ref in path) for path in owns_through]
        if any(not path for path in paths):
            raise ValueError("owns_through: each path needs at least one kind")
        chain_refs = [ref for path in owns_through for ref in path]
        for ref in [for_, *owns, *chain_refs, *(ref for ref, _ in watches)]:
            model = model_of(ref)
            if model is not None:
                models[kind_of(ref, "kind")] = model
        if resync is not None and not resync > 0:
            raise ValueError(f"resync: must be > 0 seconds, got {resync!r}")
        registration = _Registration(
            target=reconciler,
            for_=primary,
            owns=[kind_of(ref, "owns") for ref in owns],
            watches=[(kind_of(ref, "watches"), map_fn) for ref, map_fn in watches],
            sources=list(sources),
            owns_through=paths,
            predicates=list(predicates),
            for_predicates=list(for_predicates),
            owns_predicates=list(owns_predicates),
            models=models,
            resync=resync,
            ignore_own_writes=ignore_own_writes,
            name=controller_name,
            max_concurrent=max_concurrent,
            rate_limiter=rate_limiter,
            reconcile_timeout=reconcile_timeout,
            need_leader_election=need_leader_election,
            permissions=list(permissions),
            infer_permissions=infer_permissions,
        )
        self._registrations.append(registration)
        if self.connected:
            self._build(registration)

    async def connect(self) -> None:
        """Make the client and cache, then the controllers of every registered reconciler."""
        await super().connect()
        for registration in self._registrations:
            if registration.controller is None:
                self._build(registration)

    def _build(self, registration: _Registration) -> None:
        reconciler = registration.target
        method = getattr(reconciler, "reconcile", None)
        fn = method if callable(method) else reconciler
        if _positional_arity(fn) == 2:
            reconciler = _ContextReconciler(self, registration, fn)
        builder = (
            Builder(self)
            .for_(*registration.for_, predicates=registration.for_predicates)
            .named(registration.name)
        )
        for child_api_version, child_kind in registration.owns:
            builder.owns(child_api_version, child_kind, predicates=registration.owns_predicates)
        for path in registration.owns_through:
            builder.owns_through(*path, predicates=registration.owns_predicates)
        for (watched_api_version, watched_kind), map_fn in registration.watches:
            builder.watches(watched_api_version, watched_kind, map_fn)
        for source in registration.sources:
            builder.watches_source(source)
        if registration.predicates:
            builder.with_event_filter(*registration.predicates)
        registration.controller = builder.with_options(
            max_concurrent_reconciles=registration.max_concurrent,
            rate_limiter=registration.rate_limiter,
            reconcile_timeout=registration.reconcile_timeout,
            need_leader_election=registration.need_leader_election,
            clock=self.clock,
            resync_period=registration.resync if registration.resync is not None else self.resync,
            ignore_own_writes=registration.ignore_own_writes,
            cache_sync_timeout=self.cache_sync_timeout,
        ).complete(reconciler)


def _check_reconciler(reconciler: Any, name: str) -> None:
    method = getattr(reconciler, "reconcile", None)
    fn = method if callable(method) else reconciler
    if not callable(fn):
        raise TypeError(
            f"controller {name}: the reconciler must be a function or have a reconcile method, "
            f"got {reconciler!r}"
        )
    arity = _positional_arity(fn)
    if arity not in (None, 1, 2):
        raise TypeError(
            f"controller {name}: the reconcile function must take (request) or (ctx, request), "
            f"but {getattr(fn, '__qualname__', fn)!r} takes {arity} positional arguments"
        )
