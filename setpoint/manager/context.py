"""`Context`: what a reconcile function registered with `Operator.reconciler` gets with a request.

It bundles the handles a reconcile needs (the client for writes, the shared cache for reads,
an event recorder, a logger) with shortcuts scoped to the request::

    async def reconcile(ctx: setpoint.Context, request: setpoint.Request) -> setpoint.Result | None:
        widget = await ctx.get()                       # the primary object, from the cache
        if widget is None:
            return None                                # deleted: children go with it (GC)
        maps = await ctx.owned("v1", "ConfigMap")      # children it controls, from the cache
        await ctx.client.apply({...})                  # writes go straight to the API server
        ctx.log.info("applied")                        # controller, key and reconcile id added

Reads come from the cache and are fresh dicts (mutate them freely); writes go through the client.
"""

from __future__ import annotations

import builtins
import logging
from typing import TYPE_CHECKING, Any

from setpoint.cache import OWNER_UID_INDEX, Cache
from setpoint.client.client import Client
from setpoint.controller.reconcile import Request

if TYPE_CHECKING:
    from setpoint.manager.manager import Manager

__all__ = ["Context"]


class Context:
    """Per-reconcile handles and request-scoped shortcuts (see the module docs)."""

    __slots__ = ("api_version", "controller", "kind", "log", "manager", "recorder", "request")

    def __init__(
        self,
        manager: Manager,
        controller: str,
        request: Request,
        *,
        api_version: str,
        kind: str,
        recorder: Any = None,
        log: logging.Logger | None = None,
    ) -> None:
        self.manager = manager
        self.controller = controller
        self.request = request
        self.api_version = api_version
        self.kind = kind
        self.recorder = recorder
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

    def _namespace(self, namespace: str | None) -> str | None:
        return namespace if namespace is not None else self.request.namespace

    def __repr__(self) -> str:
        return f"<Context {self.controller} {self.request}>"
