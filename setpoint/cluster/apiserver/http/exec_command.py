"""The command of one exec, whatever the stream protocol carries it (WebSocket or SPDY).

Started as the kubelet starts it (its own session, the container's environment, stdin only
when asked, stderr folded into stdout with a TTY), and its end told as the ``Status`` kubectl
turns into its exit code; a command that cannot start is upstream's ``InternalError``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any


async def start_command(
    command: list[str], cwd: str, env: dict[str, str], *, stdin: bool, tty: bool
) -> asyncio.subprocess.Process:
    """Start ``command``; ``OSError`` when it cannot start (see :func:`start_failure`)."""
    return await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
        stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT if tty else asyncio.subprocess.PIPE,
        start_new_session=True,
    )


def start_failure(command: list[str], error: OSError) -> dict[str, Any]:
    """The Status of a command that could not start, in the container runtime's words."""
    missing = isinstance(error, FileNotFoundError)
    why = "executable file not found in $PATH" if missing else str(error.strerror)
    return {
        "metadata": {},
        "status": "Failure",
        "message": "Internal error occurred: error executing command in container: failed "
        f'to exec in container: OCI runtime exec failed: exec: "{command[0]}": {why}: '
        "unknown",
        "reason": "InternalError",
        "code": 500,
    }


def exit_status(returncode: int) -> dict[str, Any]:
    """The Status kubectl reads for a process's ``returncode`` (a signal N counts as 128+N)."""
    code = returncode if returncode >= 0 else 128 - returncode
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"command terminated with non-zero exit code: exit status {code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }
