"""Events as kube-controller-manager, the scheduler and the kubelet write them.

:meth:`EventRecorder.record` writes a core/v1 Event (``source.component`` is the controller's,
``source.host`` the kubelet's node); an identical event (same object, type, reason, message and
source) raises ``count`` and moves ``lastTimestamp`` of the stored one instead, as client-go's
event cache does. :meth:`EventRecorder.record_v1` writes an events.k8s.io/v1 Event (the
scheduler's). Writes are queued and done in order by one task, so recording never blocks a
reconcile; a failed write is logged and dropped, as upstream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from setpoint.api.clock import Clock
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations, WriteOptions
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.controllers.framework.timestamps import micro_time_text, time_text

log = logging.getLogger(__name__)

#: Events remembered for aggregation (client-go keeps an LRU of 4096).
AGGREGATION_CACHE_SIZE: Final = 4096
_AggregationKey = tuple[str, str, str, str, str, str, str]
#: Events the recorder builds are valid by construction: the schema check is skipped for them
#: (it cost more than the rest of a pod's start together).
_SERVER_BUILT: Final = WriteOptions(server_built=True)


def object_reference(obj: Mapping[str, Any], field_path: str = "") -> dict[str, Any]:
    """An ObjectReference to ``obj`` (as ``involvedObject``/``regarding``)."""
    meta = obj.get("metadata") or {}
    ref: dict[str, Any] = {
        "kind": obj.get("kind", ""),
        "apiVersion": obj.get("apiVersion", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    if field_path:
        ref["fieldPath"] = field_path
    return {k: v for k, v in ref.items() if v != ""}


class EventRecorder:
    """Writes Events through the API server's object operations, in the background."""

    def __init__(
        self, operations: ObjectOperations, registry: ResourceRegistry, clock: Clock
    ) -> None:
        self._operations = operations
        self._registry = registry
        self._clock = clock
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._recent: OrderedDict[_AggregationKey, tuple[str, str]] = OrderedDict()
        self._task: asyncio.Task[None] | None = None
        self._sequence = 0

    def start(self) -> None:
        """Start writing queued Events."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="event-recorder")

    async def stop(self) -> None:
        """Write what is queued, then stop."""
        if self._task is None:
            return
        self._queue.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), 2.0)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def flush(self) -> None:
        """Wait until every Event queued so far is written (for tests and shutdown)."""
        await self._queue.join()

    def record(
        self,
        obj: Mapping[str, Any],
        type: str,
        reason: str,
        message: str,
        component: str,
        *,
        host: str = "",
        field_path: str = "",
    ) -> None:
        """Queue a core/v1 Event about ``obj`` from ``component`` (on ``host``)."""
        now = time_text(self._clock)
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        source = {"component": component}
        if host:
            source["host"] = host
        self._queue.put_nowait(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": self._event_name(meta), "namespace": namespace},
                "involvedObject": object_reference(obj, field_path),
                "reason": reason,
                "message": message,
                "source": source,
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
                "type": type,
                "eventTime": None,
                "reportingComponent": component,
                "reportingInstance": host,
            }
        )

    def record_v1(
        self,
        obj: Mapping[str, Any],
        type: str,
        reason: str,
        action: str,
        note: str,
        controller: str,
        instance: str,
    ) -> None:
        """Queue an events.k8s.io/v1 Event (``reportingController``/``reportingInstance``)."""
        meta = obj.get("metadata") or {}
        self._queue.put_nowait(
            {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {
                    "name": self._event_name(meta),
                    "namespace": meta.get("namespace") or "default",
                },
                "eventTime": micro_time_text(self._clock),
                "reportingController": controller,
                "reportingInstance": instance,
                "action": action,
                "reason": reason,
                "regarding": object_reference(obj),
                "note": note,
                "type": type,
            }
        )

    def _event_name(self, meta: Mapping[str, Any]) -> str:
        # Upstream: "<object name>.<unix nanoseconds in hex>"; a sequence keeps names unique
        # when a fake clock stands still.
        nanos = int(self._clock.now().timestamp() * 1e9) + self._sequence
        self._sequence += 1
        return f"{meta.get('name', 'unknown')}.{nanos:x}"

    async def _run(self) -> None:
        while True:
            event = await self._queue.get()
            if event is None:
                self._queue.task_done()
                return
            try:
                await self._write(event)
            except APIError as exc:
                log.debug("event not recorded (%s): %s", exc.reason, exc.message)
            except Exception:
                log.exception("event not recorded")
            finally:
                self._queue.task_done()

    async def _write(self, event: dict[str, Any]) -> None:
        namespace = event["metadata"]["namespace"]
        if event["apiVersion"] != "v1":
            resource = self._registry.get("events.k8s.io", "v1", "events")
            assert resource is not None
            await self._operations.create(resource, namespace, event, _SERVER_BUILT)
            return
        resource = self._registry.get("", "v1", "events")
        assert resource is not None
        involved = event["involvedObject"]
        key: _AggregationKey = (
            involved.get("uid", ""),
            involved.get("fieldPath", ""),
            event["type"],
            event["reason"],
            event["message"],
            event["source"]["component"],
            event["source"].get("host", ""),
        )
        seen = self._recent.get(key)
        if seen is not None:
            name = seen[1]
            record = self._operations.storage.get(resource.storage_key(namespace, name))
            if record is not None:
                stored = decode(record.value)
                stored["count"] = int(stored.get("count") or 1) + 1
                stored["lastTimestamp"] = event["lastTimestamp"]
                await self._operations.update(resource, namespace, name, stored, _SERVER_BUILT)
                self._recent.move_to_end(key)
                return
        await self._operations.create(resource, namespace, event, _SERVER_BUILT)
        # The Event is named here (a create keeps a given name): no need to decode the answer.
        self._recent[key] = (namespace, event["metadata"]["name"])
        while len(self._recent) > AGGREGATION_CACHE_SIZE:
            self._recent.popitem(last=False)
