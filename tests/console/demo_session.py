"""``setpoint demo`` (the real examples, as a user runs it) with its console, for the browser
tests that look at the demo: started once per module, stopped with SIGINT as Ctrl-C does."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"
#: A cold demo on a loaded machine: cluster, CRDs, operators, samples.
START_TIMEOUT = 180.0


@dataclass
class Demo:
    process: subprocess.Popen[str]
    url: str = ""
    kubeconfig: str = ""
    lines: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["kubectl", "--kubeconfig", self.kubeconfig, *args],
            capture_output=True,
            text=True,
            input=stdin,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


def run_demo() -> Iterator[Demo]:
    process = subprocess.Popen(
        [sys.executable, "-m", "setpoint", "demo", str(EXAMPLES)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,  # its own process group: nothing it started outlives the test
    )
    demo = Demo(process)
    ready = threading.Event()

    def read() -> None:  # keeps the pipe drained for the whole run
        assert process.stderr is not None
        for line in process.stderr:
            demo.lines.append(line)
            if found := re.search(r"console: (http://\S+)", line):
                demo.url = found.group(1)
            if found := re.search(r"--kubeconfig (\S+)", line):
                demo.kubeconfig = demo.kubeconfig or found.group(1)
            if "applied" in line and demo.url:
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        ready.wait(START_TIMEOUT)
        assert demo.url, "no console URL from setpoint demo:\n" + "".join(demo.lines)
        workdir = re.search(r"log: (\S+)/operators\.log", "".join(demo.lines))
        assert workdir, "".join(demo.lines)
        demo.kubeconfig = str(Path(workdir.group(1)) / "kubeconfig")
        yield demo
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        with contextlib.suppress(ProcessLookupError):  # whatever it left behind
            os.killpg(process.pid, signal.SIGKILL)
