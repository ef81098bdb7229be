"""Running the real ``kubectl`` against the local cluster from tests."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

#: kubectl's own request timeout; generous because the two CPUs are shared.
KUBECTL_TIMEOUT_SECONDS = 60


class Kubectl:
    """``kubectl --kubeconfig K --cache-dir C ...`` with a private discovery cache."""

    def __init__(self, kubeconfig: Path, cache_dir: Path, binary: str = "kubectl") -> None:
        self._kubeconfig = kubeconfig
        self._cache_dir = cache_dir
        self._binary = binary

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl; raise with its output when ``check`` and it fails."""
        result = subprocess.run(
            self._command(*args),
            input=stdin,
            capture_output=True,
            text=True,
            env=self._env(),
            timeout=KUBECTL_TIMEOUT_SECONDS,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                f"{result.stdout}\n{result.stderr}"
            )
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """Start kubectl in the background (for ``get --watch``); stdout/stderr are pipes."""
        return subprocess.Popen(
            self._command(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self._env(),
        )

    def _command(self, *args: str) -> list[str]:
        return [
            self._binary,
            "--kubeconfig",
            str(self._kubeconfig),
            "--cache-dir",
            str(self._cache_dir),
            *args,
        ]

    def _env(self) -> dict[str, str]:
        return {**os.environ, "KUBECACHEDIR": str(self._cache_dir), "KUBECONFIG": ""}

    def json(self, *args: str) -> Any:
        """Run kubectl with ``-o json`` and decode its output."""
        return json.loads(self.run(*args, "-o", "json").stdout)
