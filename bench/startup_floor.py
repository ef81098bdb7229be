"""The start-up floor: the least an aiohttp client does before its first request.

    python bench/startup_floor.py KUBECONFIG

It imports aiohttp and PyYAML (what setpoint's client is built on), reads the kubeconfig's
current context (server and bearer token) and sends one ``GET /version``; then it exits, whatever
the answer. ``bench.operator_scenarios startup`` times it beside ``setpoint run``: what
setpoint takes beyond this is its own start-up work. It is the floor as any program that
imports aiohttp pays it, including the two loads of the system's CA certificates aiohttp makes
when imported (setpoint defers them to their first use: see
``setpoint/api/deferred_certificates.py``).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import aiohttp
import yaml


def _named(entries: list[dict[str, Any]], name: str, field: str) -> dict[str, Any]:
    for entry in entries:
        if entry["name"] == name:
            return entry[field]  # type: ignore[no-any-return]
    raise SystemExit(f"kubeconfig: no {field} named {name!r}")


def server_and_token(kubeconfig: Path) -> tuple[str, str | None]:
    """The server and bearer token of the kubeconfig's current context."""
    config = yaml.safe_load(kubeconfig.read_text())
    context = _named(config["contexts"], config["current-context"], "context")
    server = _named(config["clusters"], context["cluster"], "cluster")["server"]
    return server, _named(config["users"], context["user"], "user").get("token")


async def get_version(server: str, token: str | None) -> None:
    """One request to the server."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession(headers=headers) as session:
        try:
            async with session.get(server + "/version") as response:
                await response.read()
        except aiohttp.ClientError:  # the benchmark's listener hangs up at once
            pass


if __name__ == "__main__":
    asyncio.run(get_version(*server_and_token(Path(sys.argv[1]))))
