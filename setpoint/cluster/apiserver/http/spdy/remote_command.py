"""Exec over SPDY, as kubectl before 1.30 speaks it (``kubectl exec``, ``kubectl cp``).

The client offers ``v4.channel.k8s.io`` (and older) in ``X-Stream-Protocol-Version`` and opens
one stream per standard stream it wants, named by the ``streamtype`` header: ``error`` first,
then ``stdin`` (with ``-i``), ``stdout``, ``stderr`` (without a TTY) and ``resize`` (with one).
Once they are all there the command runs: ``stdin`` feeds it, its output goes to ``stdout`` and
``stderr``, and its end is reported on ``error`` as a ``Status`` (v4; kubectl turns it into its
exit code), as the kubelet's remote command server does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Final

from setpoint.cluster.apiserver.http.exec_command import exit_status, start_command, start_failure
from setpoint.cluster.apiserver.http.spdy.session import READ_CHUNK, Stream

#: What the server accepts in ``X-Stream-Protocol-Version``, best first.
PROTOCOLS: Final = ("v4.channel.k8s.io",)
#: How long the command waits for the client's streams (the kubelet's stream creation timeout).
STREAMS_TIMEOUT_SECONDS: Final = 30.0


class RemoteCommand:
    """Collects the streams of one exec and runs the command once they are there."""

    def __init__(
        self, query: Mapping[str, str], command: list[str], cwd: str, env: dict[str, str]
    ) -> None:
        self._command = command
        self._cwd = cwd
        self._env = env
        tty = query.get("tty") == "true"
        self._expected = {"error"}
        if query.get("stdin") == "true":
            self._expected.add("stdin")
        if query.get("stdout", "true") == "true":
            self._expected.add("stdout")
        if query.get("stderr", "true") == "true" and not tty:
            self._expected.add("stderr")
        if tty:
            self._expected.add("resize")
        self._tty = tty
        self._streams: dict[str, Stream] = {}
        self._all_there = asyncio.Event()

    async def on_stream(self, stream: Stream) -> None:
        """Take a new stream; the one completing the set runs the command."""
        kind = stream.headers.get("streamtype", "")
        if kind not in self._expected or kind in self._streams:
            await stream.close()
            return
        self._streams[kind] = stream
        if set(self._streams) != self._expected:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(STREAMS_TIMEOUT_SECONDS):
                    await self._all_there.wait()
            return
        self._all_there.set()
        await self._run()

    async def _run(self) -> None:
        streams = self._streams
        error = streams["error"]
        try:
            process = await start_command(
                self._command, self._cwd, self._env, stdin="stdin" in streams, tty=self._tty
            )
        except OSError as exc:
            await error.write(json.dumps(start_failure(self._command, exc)).encode())
            await self._close_all()
            return

        async def feed() -> None:
            stdin = streams.get("stdin")
            if stdin is None or process.stdin is None:
                return
            while chunk := await stdin.read():
                process.stdin.write(chunk)
                with contextlib.suppress(ConnectionError):
                    await process.stdin.drain()
            process.stdin.close()

        async def pump(source: asyncio.StreamReader | None, name: str) -> None:
            target = streams.get(name)
            if source is None:
                return
            while chunk := await source.read(READ_CHUNK):
                if target is not None:
                    await target.write(chunk)

        feeder = asyncio.create_task(feed())
        try:
            await asyncio.gather(pump(process.stdout, "stdout"), pump(process.stderr, "stderr"))
            await error.write(json.dumps(exit_status(await process.wait())).encode())
        finally:
            feeder.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await feeder
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            await self._close_all()

    async def _close_all(self) -> None:
        for stream in self._streams.values():
            await stream.close()
