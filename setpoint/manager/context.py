"""`Context`: what a reconcile function registered with `Operator.reconciler` gets with a request.

It bundles the handles a reconcile needs (the client for writes, the shared cache for reads,
an event recorder, a logger) with shortcuts scoped to the request::

    async def reconcile(ctx: setpoint.Context, request: setpoint.Request) -> setpoint.Result | None:
        widget = await ctx.get()                       # the primary object, from the cache
        if widget is None:
            return None                                # deleted: children go with it (GC)
        maps = await ctx.owned("v1", "ConfigMap")      # children it controls, from the cache
        await ctx.apply_owned({...})                   # server-side apply, owned by the widget
        ctx.recorder.normal(widget, "Applied", "applied the config map")   # an Event
        ctx.log.info("applied")                        # controller, key and reconcile id added

Reads come from the cache and are fresh dicts (mutate them freely); writes go through the client.
Also: `ctx.get(api_version, kind, name)` and `ctx.list(api_version, kind, label_selector=...)`
(in the request's namespace by default), `ctx.cache` / `ctx.client` for anything else, and
`ctx.run(coroutine)` for sync reconcilers, which run in a worker thread.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import inspect
import logging
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from setpoint.api.owners import set_controller_reference
from setpoint.cache import OWNER_UID_INDEX, Cache
from setpoint.client.client import Client
from setpoint.controller.reconcile import Request
from setpoint.controller.recorder import EventRecorder

if TYPE_CHECKING:
    from setpoint.manager.manager import Manager

__all__ = ["DEFAULT_FIELD_MANAGER", "Context"]

T = TypeVar("T")

# The server-side apply field manager when the operator does not name one.
DEFAULT_FIELD_MANAGER = "setpoint"


class Context:
    """Per-reconcile handles and request-scoped shortcuts (see the module docs)."""

    __slots__ = (
        "_loop",
        "_recorder",
        "api_version",
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
    ) -> None:
        self.manager = manager
        self.controller = controller
        self.request = request
        self.api_version = api_version
        self.kind = kind
        self._recorder = recorder
        self.field_manager = field_manager
        # Contexts are made on the event loop; sync reconcilers call back into it via run().
        self._loop = asyncio.get_running_loop()
        self.log = log or logging.getLogger(f"setpoint.controller.{controller}")

    @property
    def client(self) -> Client:
        """The API client (writes, and reads that must bypass the cache)."""
        return self.manager.client

    @property
    def cache(self) -> Cache:
        """The shared cache (reads)."""
        return self.manager.cache

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

    async def get(
        self,
        api_version: str | None = None,
        kind: str | None = None,
        name: str | None = None,
        *,
        namespace: str | None = None,
    ) -> dict[str, Any] | None:
        """An object from the cache as a fresh dict, or None when absent.

        With no arguments: the primary object of this request. With `api_version`, `kind` and
        `name`: that object, in the request's namespace unless `namespace` is given.
        """
        if api_version is None and kind is None and name is None:
            return await self.cache.get(
                self.api_version, self.kind, self.request.name, self.request.namespace
            )
        if api_version is None or kind is None or name is None:
            raise TypeError(
                "Context.get: give api_version, kind and name together "
                "(or nothing, for the primary object)"
            )
        return await self.cache.get(api_version, kind, name, self._namespace(namespace))

    async def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: Any = None,
    ) -> list[dict[str, Any]]:
        """Objects of a kind from the cache, in the request's namespace by default."""
        scope = None if all_namespaces else self._namespace(namespace)
        return await self.cache.list(api_version, kind, scope, label_selector=label_selector)

    async def apply_owned(
        self,
        child: Mapping[str, Any],
        *,
        owner: Mapping[str, Any] | None = None,
        force: bool = True,
    ) -> dict[str, Any]:
        """Server-side apply `child` as an object controlled by the primary object.

        Sets the controller ownerReference (so `owns` re-reconciles the owner when the child
        changes, and the garbage collector deletes it with the owner), puts it in the request's
        namespace unless it names one, and applies it with this operator as field manager
        (`force`: take over fields another manager set). `owner` defaults to the primary object
        from the cache; raises LookupError when that is gone. Returns the applied object.
        """
        if owner is None:
            owner = await self.get()
            if owner is None:
                raise LookupError(
                    f"{self.kind} {self.request} is not in the cache; cannot set it as owner"
                )
        obj = copy.deepcopy(dict(child))
        metadata = obj.setdefault("metadata", {})
        if self.request.namespace and not metadata.get("namespace"):
            metadata["namespace"] = self.request.namespace
        set_controller_reference(owner, obj)
        applied: dict[str, Any] = await self.client.apply(
            obj, field_manager=self.field_manager, force=force
        )
        return applied

    async def owned(self, api_version: str, kind: str) -> builtins.list[dict[str, Any]]:
        """Objects of a kind that the primary object controls (by controller ownerReference)."""
        primary = await self.get()
        if primary is None:
            return []
        uid = str((primary.get("metadata") or {}).get("uid") or "")
        # The cache indexes objects by owner uid, so this does not scan the namespace.
        children = await self.cache.list(
            api_version, kind, self.request.namespace, index=(OWNER_UID_INDEX, uid)
        )
        return [
            child
            for child in children
            if any(
                ref.get("controller") and ref.get("uid") == uid
                for ref in (child.get("metadata") or {}).get("ownerReferences") or ()
            )
        ]

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


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable
