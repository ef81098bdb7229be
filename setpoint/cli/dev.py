"""``setpoint dev``: a local cluster, the operator's CRDs (and samples), and the operator,
restarted whenever a source file changes.

Each part is its own process, so a reload is clean: the cluster (``setpoint cluster serve``,
unless ``--kubeconfig`` names another cluster) lives for the whole session; on every change
under the watched directory the operator process is stopped (SIGTERM, as in a pod), the CRDs
are installed again from the edited models (``setpoint install``), and the operator starts
again. File changes are watched with ``watchfiles``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

import click

from setpoint.cli.local_processes import setpoint_command, start_local_cluster, stop_process

__all__ = ["dev_command"]


def _say(message: str) -> None:
    click.echo(click.style("setpoint dev: ", fg="cyan") + message, err=True)


_setpoint = setpoint_command
_stop = stop_process


def _start_cluster(workdir: Path) -> tuple[subprocess.Popen[bytes], Path]:
    return start_local_cluster(workdir)


def _install(target: str, kubeconfig: Path, samples: bool, workdir: Path) -> bool:
    done = subprocess.run(
        _setpoint("install", target, "--kubeconfig", str(kubeconfig)),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        _say(click.style("CRDs not installed: ", fg="red") + done.stderr.strip().splitlines()[-1])
        return False
    _say("CRDs installed")
    if samples:
        config = workdir / "config"
        generated = subprocess.run(
            _setpoint("generate", target, "-o", str(config)), capture_output=True, text=True
        )
        sample_dir = config / "samples"
        if generated.returncode == 0 and any(sample_dir.glob("*_*.yaml")):
            applied = subprocess.run(
                ["kubectl", "--kubeconfig", str(kubeconfig), "apply", "-n", "default",
                 "-k", str(sample_dir)],
                capture_output=True,
                text=True,
            )  # fmt: skip
            _say("samples applied" if applied.returncode == 0 else
                 f"samples not applied: {applied.stderr.strip()}")  # fmt: skip
    return True


def _interrupt(signum: int, frame: object) -> None:
    # SIGTERM (a terminal closing, a supervisor, `kill`) stops like Ctrl-C, so the cluster and
    # the operator started here stop too instead of outliving this process.
    raise KeyboardInterrupt


def _watched_directory(target: str) -> Path:
    location = target.split(":", 1)[0]
    if Path(location).is_dir():
        return Path(location).resolve()
    if location.endswith(".py") or os.sep in location:
        return Path(location).resolve().parent
    return Path.cwd()


@click.command(name="dev")
@click.argument("target")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, exists=True),
    help="Use this cluster instead of starting a local one.",
)
@click.option("--samples", is_flag=True, help="Apply the generated samples (namespace default).")
@click.option(
    "--watch",
    "watch_dir",
    type=click.Path(file_okay=False, exists=True),
    help="Directory to watch (default: the TARGET file's, or the current one).",
)
@click.option("--once", is_flag=True, help="Start everything, then stop at the first change.")
def dev_command(
    target: str, kubeconfig: str | None, samples: bool, watch_dir: str | None, once: bool
) -> None:
    """Local cluster + the operator's CRDs + the operator, restarted on every source change.

    \b
    Example:
      setpoint dev myop/operator.py --samples
      # in another terminal: export KUBECONFIG=... (printed below); kubectl get all
    """
    import watchfiles

    workdir = Path(tempfile.mkdtemp(prefix="setpoint-dev-"))
    cluster: subprocess.Popen[bytes] | None = None
    operator: subprocess.Popen[bytes] | None = None
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if kubeconfig is None:
            _say("starting a local cluster ...")
            cluster, config_path = _start_cluster(workdir)
        else:
            config_path = Path(kubeconfig)
        _say(f"cluster ready; in another terminal: export KUBECONFIG={config_path}")
        watched = Path(watch_dir) if watch_dir else _watched_directory(target)
        while True:
            if _install(target, config_path, samples, workdir):
                # --webhooks-local: the operator's webhooks (if any) are registered against the
                # dev cluster with a fresh certificate, and removed when it stops or reloads.
                operator = subprocess.Popen(
                    _setpoint("run", target, "--kubeconfig", str(config_path), "--webhooks-local")
                )
                _say(f"operator running (pid {operator.pid}); watching {watched} for changes")
            for changes in watchfiles.watch(watched, watch_filter=watchfiles.PythonFilter()):
                names = sorted({Path(path).name for _, path in changes})
                _say(f"changed: {', '.join(names)}; reloading")
                break
            _stop(operator)
            operator = None
            if once:
                return
    except KeyboardInterrupt:
        _say("stopping")
    finally:
        _stop(operator)
        _stop(cluster)
