"""`Context`: what a reconcile function registered with `Operator.reconciler` gets with a request.

It bundles the handles a reconcile needs (the client for writes, the shared cache for reads,
an event recorder, a logger, the clock) with shortcuts scoped to the request::

    async def reconcile(ctx: setpoint.Context, request: setpoint.Request) -> setpoint.Result | None:
        widget = await ctx.get()                       # the primary object, from the cache
        if widget is None:
            return None                                # deleted: children go with it (GC)
        maps = await ctx.owned(kinds.ConfigMap)        # children it controls, from the cache
        await ctx.apply_owned({...})                   # server-side apply, owned by the widget
        await ctx.patch_status({"ready": True})        # merge patch of /status, no conflicts
        ctx.recorder.normal(widget, "Applied", "applied the config map")   # an Event
        ctx.log.info("applied")                        # controller, key and reconcile id added

Reads come from the cache and are fresh copies (mutate them freely): dicts, or instances of the
model class when the kind was named by a model in `for_`/`owns`/`watches` (or is passed to the
read). Writes made through the context (``ctx.client.*``, ``ctx.patch_status``,
``ctx.apply_owned``, ``ctx.create_or_update`` ...) are seen by the next reads at once
(read-your-own-writes); the events they cause wake the reconcile again, as in
controller-runtime, unless the reconciler opted in to ``ignore_own_writes`` (see
``Operator.reconciler``). Also: ``ctx.now()`` (the operator's clock),
``ctx.cache`` for anything else, and ``ctx.run(coroutine)`` for sync reconcilers, which run in a
worker thread.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from setpoint.api.clock import SYSTEM_CLOCK, Clock
from setpoint.api.meta import as_mapping, is_model
from setpoint.api.owners import (
    controller_of,
    is_controlled_by,
    reference_from,
    set_controller_reference,
)
from setpoint.api.patch import json_copy, merge_patch_changes
from setpoint.cache import OWNER_UID_INDEX, Cache
from setpoint.cache.cached_object import CachedObject
from setpoint.client.client import Client
from setpoint.client.typed_objects import as_dict
from setpoint.controller.create_or_update import (
    Mutate,
    OperationResult,
    create_or_patch,
    create_or_update,
    differs,
)
from setpoint.controller.own_writes import OwnWrites
from setpoint.controller.reconcile import Request
from setpoint.manager.kind_ref import kind_of, model_of
from setpoint.manager.recording_client import RecordingClient

if TYPE_CHECKING:
    from pydantic import BaseModel

    from setpoint.controller.recorder import EventRecorder
    from setpoint.manager.manager import Manager

__all__ = ["DEFAULT_FIELD_MANAGER", "Context", "NotControlledError"]

T = TypeVar("T")

# The server-side apply field manager when the operator does not name one.
DEFAULT_FIELD_MANAGER = "setpoint"
_NO_MODELS: Mapping[tuple[str, str], type[BaseModel]] = MappingProxyType({})


class NotControlledError(Exception):
    """The object exists and is not controlled by this reconcile's primary object.

    Raised by ``create_or_update``/``create_or_patch``/``apply_owned`` with ``adopt=False``
    (sample-controller's ``ErrResourceExists`` rule: never take over what someone else made).
    """

    def __init__(self, obj: Mapping[str, Any], owner: Mapping[str, Any]) -> None:
        metadata = obj.get("metadata") or {}
        owner_meta = owner.get("metadata") or {}
        controller = controller_of(obj)
        by = (
            f"controlled by {controller.get('kind')} {controller.get('name')}"
            if controller
            else "not controlled by anyone"
        )
        super().__init__(
            f"{obj.get('kind')} {metadata.get('namespace') or ''}/{metadata.get('name')} already "
            f"exists and is {by}, not by {owner.get('kind')} {owner_meta.get('name')}"
        )
        self.obj = obj
        self.owner = owner


class Context:
    """Per-reconcile handles and request-scoped shortcuts (see the module docs)."""

    __slots__ = (
        "_cache",
        "_client",
        "_loop",
        "_models",
        "_own_writes",
        "_recorder",
        "api_version",
        "clock",
        "controller",
        "field_manager",
        "kind",
        "log",
        "manager",
        "request",
    )

    def __init__(
        self,
        manager: Manager,
        controller: str,
        request: Request,
        *,
        api_version: str,
        kind: str,
        recorder: EventRecorder | None = None,
        log: logging.Logger | None = None,
        field_manager: str = DEFAULT_FIELD_MANAGER,
        own_writes: OwnWrites | None = None,
        models: Mapping[tuple[str, str], type[BaseModel]] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.manager = manager
        self.controller = controller
        self.request = request
        self.api_version = api_version
        self.kind = kind
        self._recorder = recorder
        self.field_manager = field_manager
        self._own_writes = own_writes
        # Only read: the caller's mapping is kept as is (one per reconcile: no copy).
        self._models: Mapping[tuple[str, str], type[BaseModel]] = models or _NO_MODELS
        self.clock: Clock = clock or getattr(manager, "clock", None) or SYSTEM_CLOCK
        self._client: Client | None = None
        self._cache: Cache | None = None
        # Contexts are made on the event loop; sync reconcilers call back into it via run().
        self._loop = asyncio.get_running_loop()
        self.log = log or logging.getLogger(f"setpoint.controller.{controller}")

    @property
    def client(self) -> Client:
        """The API client. Its writes are recorded: the next reads through this context see
        them, and their events wake no reconcile of this controller."""
        client = self._client
        if client is None:
            # A Client in all but name (it proxies one); no typing.cast: a call per reconcile.
            client = self._client = RecordingClient(  # type: ignore[assignment]
                self.manager.client,
                self.cache,
                self._own_writes,
                getattr(self.manager, "trace", None),
            )
        return client  # type: ignore[return-value]

    @property
    def cache(self) -> Cache:
        """The shared cache (reads)."""
        cache = self._cache
        if cache is None:
            cache = self._cache = self.manager.cache
        return cache

    @property
    def recorder(self) -> EventRecorder:
        """Records Events about objects: `ctx.recorder.normal(obj, "Created", "made cm x")`."""
        if self._recorder is None:
            raise RuntimeError(f"controller {self.controller} has no event recorder")
        return self._recorder

    @property
    def namespace(self) -> str | None:
        """The request's namespace (None for cluster-scoped objects)."""
        return self.request.namespace

    @property
    def name(self) -> str:
        """The request's name."""
        return self.request.name

    def now(self) -> datetime:
        """The current time (UTC) on the operator's clock; a `FakeClock` in tests."""
        return self.clock.now()

    # -- reads --------------------------------------------------------------------------------

    def _kind(self, ref: Any, option: str) -> tuple[str, str, type[BaseModel] | None]:
        api_version, kind = kind_of(ref, option)
        return api_version, kind, model_of(ref) or self._models.get((api_version, kind))

    @staticmethod
    def _typed(obj: dict[str, Any], model: type[BaseModel] | None) -> Any:
        return obj if model is None else model.model_validate(obj)

    def _split(
        self, api_version: Any, kind: str | None, name: str | None
    ) -> tuple[str, str, str, type[BaseModel] | None]:
        """Accepts `(api_version, kind, name)` or `(kind_ref, name)`."""
        if isinstance(api_version, str) and kind is not None and name is not None:
            model = self._models.get((api_version, kind))
            return api_version, kind, name, model
        if api_version is not None and not isinstance(api_version, str) and name is None:
            resolved_version, resolved_kind, model = self._kind(api_version, "Context.get")
            if kind is None:
                raise TypeError("Context.get(kind, name): the name is missing")
            return resolved_version, resolved_kind, kind, model
        raise TypeError(
            "Context.get: give (api_version, kind, name), (kind, name) with a setpoint.kinds "
            "constant or a model class, or nothing for the primary object"
        )

    async def get(
        self,
        api_version: Any = None,
        kind: str | None = None,
        name: str | None = None,
        *,
        namespace: str | None = None,
    ) -> Any:
        """An object from the cache as a fresh dict (or model), or None when absent.

        With no arguments: the primary object of this request. Else ``get(kinds.Pod, "p")``,
        ``get(FooModel, "f")`` or ``get("v1", "Pod", "p")``: that object, in the request's
        namespace unless `namespace` is given.
        """
        if api_version is None and kind is None and name is None:
            obj = await self.cache.get(
                self.api_version, self.kind, self.request.name, self.request.namespace
            )
            model = self._models.get((self.api_version, self.kind))
            return None if obj is None else self._typed(obj, model)
        resolved_version, resolved_kind, resolved_name, model = self._split(api_version, kind, name)
        obj = await self.cache.get(
            resolved_version, resolved_kind, resolved_name, self._namespace(namespace)
        )
        return None if obj is None else self._typed(obj, model)

    async def _primary_dict(self) -> dict[str, Any] | None:
        return await self.cache.get(
            self.api_version, self.kind, self.request.name, self.request.namespace
        )

    async def _primary_cached(self) -> CachedObject | None:
        """The primary object as the cache holds it (immutable: not to be handed out)."""
        return await self.cache.get_cached(
            self.api_version, self.kind, self.request.name, self.request.namespace
        )

    async def list(
        self,
        api_version: Any,
        kind: str | None = None,
        *,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: Any = None,
    ) -> builtins.list[Any]:
        """Objects of a kind from the cache, in the request's namespace by default:
        ``list(kinds.Pod)``, ``list(FooModel)`` or ``list("v1", "Pod")``."""
        if kind is None:
            resolved_version, resolved_kind, model = self._kind(api_version, "Context.list")
        else:
            resolved_version, resolved_kind = api_version, kind
            model = self._models.get((api_version, kind))
        scope = None if all_namespaces else self._namespace(namespace)
        objects = await self.cache.list(
            resolved_version, resolved_kind, scope, label_selector=label_selector
        )
        return [self._typed(obj, model) for obj in objects]

    async def owned(self, api_version: Any, kind: str | None = None) -> builtins.list[Any]:
        """Objects of a kind that the primary object controls (by controller ownerReference):
        ``owned(kinds.Deployment)`` or ``owned("apps/v1", "Deployment")``."""
        if kind is None:
            resolved_version, resolved_kind, model = self._kind(api_version, "Context.owned")
        else:
            resolved_version, resolved_kind = api_version, kind
            model = self._models.get((api_version, kind))
        primary = await self._primary_dict()
        if primary is None:
            return []
        uid = str((primary.get("metadata") or {}).get("uid") or "")
        # The cache indexes objects by owner uid, so this does not scan the namespace.
        children = await self.cache.list(
            resolved_version, resolved_kind, self.request.namespace, index=(OWNER_UID_INDEX, uid)
        )
        return [
            self._typed(child, model)
            for child in children
            if any(
                ref.get("controller") and ref.get("uid") == uid
                for ref in (child.get("metadata") or {}).get("ownerReferences") or ()
            )
        ]

    # -- writes -------------------------------------------------------------------------------

    async def _owner(self, owner: Any) -> dict[str, Any]:
        if owner is not None:
            return dict(as_mapping(owner))
        primary = await self._primary_cached()
        if primary is None:
            raise LookupError(
                f"{self.kind} {self.request} is not in the cache; cannot set it as owner"
            )
        reference = _identity(primary)
        reference["metadata"]["uid"] = primary.uid
        return reference  # all an owner reference and the ownership checks read

    async def _whole(self, owner_obj: dict[str, Any], owner: Any) -> dict[str, Any]:
        """The whole owner for an error (``_owner`` gives only what a reference needs)."""
        if owner is not None:
            return owner_obj
        return await self._primary_dict() or owner_obj

    async def patch_status(
        self,
        patch: Mapping[str, Any] | BaseModel | None = None,
        *,
        conditions: Sequence[Mapping[str, Any]] = (),
        obj: Any = None,
    ) -> Any:
        """Merge-patch the ``status`` of the primary object (or ``obj``) and return the result.

        ``patch`` is the part of the status to change (``{"availableReplicas": 2}``; ``None``
        values delete fields). ``conditions`` are set with the Kubernetes conventions (see
        :func:`setpoint.api.conditions.set_condition`: ``lastTransitionTime`` moves only when
        the status changes), e.g. ``conditions=[{"type": "Ready", "status": "True", "reason":
        "Synced"}]``; the patch then carries the whole merged list. No resourceVersion is sent,
        so this never conflicts with other writers of other fields; nothing is sent when the
        cached status already equals the result (the cached object is returned).
        """
        model = model_of(type(obj)) if obj is not None and is_model(obj) else None
        cached: CachedObject | None = None
        if obj is None:
            # Read without decoding the whole object: the status, and the name to address.
            cached = await self._primary_cached()
            if cached is None:
                raise LookupError(
                    f"{self.kind} {self.request} is not in the cache; cannot patch its status"
                )
            model = self._models.get((self.api_version, self.kind))
            current = _identity(cached)
            status = cached.get("status")
        else:
            current = dict(as_mapping(obj))
            status = current.get("status")
        status_patch: dict[str, Any] = {}
        if patch is not None:
            status_patch = dict(as_mapping(patch)) if is_model(patch) else dict(patch)
        before = status if isinstance(status, dict) else {}
        if conditions:
            from setpoint.api.conditions import set_condition

            merged = json_copy(
                status_patch.get("conditions") or (before or {}).get("conditions") or []
            )
            if cached is not None:
                generation = cached.generation
            else:
                generation = (current.get("metadata") or {}).get("generation")
            for condition in conditions:
                set_condition(
                    merged,
                    type=condition["type"],
                    status=condition["status"],
                    reason=condition.get("reason", condition["status"]),
                    message=condition.get("message", ""),
                    observed_generation=condition.get("observedGeneration", generation),
                    now=self.now(),
                )
            status_patch["conditions"] = merged
        if not merge_patch_changes(before or {}, status_patch):
            return self._typed(current if cached is None else cached.to_dict(), model)
        answer = await self.client.patch(current, {"status": status_patch}, subresource="status")
        return self._typed(answer, model)

    async def set_condition(
        self,
        type: str,
        status: str,
        reason: str,
        message: str = "",
        *,
        obj: Any = None,
    ) -> Any:
        """Set one status condition of the primary object (or ``obj``) with a merge patch;
        see :meth:`patch_status`."""
        condition = {"type": type, "status": status, "reason": reason, "message": message}
        return await self.patch_status(conditions=[condition], obj=obj)

    async def apply_owned(
        self,
        child: Mapping[str, Any] | BaseModel,
        *,
        owner: Any = None,
        force: bool = True,
        adopt: bool = True,
    ) -> Any:
        """Server-side apply `child` as an object controlled by the primary object.

        Sets the controller ownerReference (so `owns` re-reconciles the owner when the child
        changes, and the garbage collector deletes it with the owner), puts it in the request's
        namespace unless it names one, and applies it with this operator as field manager
        (`force`: take over fields another manager set). `owner` defaults to the primary object
        from the cache; raises LookupError when that is gone. When the cached child already has
        every applied field, nothing is sent and the cached child is returned. `adopt=False`
        raises :class:`NotControlledError` when the child exists without this owner as its
        controller. Returns the applied object (a model when `child` is one).
        """
        model = type(child) if is_model(child) else None
        source = child if type(child) is dict else as_dict(child)
        # Only the metadata is changed here (namespace, owner reference): the rest is shared
        # with the caller's object, which is read and sent but never changed.
        obj = dict(source)
        metadata = obj["metadata"] = json_copy(source.get("metadata") or {})
        if self.request.namespace and not metadata.get("namespace"):
            metadata["namespace"] = self.request.namespace
        reference = None
        if owner is None and adopt and "ownerReferences" not in metadata:
            reference = await self._primary_controller_reference(metadata.get("namespace"))
        if reference is not None:
            # The usual child: no references of its own, owned by the primary object.
            metadata["ownerReferences"] = [reference]
            existing = await self._cached_peer(obj)
        else:
            owner_obj = await self._owner(owner)
            existing = await self._cached_peer(obj)
            if existing is not None and not adopt and not is_controlled_by(existing, owner_obj):
                raise NotControlledError(existing, await self._whole(owner_obj, owner))
            set_controller_reference(owner_obj, obj)
        if existing is not None and not differs(existing, obj):
            return self._typed(existing, model)
        applied: dict[str, Any] = await self.client.apply(
            obj, field_manager=self.field_manager, force=force
        )
        return self._typed(applied, model)

    async def _primary_controller_reference(self, namespace: Any) -> dict[str, Any] | None:
        """The controller reference to the primary object, as ``set_controller_reference``
        would add it to a child in ``namespace`` that has no owner references; None when that
        needs its checks (no primary in the cache, fields missing, another namespace)."""
        primary = await self._primary_cached()
        if primary is None:
            return None
        api_version, kind, name, uid = primary.api_version, primary.kind, primary.name, primary.uid
        owner_namespace = primary.namespace
        if not (api_version and kind and name and uid) or (
            owner_namespace is not None and owner_namespace != namespace
        ):
            return None
        return reference_from(
            api_version, kind, name, uid, controller=True, block_owner_deletion=True
        )

    async def _cached_peer(self, obj: Mapping[str, Any]) -> dict[str, Any] | None:
        metadata = obj.get("metadata") or {}
        name = metadata.get("name")
        if not name:
            return None
        return await self.cache.get(
            str(obj.get("apiVersion")), str(obj.get("kind")), name, metadata.get("namespace")
        )

    async def create_or_update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        mutate: Mutate,
        *,
        owned: bool = True,
        adopt: bool = True,
    ) -> tuple[OperationResult, Any]:
        """``create_or_update`` reading from the cache, owned by the primary object.

        Compares only the fields `mutate` sets; returns ``("unchanged", cached)`` with no
        request when they already hold. When `obj` is a model (``models.Deployment(...)``),
        `mutate` gets a model of that class and the result is one. With `owned` (default) the
        object gets the primary object as controller; `adopt=False` raises
        :class:`NotControlledError` instead of taking over an existing object this owner does
        not control.
        """
        return await self._create_or(create_or_update, obj, mutate, owned=owned, adopt=adopt)

    async def create_or_patch(
        self,
        obj: Mapping[str, Any] | BaseModel,
        mutate: Mutate,
        *,
        owned: bool = True,
        adopt: bool = True,
        optimistic: bool = False,
    ) -> tuple[OperationResult, Any]:
        """``create_or_patch`` reading from the cache, owned by the primary object (see
        :meth:`create_or_update`)."""

        async def run(
            client: Client, target: MutableMapping[str, Any], fn: Mutate, **kw: Any
        ) -> Any:
            return await create_or_patch(client, target, fn, optimistic=optimistic, **kw)

        return await self._create_or(run, obj, mutate, owned=owned, adopt=adopt)

    async def _create_or(
        self,
        operation: Callable[..., Awaitable[tuple[OperationResult, dict[str, Any]]]],
        obj: Mapping[str, Any] | BaseModel,
        mutate: Mutate,
        *,
        owned: bool,
        adopt: bool,
    ) -> tuple[OperationResult, Any]:
        model = type(obj) if is_model(obj) else None
        target = json_copy(as_dict(obj))
        metadata = target.setdefault("metadata", {})
        if self.request.namespace and not metadata.get("namespace"):
            metadata["namespace"] = self.request.namespace
        owner = await self._owner(None) if owned else None
        if model is not None:  # `mutate` edits a model like the one given
            from setpoint.manager.typed_mutate import model_mutate  # imports pydantic

            mutate = model_mutate(model, mutate)

        async def owned_mutate(current: dict[str, Any]) -> None:
            exists = bool((current.get("metadata") or {}).get("uid"))
            if owner is not None and exists and not adopt and not is_controlled_by(current, owner):
                raise NotControlledError(current, await self._whole(owner, None))
            outcome = mutate(current)
            if inspect.isawaitable(outcome):
                await outcome
            if owner is not None:
                set_controller_reference(owner, current)

        async def read(
            api_version: str, kind: str, name: str, namespace: str | None
        ) -> dict[str, Any] | None:
            return await self.cache.get(api_version, kind, name, namespace)

        result, answer = await operation(self.client, target, owned_mutate, reader=read)
        return result, self._typed(answer, model)

    # -- helpers ------------------------------------------------------------------------------

    def run(self, awaitable: Awaitable[T]) -> T:
        """From a sync reconciler (which runs in a worker thread): run an async call on the
        operator's event loop and return its result, e.g. `obj = ctx.run(ctx.get())`."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            if inspect.iscoroutine(awaitable):
                awaitable.close()  # never run: do not warn that it was not awaited
            raise RuntimeError("Context.run: called on the event loop; use `await` instead")
        return asyncio.run_coroutine_threadsafe(_as_coroutine(awaitable), self._loop).result()

    def _namespace(self, namespace: str | None) -> str | None:
        return namespace if namespace is not None else self.request.namespace

    def __repr__(self) -> str:
        return f"<Context {self.controller} {self.request}>"


def _identity(cached: CachedObject) -> dict[str, Any]:
    """apiVersion, kind, metadata.name and .namespace of a cached object: what addresses it."""
    metadata: dict[str, Any] = {"name": cached.name}
    namespace = cached.namespace
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": cached.api_version, "kind": cached.kind, "metadata": metadata}


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable
