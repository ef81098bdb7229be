"""The Kopf peer of the latency benchmark: the same stamped patches, seen by a Kopf handler.

    KUBECONFIG=F python -m bench.kopf_peer NAMESPACE

Runs Kopf (standalone, one namespace, default settings) with one ``@kopf.on.event`` handler on
ConfigMaps that records, for every new ``data.stamp`` it sees, the wall-clock time since the
stamp. Prints ``ready`` once Kopf's watches are up; stops when a line arrives on stdin, then
prints the latencies (ms) as one JSON list.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from typing import Any

import kopf

_latencies: list[float] = []
_seen: dict[str, str] = {}
_namespace = ""


@kopf.on.event("", "v1", "configmaps")
def record(body: Any, **_: Any) -> None:
    """Record the stamp's age the first time each stamp is seen."""
    now = time.time()
    metadata = body.get("metadata", {})
    if metadata.get("namespace") != _namespace:
        return
    stamp = (body.get("data") or {}).get("stamp", "")
    name = metadata.get("name", "")
    if stamp and _seen.get(name) != stamp:
        _seen[name] = stamp
        _latencies.append((now - float(stamp)) * 1000)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    """Quiet logs; no Events posted for handler outcomes (the handler only records)."""
    settings.posting.enabled = False


async def _wait_for_stop_line(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.readline)
    stop.set()


async def run(namespace: str) -> None:
    """Run the operator until told to stop on stdin."""
    global _namespace
    _namespace = namespace
    ready = asyncio.Event()
    stop = asyncio.Event()
    stopper = asyncio.create_task(_wait_for_stop_line(stop))
    operator = asyncio.create_task(
        kopf.operator(standalone=True, namespaces=[namespace], ready_flag=ready, stop_flag=stop)
    )
    await ready.wait()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    await operator
    await stopper


def main() -> None:
    """Command-line entry point."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(run(sys.argv[1]))
    sys.stdout.write(json.dumps(_latencies) + "\n")


if __name__ == "__main__":
    main()
