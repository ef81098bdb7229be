"""The HTTP ceiling: a bare aiohttp server that parses a create body and answers 201.

    python -m bench.ceiling_server --port N

It does the least any Python API server on aiohttp must do for a create (read the body, decode
it as JSON with msgspec, encode a response) and stores nothing, so its creates/s are the upper
bound the real servers are compared with. Prints ``ready http://127.0.0.1:N`` once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

import msgspec
from aiohttp import web

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


async def create(request: web.Request) -> web.Response:
    """Decode the posted object and echo it back as created (like an API server would)."""
    body: Any = _decode(await request.read())
    return web.Response(status=201, body=_encode(body), content_type="application/json")


async def version(request: web.Request) -> web.Response:
    """Answer ``/version`` so the same readiness probe works for every target."""
    return web.json_response({"major": "1", "minor": "32", "gitVersion": "v1.32.0-ceiling"})


async def serve(port: int) -> None:
    """Serve until SIGTERM/SIGINT."""
    app = web.Application()
    app.router.add_get("/version", version)
    app.router.add_post("/api/v1/namespaces/{namespace}/configmaps", create)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    print(f"ready http://127.0.0.1:{port}", flush=True)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.ceiling_server")
    parser.add_argument("--port", type=int, required=True)
    asyncio.run(serve(parser.parse_args().port))


if __name__ == "__main__":
    main()
