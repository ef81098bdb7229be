"""Requests for a resourceVersion the storage has not reached yet: wait briefly, then 504.

kube-apiserver's watch cache blocks such a list (and a watch that asks for initial events) for
up to 3 seconds (``blockTimeout`` in ``cacher/watch_cache.go``), then answers ``Timeout: Too
large resource version: N, current: M`` (504, cause ``ResourceVersionTooLarge``, retry after
1 s). Reflectors relist from scratch on it. Here every watch gets the same rule: etcd's
revision never moves backwards, but a server restarted ``--in-memory`` starts over, and a
client resuming from the previous incarnation's revision must be told, not left waiting.
"""

from __future__ import annotations

import asyncio
from typing import Final

from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.apiserver.storage import Storage

#: How long a request for a future revision waits for it (upstream ``blockTimeout``).
BLOCK_TIMEOUT_SECONDS: Final = 3.0
#: The client's retry hint (upstream ``resourceVersionTooHighRetrySeconds``).
RETRY_AFTER_SECONDS: Final = 1
#: How often the wait looks at the storage's revision again.
POLL_SECONDS: Final = 0.02
TOO_LARGE_CAUSE: Final = "ResourceVersionTooLarge"


def too_large_resource_version(requested: int, current: int) -> APIError:
    """The upstream 504 for a resourceVersion above the current revision."""
    return APIError(
        504,
        StatusReason.TIMEOUT,
        f"Timeout: Too large resource version: {requested}, current: {current}",
        details={
            "causes": [{"reason": TOO_LARGE_CAUSE, "message": "Too large resource version"}],
            "retryAfterSeconds": RETRY_AFTER_SECONDS,
        },
    )


async def wait_for_revision(storage: Storage, requested: int) -> None:
    """Return once ``storage.revision >= requested``; the 504 above after
    :data:`BLOCK_TIMEOUT_SECONDS` (read at each call, so tests may shorten it)."""
    if storage.revision >= requested:
        return
    timeout = BLOCK_TIMEOUT_SECONDS
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while storage.revision < requested:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise too_large_resource_version(requested, storage.revision)
        await asyncio.sleep(min(POLL_SECONDS, remaining))
