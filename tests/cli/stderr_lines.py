"""Reading a long-running command's stderr line by line until an expected line appears."""

from __future__ import annotations

import re
import subprocess
import time


class StderrLines:
    """The lines ``process`` has written to stderr so far; :meth:`until` reads on."""

    def __init__(self, process: subprocess.Popen[str], timeout: float = 60) -> None:
        self.process = process
        self.timeout = timeout
        self.lines: list[str] = []

    def until(self, pattern: str, timeout: float | None = None) -> str:
        """The next line matching ``pattern``; AssertionError with every line read otherwise."""
        assert self.process.stderr is not None
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            self.lines.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no line matching {pattern!r} in:\n{''.join(self.lines)}")
