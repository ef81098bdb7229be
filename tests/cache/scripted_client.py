"""A test double of the client's raw list/watch API that replays scripted bytes.

It stands in for ``setpoint.client.Client`` at exactly the interface the reflector uses
(``list_raw`` returns a body, ``watch_raw`` yields event lines), so the 410/diff/backoff logic can
be driven through situations a real server produces only by chance. Responses are queued; a
queued exception is raised instead. When the watch scripts run out, the watch stays open and
silent, like a quiet resource.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from setpoint.api.gvk import ResourceInfo

CONFIGMAPS = ResourceInfo(
    group="", version="v1", kind="ConfigMap", resource="configmaps", namespaced=True,
    list_kind="ConfigMapList",
)  # fmt: skip


@dataclass
class WatchScript:
    """One watch connection: lines (or exceptions) to deliver, then end or stay silent."""

    items: list[bytes | BaseException] = field(default_factory=list)
    then_hang: bool = False
    #: Seconds between items (0: one event-loop turn).
    pace: float = 0.0


class ScriptedClient:
    """Replays queued list bodies and watch scripts; records every call's arguments."""

    def __init__(self) -> None:
        self.list_responses: deque[bytes | BaseException] = deque()
        self.watch_scripts: deque[WatchScript] = deque()
        self.list_calls: list[dict[str, Any]] = []
        self.watch_calls: list[dict[str, Any]] = []
        self.open_watches = 0
        self.on_list: Callable[[], None] | None = None

    def queue_list(self, *responses: bytes | BaseException) -> None:
        self.list_responses.extend(responses)

    def queue_watch(
        self, *items: bytes | BaseException, then_hang: bool = False, pace: float = 0.0
    ) -> None:
        self.watch_scripts.append(WatchScript(list(items), then_hang, pace))

    async def list_raw(
        self,
        resource: ResourceInfo,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> bytes:
        self.list_calls.append(
            {
                "resource": resource,
                "namespace": namespace,
                "label_selector": label_selector,
                "field_selector": field_selector,
                "limit": limit,
                "continue_token": continue_token,
                "resource_version": resource_version,
            }
        )
        await asyncio.sleep(0)
        if self.on_list is not None:
            self.on_list()
        if not self.list_responses:
            await asyncio.Event().wait()  # no more scripted lists: hang like a stuck server
        response = self.list_responses.popleft()
        if isinstance(response, BaseException):
            raise response
        return response

    def watch_raw(
        self,
        resource: ResourceInfo,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
        timeout_seconds: int | None = None,
        send_initial_events: bool = False,
        announce_open: bool = False,
    ) -> AsyncIterator[bytes]:
        self.watch_calls.append(
            {
                "resource": resource,
                "namespace": namespace,
                "resource_version": resource_version,
                "label_selector": label_selector,
                "field_selector": field_selector,
                "allow_bookmarks": allow_bookmarks,
                "timeout_seconds": timeout_seconds,
            }
        )
        script = self.watch_scripts.popleft() if self.watch_scripts else WatchScript([], True)
        return self._stream(script, announce_open)

    async def _stream(self, script: WatchScript, announce_open: bool) -> AsyncIterator[bytes]:
        self.open_watches += 1
        try:
            refused = bool(script.items) and isinstance(script.items[0], BaseException)
            if announce_open and not refused:
                yield b""  # as Client.watch_raw: the server accepted the watch
            for item in script.items:
                await asyncio.sleep(script.pace)
                if isinstance(item, BaseException):
                    raise item
                yield item
            if script.then_hang:
                await asyncio.Event().wait()
        finally:
            self.open_watches -= 1
