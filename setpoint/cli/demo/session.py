"""The processes of one demo — a local cluster and the examples' operators — and the samples.

Everything lives in one temporary directory (kubeconfig, logs), removed by :meth:`stop`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml

from setpoint.cli.local_processes import (
    last_line,
    setpoint_command,
    start_local_cluster,
    stop_process,
)
from setpoint.manager.target import project_directories

__all__ = ["DemoSession", "load_denied_samples", "load_samples", "webhook_configuration_count"]

#: The memcached example reads its image from the environment, as operator-sdk's does.
DEFAULT_ENVIRONMENT = {"MEMCACHED_IMAGE": "memcached:1.6.26-alpine"}


def load_samples(examples: Path) -> list[dict[str, Any]]:
    """Every object in the projects' committed ``config/samples/*.yaml`` (kustomization aside)."""
    samples: list[dict[str, Any]] = []
    for project in project_directories(examples):
        for path in sorted((project / "config" / "samples").glob("*.yaml")):
            if path.name == "kustomization.yaml":
                continue
            samples.extend(
                document
                for document in yaml.safe_load_all(path.read_text())
                if isinstance(document, dict)
            )
    return samples


def load_denied_samples(examples: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The objects of the projects' ``demo/denied-*.yaml``: writes their admission webhooks
    refuse, applied by the demo to show the refusal (with the file each comes from)."""
    denied: list[tuple[Path, dict[str, Any]]] = []
    for project in project_directories(examples):
        for path in sorted((project / "demo").glob("denied-*.yaml")):
            denied.extend(
                (path, document)
                for document in yaml.safe_load_all(path.read_text())
                if isinstance(document, dict)
            )
    return denied


def webhook_configuration_count(examples: Path) -> int:
    """How many webhook configurations the projects' operators register (from the committed
    ``config/webhook/manifests.yaml``): the demo waits for them before applying anything."""
    count = 0
    for project in project_directories(examples):
        manifests = project / "config" / "webhook" / "manifests.yaml"
        if manifests.is_file():
            count += sum(
                1
                for document in yaml.safe_load_all(manifests.read_text())
                if isinstance(document, dict)
                and str(document.get("kind", "")).endswith("WebhookConfiguration")
            )
    return count


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class DemoSession:
    """A running demo: where its files are and the processes it started."""

    examples: Path
    workdir: Path
    kubeconfig: Path
    metrics_url: str
    cluster: subprocess.Popen[bytes] | None = None
    operators: subprocess.Popen[bytes] | None = None
    console: subprocess.Popen[bytes] | None = None
    console_url: str | None = None

    @classmethod
    def start(cls, examples: Path, *, run_pods: bool = True) -> DemoSession:
        """Start the cluster, install the CRDs, start the operators (raises ClickException)."""
        if not project_directories(examples):
            raise click.ClickException(
                f"{examples}: no example projects (directories holding a package with "
                "operator.py); run from the setpoint checkout or name the directory"
            )
        workdir = Path(tempfile.mkdtemp(prefix="setpoint-demo-"))
        session = cls(examples, workdir, workdir / "kubeconfig", "")
        try:
            session.cluster, session.kubeconfig = start_local_cluster(
                workdir, *(["--run-pods"] if run_pods else [])
            )
            installed = subprocess.run(
                setpoint_command("install", str(examples), "--kubeconfig", str(session.kubeconfig)),
                capture_output=True,
                text=True,
            )
            if installed.returncode != 0:
                reason = (installed.stderr.strip().splitlines() or ["no output"])[-1]
                raise click.ClickException(f"installing the examples' CRDs failed: {reason}")
            session.metrics_url = f"http://127.0.0.1:{_free_port()}/metrics"
            host_port = session.metrics_url.removeprefix("http://").removesuffix("/metrics")
            with open(workdir / "operators.log", "wb") as log:
                session.operators = subprocess.Popen(
                    setpoint_command(
                        "run",
                        str(examples),
                        "--kubeconfig",
                        str(session.kubeconfig),
                        "--metrics-bind-address",
                        host_port,
                        "--health-probe-bind-address",
                        "127.0.0.1:0",
                        # Operators with admission webhooks serve them on a free port, with
                        # their configurations registered (and removed on exit) by the run.
                        "--webhook-port",
                        "0",
                        "--webhooks-local",
                        # The reconcile trace is on under the demo (for the console).
                        "--trace",
                    ),
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    env={**DEFAULT_ENVIRONMENT, **os.environ},
                )
        except BaseException:
            session.stop()
            raise
        return session

    def start_console(self) -> str:
        """Start ``setpoint console`` on the cluster and the operators; returns its URL."""
        from setpoint.cli.console import console_url, start_console

        self.console = start_console(
            self.workdir, self.kubeconfig, [self.metrics_url.removesuffix("/metrics")]
        )
        self.console_url = console_url(self.console, self.workdir)
        return self.console_url

    def operators_failure(self) -> str | None:
        """Why the operators' process has exited, or None while it runs."""
        if self.operators is None or self.operators.poll() is None:
            return None
        return (
            f"the operators exited with code {self.operators.returncode}: "
            f"{last_line(self.workdir / 'operators.log')}"
        )

    def stop(self) -> None:
        """Stop the console and the operators, then the cluster; remove the working directory."""
        stop_process(self.console)
        stop_process(self.operators)
        stop_process(self.cluster)
        shutil.rmtree(self.workdir, ignore_errors=True)
