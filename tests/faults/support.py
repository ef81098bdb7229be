"""Shared pieces of the fault tests: a Widget-like operator, subprocess runners, checks.

The operator treats every ConfigMap labelled ``role=widget`` as a primary object: it applies
one child ConfigMap ``NAME-child`` (controlled by the parent, data copied) and reports what it
saw in the parent's ``widgets/observed`` annotation (its "status"). Convergence means: every
parent has exactly one child with its data and the annotation, and no child is orphaned.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from setpoint.client.client import Client

WIDGET_OPERATOR = """
import asyncio
import os

import setpoint.manager

op = setpoint.manager.Operator("widgets")


@op.reconciler(for_=("v1", "ConfigMap"), owns=[("v1", "ConfigMap")])
async def reconcile(ctx, request):
    parent = await ctx.get()
    if parent is None or (parent["metadata"].get("labels") or {}).get("role") != "widget":
        return None
    data = dict(parent.get("data") or {})
    await ctx.apply_owned(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": parent["metadata"]["name"] + "-child",
                "labels": {"role": "child"},
            },
            "data": data,
        }
    )
    # WIDGET_DELAY: seconds between the child and the status, to be killed mid-reconcile.
    await asyncio.sleep(float(os.environ.get("WIDGET_DELAY", "0")))
    wanted = data.get("size", "")
    if (parent["metadata"].get("annotations") or {}).get("widgets/observed") != wanted:
        parent["metadata"].setdefault("annotations", {})["widgets/observed"] = wanted
        await ctx.client.update(parent)
    return None
"""

RUN = "import sys; from setpoint.cli.main import main; main(sys.argv[1:])"


def write_operator(directory: Path, source: str = WIDGET_OPERATOR) -> Path:
    target = directory / "widget_operator.py"
    target.write_text(source)
    return target


async def start_run(
    target: Path,
    kubeconfig: str | Path,
    *args: str,
    log_file: Path | None = None,
    env: dict[str, str] | None = None,
) -> asyncio.subprocess.Process:
    """`setpoint run TARGET` in a subprocess (JSON logs on stderr, or into ``log_file``)."""
    stderr: Any = asyncio.subprocess.PIPE
    if log_file is not None:
        stderr = log_file.open("ab")
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "setpoint", "run", str(target),
            "--kubeconfig", str(kubeconfig), "--log-format", "json", *args,
            stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
            env={**os.environ, **(env or {})},
        )  # fmt: skip
    finally:
        if log_file is not None:
            stderr.close()


async def start_server(
    data_dir: Path, *args: str, log_file: Path | None = None
) -> asyncio.subprocess.Process:
    """`setpoint cluster serve --data-dir DIR`, returned once its kubeconfig is written."""
    kubeconfig = data_dir / "kubeconfig"
    stamp = kubeconfig.stat().st_mtime_ns if kubeconfig.exists() else 0
    out = (log_file or data_dir.parent / "server.log").open("ab")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "setpoint", "cluster", "serve", "--data-dir", str(data_dir),
        "--no-controllers", *args,
        stdout=asyncio.subprocess.PIPE, stderr=out,
    )  # fmt: skip
    out.close()
    assert process.stdout is not None
    async with asyncio.timeout(90):
        line = await process.stdout.readline()
    assert line.startswith(b"export KUBECONFIG="), line
    assert kubeconfig.stat().st_mtime_ns >= stamp
    return process


async def stop_process(process: asyncio.subprocess.Process, sig: int = signal.SIGTERM) -> int:
    """Signal ``process`` (if alive) and wait for it; its exit code."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
    async with asyncio.timeout(60):
        await process.wait()
    return process.returncode if process.returncode is not None else -1


def kill9(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def connected(kubeconfig: str | Path) -> AsyncIterator[Client]:
    async with await Client.from_kubeconfig(str(kubeconfig)) as client:
        yield client


def parent(name: str, size: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"role": "widget"}},
        "data": {"size": size},
    }


async def convergence(client: Client, namespace: str, expected: dict[str, str]) -> list[str]:
    """What is still wrong (empty once converged): ``expected`` maps parent name to size."""
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    items = listed.items
    by_name = {item["metadata"]["name"]: item for item in items}
    problems: list[str] = []
    children = [i for i in items if (i["metadata"].get("labels") or {}).get("role") == "child"]
    owners: dict[str, int] = {}
    for child in children:
        refs = child["metadata"].get("ownerReferences") or []
        for ref in refs:
            owners[ref["name"]] = owners.get(ref["name"], 0) + 1
    for name, size in expected.items():
        item = by_name.get(name)
        if item is None:
            problems.append(f"{name} missing")
            continue
        observed = (item["metadata"].get("annotations") or {}).get("widgets/observed")
        if observed != size:
            problems.append(f"{name} observed={observed!r} want {size!r}")
        child = by_name.get(f"{name}-child")
        if child is None:
            problems.append(f"{name}-child missing")
        elif (child.get("data") or {}).get("size") != size:
            problems.append(f"{name}-child size={child.get('data')!r}")
        if owners.get(name, 0) != 1:
            problems.append(f"{name} has {owners.get(name, 0)} children")
    extra = [c["metadata"]["name"] for c in children if c["metadata"]["name"][:-6] not in expected]
    if extra:
        problems.append(f"unexpected children {extra}")
    return problems


async def wait_converged(
    client: Client, namespace: str, expected: dict[str, str], limit: float = 120
) -> float:
    """Seconds until converged; AssertionError with what is wrong after ``limit`` seconds."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    problems: list[str] = []
    while loop.time() - started < limit:
        try:
            problems = await convergence(client, namespace, expected)
        except Exception as error:  # the server may be restarting
            problems = [f"{type(error).__name__}: {error}"]
        if not problems:
            return loop.time() - started
        await asyncio.sleep(0.2)
    raise AssertionError(f"not converged after {limit}s: {problems[:10]}")


def json_lines(text: str) -> list[dict[str, Any]]:
    entries = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


async def probe_url(log_file: Path) -> str:
    """The health-probe base URL an operator logged (``serving health probes on URL``)."""
    async with asyncio.timeout(60):
        while True:
            for entry in json_lines(log_file.read_text()):  # noqa: ASYNC240 - a small file
                message = str(entry.get("msg", ""))
                if message.startswith("serving health probes on "):
                    return message.split(" on ", 1)[1].split()[0]
            await asyncio.sleep(0.2)


async def http_get(url: str) -> tuple[int, str]:
    import aiohttp

    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text()


async def wait_status(url: str, status: int, limit: float = 120) -> tuple[float, str]:
    """Poll ``url`` until it answers ``status``; (seconds waited, body)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    last: object = None
    while loop.time() - started < limit:
        try:
            code, body = await http_get(url)
            last = (code, body)
            if code == status:
                return loop.time() - started, body
        except Exception as error:
            last = error
        await asyncio.sleep(0.25)
    raise AssertionError(f"{url} did not answer {status} within {limit}s; last: {last!r}")


async def child_uids(client: Client, namespace: str) -> dict[str, str]:
    """name -> uid of the child ConfigMaps (a child deleted and created again changes uid)."""
    listed = await client.list("v1", "ConfigMap", namespace=namespace, label_selector="role=child")
    return {item["metadata"]["name"]: item["metadata"]["uid"] for item in listed.items}
