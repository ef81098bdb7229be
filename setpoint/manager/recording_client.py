"""`RecordingClient`: the client a reconcile gets through `ctx.client`.

It is the manager's `Client` with one addition: every successful write (create, update,
update_status, patch, apply, apply_status, delete) is recorded from the server's answer

- in the shared cache, so the reconcile's next reads see it before the watch delivers it
  (read-your-own-writes, :mod:`setpoint.cache.recent_writes`), and
- in the controller's own writes, so the event that write causes wakes no reconcile
  (:mod:`setpoint.controller.own_writes`).

Dry runs are not recorded. Everything else is the client's, unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from setpoint.cache import Cache
from setpoint.client.client import Client
from setpoint.client.typed_objects import as_dict
from setpoint.controller.own_writes import OwnWrites

__all__ = ["RecordingClient", "record_write"]


def record_write(cache: Cache, own_writes: OwnWrites | None, answer: Any) -> None:
    """Record one write's answer (an object dict or model) in the cache and own writes."""
    if isinstance(answer, BaseModel):
        answer = as_dict(answer)
    if not isinstance(answer, Mapping):
        return
    metadata = answer.get("metadata")
    if not isinstance(metadata, Mapping):
        return
    cache.record_write(answer)
    if own_writes is not None:
        own_writes.record(
            str(metadata.get("uid") or ""), str(metadata.get("resourceVersion") or "")
        )


class RecordingClient:
    """Proxies a `Client`, recording the results of writes (see the module docs)."""

    __slots__ = ("_cache", "_client", "_own_writes")

    def __init__(self, client: Client, cache: Cache, own_writes: OwnWrites | None) -> None:
        self._client = client
        self._cache = cache
        self._own_writes = own_writes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def __repr__(self) -> str:
        return f"<RecordingClient {self._client!r}>"

    def _record(self, answer: Any, kwargs: Mapping[str, Any]) -> Any:
        if not kwargs.get("dry_run"):
            record_write(self._cache, self._own_writes, answer)
        return answer

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        return self._record(await self._client.create(*args, **kwargs), kwargs)

    async def update(self, *args: Any, **kwargs: Any) -> Any:
        return self._record(await self._client.update(*args, **kwargs), kwargs)

    async def update_status(self, *args: Any, **kwargs: Any) -> Any:
        return self._record(await self._client.update_status(*args, **kwargs), kwargs)

    async def patch(self, *args: Any, **kwargs: Any) -> Any:
        return self._record(await self._client.patch(*args, **kwargs), kwargs)

    async def apply(self, *args: Any, **kwargs: Any) -> Any:
        return self._record(await self._client.apply(*args, **kwargs), kwargs)

    async def apply_status(self, *args: Any, **kwargs: Any) -> Any:
        return self._record(await self._client.apply_status(*args, **kwargs), kwargs)

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        answer = await self._client.delete(*args, **kwargs)
        if kwargs.get("dry_run") or not isinstance(answer, Mapping):
            return answer
        metadata = answer.get("metadata")
        if answer.get("kind") != "Status" and isinstance(metadata, Mapping):
            if metadata.get("deletionTimestamp"):
                record_write(self._cache, self._own_writes, answer)  # finalizers hold it
                return answer
            self._cache.record_delete(
                str(answer.get("apiVersion")),
                str(answer.get("kind")),
                str(metadata.get("name")),
                metadata.get("namespace") or None,
                str(metadata.get("uid") or ""),
            )
            return answer
        details = answer.get("details")
        if isinstance(details, Mapping) and details.get("uid"):
            target = args[0] if args else None
            if isinstance(target, BaseModel):
                target = as_dict(target)
            if isinstance(target, Mapping):
                target_meta = target.get("metadata") or {}
                self._cache.record_delete(
                    str(target.get("apiVersion")),
                    str(target.get("kind")),
                    str(target_meta.get("name")),
                    target_meta.get("namespace") or kwargs.get("namespace"),
                    str(details["uid"]),
                )
            elif len(args) >= 3:
                self._cache.record_delete(
                    str(args[0]), str(args[1]), str(args[2]), kwargs.get("namespace"),
                    str(details["uid"]),
                )  # fmt: skip
        return answer
