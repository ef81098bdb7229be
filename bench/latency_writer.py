"""The writer of the latency benchmark: merge-patches ConfigMaps at a steady rate.

    python -m bench.latency_writer URL TOKEN NAMESPACE --objects N --rate R --seconds S

Runs in its own process so that its work does not share the measured controller's event loop.
Each patch sets ``data.stamp`` to the wall-clock time just before the request is sent; the
controller's latency is the time from that stamp to its reconcile seeing the object (so it
includes the write's own round trip: an upper bound of event-to-reconcile). The objects
``bench-0`` .. ``bench-N-1`` must exist. Patches are spread round-robin over them and started on
schedule whether or not earlier ones have been answered (up to a bound), so a slow server does not
silently lower the rate; the achieved rate and the patches' round-trip times (p50/p99) are
printed as JSON at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Final

import aiohttp
import msgspec

#: Patches in flight at most; beyond this the writer falls behind and the printed rate says so.
MAX_IN_FLIGHT: Final = 64


def object_name(index: int) -> str:
    """Name of the ``index``-th ConfigMap the writer patches."""
    return f"bench-{index}"


async def write(
    url: str, token: str, namespace: str, objects: int, rate: float, seconds: float
) -> dict[str, float | None]:
    """Patch for ``seconds`` at ``rate`` patches/s; returns what was achieved."""
    encode = msgspec.json.Encoder().encode
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/merge-patch+json"}
    in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)
    failures = 0
    done = 0
    round_trips: list[float] = []

    async def patch(http: aiohttp.ClientSession, index: int) -> None:
        nonlocal failures, done
        async with in_flight:
            name = object_name(index % objects)
            path = f"{url}/api/v1/namespaces/{namespace}/configmaps/{name}"
            sent = time.perf_counter()
            body = encode({"data": {"stamp": repr(time.time())}})
            async with http.patch(path, data=body, headers=headers) as response:
                await response.read()
                if response.status == 200:
                    done += 1
                    round_trips.append((time.perf_counter() - sent) * 1000)
                else:
                    failures += 1

    total = int(rate * seconds)
    tasks: set[asyncio.Task[None]] = set()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=MAX_IN_FLIGHT)) as http:
        started = time.perf_counter()
        for index in range(total):
            delay = started + index / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            task = asyncio.create_task(patch(http, index))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - started
    round_trips.sort()

    def percentile(fraction: float) -> float | None:
        if not round_trips:
            return None
        return round_trips[min(len(round_trips) - 1, int(fraction * len(round_trips)))]

    return {
        "patches": done,
        "failures": failures,
        "rate": done / elapsed,
        "round_trip_p50_ms": percentile(0.5),
        "round_trip_p99_ms": percentile(0.99),
    }


def argument_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m bench.latency_writer``."""
    parser = argparse.ArgumentParser(prog="python -m bench.latency_writer")
    parser.add_argument("url")
    parser.add_argument("token")
    parser.add_argument("namespace")
    parser.add_argument("--objects", type=int, required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    return parser


def command_arguments(
    url: str, token: str, namespace: str, *, objects: int, rate: float, seconds: float
) -> list[str]:
    """The arguments of ``python -m bench.latency_writer``: the options, then ``--`` and the
    positionals (a token may begin with ``-``, which argparse would take for an option)."""
    return [
        "--objects", str(objects), "--rate", str(rate), "--seconds", str(seconds),
        "--", url, token, namespace,
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    args = argument_parser().parse_args(argv)
    result = asyncio.run(
        write(args.url, args.token, args.namespace, args.objects, args.rate, args.seconds)
    )
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
