"""Runs KMock's ``KubernetesEmulator`` on 127.0.0.1 as a peer server for ``bench.apiserver``.

    python -m bench.kmock_server --port N

Prints ``ready http://127.0.0.1:N`` on stdout once it accepts connections, then serves until
SIGTERM/SIGINT. KMock keeps every request it served (for test assertions); that is part of
what it costs, so it is measured as it ships.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

import kmock


async def serve(port: int) -> None:
    """Serve the emulator on ``port`` until a termination signal arrives."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with kmock.KubernetesEmulator() as emulator, kmock.Server(emulator, port=port) as server:
        print(f"ready http://127.0.0.1:{server.port}", flush=True)
        await stop.wait()


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.kmock_server")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    asyncio.run(serve(args.port))
    sys.exit(0)


if __name__ == "__main__":
    main()
