"""A webhook server for ``bench.webhooks``, run as its own process (one core of its own).

    python -m bench.webhook_server_process {setpoint,echo} PORT CERT_DIR

``setpoint``: setpoint's ``WebhookServer`` with a ConfigMap defaulter at ``/mutate`` (adds one
label: a real patch) and a ConfigMap validator at ``/validate`` (accepts). ``echo``: a bare
aiohttp HTTPS server answering ``allowed: true`` to every review at both paths, the floor any
Python webhook server stands on. Prints ``ready`` once listening; runs until killed.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from pathlib import Path
from typing import Any

from aiohttp import web

from setpoint.models import ConfigMap
from setpoint.webhook import Defaulter, Validator, WebhookServer


def _label(obj: ConfigMap) -> None:
    obj.metadata.labels = {**(obj.metadata.labels or {}), "defaulted": "yes"}


def _accept(obj: ConfigMap) -> None:
    return None


def setpoint_handlers() -> dict[str, Any]:
    """setpoint's handlers by path: the defaulter and the validator."""
    return {
        "/mutate": Defaulter(ConfigMap, _label),
        "/validate": Validator(ConfigMap, create=_accept),
    }


def echo_answer(body: bytes) -> bytes:
    """The echo's whole work on a review: ``allowed: true`` for its uid."""
    review = json.loads(body)
    answer = {"uid": review["request"]["uid"], "allowed": True}
    return json.dumps(
        {"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": answer}
    ).encode()


async def _echo(request: web.Request) -> web.Response:
    return web.Response(body=echo_answer(await request.read()), content_type="application/json")


async def serve(kind: str, port: int, cert_dir: Path) -> None:
    """Serve until cancelled."""
    if kind == "setpoint":
        server = WebhookServer(host="127.0.0.1", port=port, cert_dir=cert_dir)
        for path, handler in setpoint_handlers().items():
            server.register(path, handler)
        await server.start()
    else:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(cert_dir / "tls.crt"), str(cert_dir / "tls.key"))
        app = web.Application()
        app.router.add_post("/{tail:.*}", _echo)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, ssl_context=context).start()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])))
