"""Exec and attach over SPDY, as kubectl before 1.30 speaks them (``kubectl exec``, ``cp``,
``attach``).

The client offers ``v4.channel.k8s.io`` (and older) in ``X-Stream-Protocol-Version`` and opens
one stream per standard stream it wants, named by the ``streamtype`` header: ``error`` first,
then ``stdin`` (with ``-i``), ``stdout``, ``stderr`` (without a TTY) and ``resize`` (with one).
Once they are all there the command runs (or the container is attached): ``stdin`` feeds it,
its output goes to ``stdout`` and ``stderr``, and its end is reported on ``error`` as a
``Status`` (v4; kubectl turns it into its exit code), as the kubelet's remote command server
does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Final

from setpoint.cluster.apiserver.http.remote_process import ProcessStarter, StartFailed
from setpoint.cluster.apiserver.http.spdy.session import Stream

#: What the server accepts in ``X-Stream-Protocol-Version``, best first.
PROTOCOLS: Final = ("v4.channel.k8s.io",)
#: How long the command waits for the client's streams (the kubelet's stream creation timeout).
STREAMS_TIMEOUT_SECONDS: Final = 30.0


class RemoteCommand:
    """Collects the streams of one exec or attach and starts the process once they are there."""

    def __init__(self, query: Mapping[str, str], start: ProcessStarter) -> None:
        self._start = start
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
            process = await self._start("stdin" in streams, self._tty)
        except StartFailed as failed:
            await error.write(json.dumps(failed.status).encode())
            await self._close_all()
            return

        async def feed() -> None:
            stdin = streams.get("stdin")
            if stdin is None:
                return
            while chunk := await stdin.read():
                await process.write_stdin(chunk)
            process.close_stdin()

        async def pump() -> None:
            async for name, chunk in process.output():
                target = streams.get("stdout" if self._tty else name)
                if target is not None:
                    await target.write(chunk)
            await error.write(json.dumps(await process.status()).encode())

        feeder = asyncio.create_task(feed())
        output = asyncio.create_task(pump())
        # The output's end ends the session, and so does the connection's.
        gone = asyncio.create_task(error.session.ended.wait())
        try:
            await asyncio.wait([output, gone], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (feeder, output, gone):
                task.cancel()
            for task in (feeder, output, gone):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            process.abandon()
            await self._close_all()

    async def _close_all(self) -> None:
        for stream in self._streams.values():
            stream.discard()
            await stream.close()
