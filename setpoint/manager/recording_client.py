"""`RecordingClient`: the client a reconcile gets through `ctx.client`.

It is the manager's `Client` with one addition: every successful write (create, update,
update_status, patch, apply, apply_status, delete) is recorded from the server's answer

- in the shared cache, so the reconcile's next reads see it before the watch delivers it
  (read-your-own-writes, :mod:`setpoint.cache.recent_writes`), and
- in the controller's own writes when the reconciler opted in to ``ignore_own_writes``, so
  the event that write causes wakes no reconcile (:mod:`setpoint.controller.own_writes`; a
  write announces itself before it is sent, so that its event, should it arrive before the
  answer, is recognised too).

- in the reconcile trace, when the manager traces reconciles (:mod:`setpoint.controller.trace`):
  the verb, the field manager, and a JSON patch from the cached object to the answer.

Dry runs are not recorded. Everything else is the client's, unchanged.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import Any

from setpoint.api.meta import as_mapping, is_model
from setpoint.cache import Cache
from setpoint.client.answer_capture import ANSWER_CAPTURE, CapturedAnswer
from setpoint.client.client import Client
from setpoint.client.typed_objects import as_dict
from setpoint.controller.own_writes import OwnWrites, WriteKey
from setpoint.controller.trace import ReconcileTrace

__all__ = ["RecordingClient", "record_write"]


def record_write(cache: Cache, own_writes: OwnWrites | None, answer: Any) -> None:
    """Record one write's answer (an object dict or model) in the cache and own writes."""
    recorded = _record(cache, answer)
    if recorded is not None and own_writes is not None:
        own_writes.record(*recorded)


def _record(cache: Cache, answer: Any, body: bytes = b"") -> tuple[str, str] | None:
    """Record ``answer`` in the cache; its (uid, resourceVersion), or None when it is no
    object. ``body``, when given, is the JSON the server sent for it."""
    if type(answer) is not dict:
        if is_model(answer):
            answer = as_dict(answer)
        elif not isinstance(answer, Mapping):
            return None
    return cache.record_write(answer, body)


class RecordingClient:
    """Proxies a `Client`, recording the results of writes (see the module docs)."""

    __slots__ = ("_cache", "_client", "_own_writes", "_trace")

    def __init__(
        self,
        client: Client,
        cache: Cache,
        own_writes: OwnWrites | None,
        trace: ReconcileTrace | None = None,
    ) -> None:
        self._client = client
        self._cache = cache
        self._own_writes = own_writes
        self._trace = trace

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def __repr__(self) -> str:
        return f"<RecordingClient {self._client!r}>"

    def _key(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> WriteKey | None:
        """(kind, namespace, name) of the object a write addresses, when it can be told."""
        if self._own_writes is None or kwargs.get("dry_run") or not args:
            return None
        target = args[0]
        if isinstance(target, str):
            if len(args) < 3:
                return None
            kind, name, namespace = str(args[1]), str(args[2]), kwargs.get("namespace")
        else:
            try:
                obj = target if type(target) is dict else as_mapping(target)
            except TypeError:
                return None
            metadata = obj.get("metadata") or {}
            kind, name = str(obj.get("kind") or ""), str(metadata.get("name") or "")
            namespace = kwargs.get("namespace") or metadata.get("namespace")
        namespace = namespace or self._client.default_namespace
        return self._own_writes.begin(kind, namespace, name)

    def _target(
        self, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> tuple[str, str, str | None, str] | None:
        """(apiVersion, kind, namespace, name) a write addresses, when it can be told."""
        if not args:
            return None
        target = args[0]
        if isinstance(target, str):
            if len(args) < 3:
                return None
            api_version, kind, name = target, str(args[1]), str(args[2])
            namespace = kwargs.get("namespace")
        else:
            try:
                obj = target if type(target) is dict else as_mapping(target)
            except TypeError:
                return None
            metadata = obj.get("metadata") or {}
            api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
            name = str(metadata.get("name") or "")
            namespace = kwargs.get("namespace") or metadata.get("namespace")
        if not kind or not name:
            return None
        return api_version, kind, namespace or self._client.default_namespace, name

    async def _write(
        self,
        method: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        trace: ReconcileTrace | None = None,
    ) -> Any:
        own_writes = self._own_writes
        key = self._key(args, kwargs) if own_writes is not None else None
        before = flight = None
        if trace is not None:
            # The cached object the write changes (its diff's base), and a mark that the
            # write is in flight (its watch event may come before its answer).
            target = self._target(args, kwargs)
            if target is not None:
                api_version, kind, namespace, name = target
                before = self._cache.peek(api_version, kind, name, namespace)
                flight = trace.write_started(kind, namespace, name)
        recorded = None
        answer = None
        # The answer's bytes, kept as the server sent them (see answer_capture).
        captured = CapturedAnswer()
        token = ANSWER_CAPTURE.set(captured)
        try:
            try:
                answer = await getattr(self._client, method)(*args, **kwargs)
            finally:
                ANSWER_CAPTURE.reset(token)
            if not kwargs.get("dry_run"):
                recorded = _record(self._cache, answer, captured.body)
            return answer
        finally:
            if own_writes is not None:
                if recorded is None:
                    own_writes.end(key)
                else:
                    own_writes.end(key, *recorded)
            if trace is not None:
                self._trace_write(trace, flight, method, kwargs, before, answer, captured.body)

    def _trace_write(
        self,
        trace: ReconcileTrace,
        flight: tuple[str, str, str | None, str] | None,
        method: str,
        kwargs: Mapping[str, Any],
        before: Any,
        answer: Any,
        body: bytes,
    ) -> None:
        after = None
        if answer is not None and not kwargs.get("dry_run"):
            after = as_dict(answer) if is_model(answer) else answer
            if not isinstance(after, Mapping):
                after = None
        trace.write(
            flight,
            _verb(method, kwargs),
            before,
            after,
            kwargs.get("field_manager") or getattr(self._client, "field_manager", None),
            body,
        )

    # Plain functions returning the coroutine of _write: one coroutine per write, not two.
    def create(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        return self._write("create", args, kwargs, self._trace)

    def update(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        return self._write("update", args, kwargs, self._trace)

    def update_status(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        return self._write("update_status", args, kwargs, self._trace)

    def patch(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        return self._write("patch", args, kwargs, self._trace)

    def apply(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        return self._write("apply", args, kwargs, self._trace)

    def apply_status(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        return self._write("apply_status", args, kwargs, self._trace)

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        trace = self._trace
        if trace is None:
            return await self._delete(args, kwargs)
        target = self._target(args, kwargs)
        flight = trace.write_started(target[1], target[2], target[3]) if target else None
        answer = None
        try:
            answer = await self._delete(args, kwargs)
            return answer
        finally:
            after = None
            if isinstance(answer, Mapping) and not kwargs.get("dry_run"):
                after = answer
                if answer.get("kind") == "Status" and target is not None:
                    api_version, kind, namespace, name = target
                    details = answer.get("details")
                    uid = details.get("uid") if isinstance(details, Mapping) else None
                    after = {
                        "apiVersion": api_version,
                        "kind": kind,
                        "metadata": {"namespace": namespace, "name": name, "uid": uid},
                    }
            trace.write(flight, "delete", None, after, kwargs.get("field_manager"))

    async def _delete(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
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
            if is_model(target):
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


def _verb(method: str, kwargs: Mapping[str, Any]) -> str:
    """The trace's verb of a client method: create, update, patch, apply, delete or status."""
    if method in ("update_status", "apply_status") or kwargs.get("subresource") == "status":
        return "status"
    return method
