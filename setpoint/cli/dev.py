"""``setpoint dev``: a local cluster, the operator's CRDs and samples, and the operator,
restarted whenever a source file changes.

Each part is its own process, so a reload is clean: the cluster (``setpoint cluster serve``,
unless ``--kubeconfig`` names another cluster) lives for the whole session; on every change of
a Python file under the watched directory the operator process is stopped (SIGTERM, as in a
pod), the CRDs are installed again from the edited models (``setpoint install``), and the
operator starts again. Samples are the user's: they are applied once at the start and again
only when a sample file changes, so that what the user changed with kubectl meanwhile stays.
In a project made by ``setpoint init`` (found from the current directory when TARGET is left
out) the samples are its ``config/samples``; elsewhere they are generated from the models once.
File changes are watched with ``watchfiles``.

An Ansible operator (a ``watches.yaml``, or its directory; found from the current directory
when TARGET is left out) is run the same way: its CRDs are the project's ``config/crd/bases``
ones or generated from the watched kinds, its samples are ``config/samples``, and a change of
watches.yaml, a role, a playbook or a CRD restarts the operator, which runs every CR again.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from setpoint.cli.console import console_url, start_console
from setpoint.cli.local_processes import setpoint_command, start_local_cluster, stop_process
from setpoint.cli.scaffold import project_settings

__all__ = ["dev_command", "find_project"]

#: How often the watcher wakes to notice an operator that exited (an import error, a crash).
POLL_MILLISECONDS = 500
#: After Ctrl-C, how long the children get to stop by themselves before they get SIGTERM.
GROUP_INTERRUPT_GRACE = 3.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _operator_command(metrics_address: str | None, *args: str) -> list[str]:
    """``setpoint run ARGS``, with the metrics on ``metrics_address`` when the console needs
    it fixed."""
    fixed = ["--metrics-bind-address", metrics_address] if metrics_address is not None else []
    return [*_setpoint(*args), *fixed]


def _say(message: str) -> None:
    click.echo(click.style("setpoint dev: ", fg="cyan") + message, err=True)


_setpoint = setpoint_command
_stop = stop_process


@dataclass(frozen=True)
class DevSession:
    """What one ``setpoint dev`` runs: the TARGET, the directory its commands run in (the
    project's root, so module targets import), what it watches and where the samples are."""

    target: str
    root: Path
    watched: Path
    samples: Path | None
    ansible: bool = False


def find_project(start: Path) -> tuple[Path, str] | None:
    """The root and operator module of the ``setpoint init`` project ``start`` is in."""
    for directory in (start, *start.parents):
        settings = project_settings(directory)
        if settings is not None:
            return directory, f"{settings[0]}.operator"
    return None


def find_ansible_project(start: Path) -> Path | None:
    """The directory holding the watches.yaml of the Ansible project ``start`` is in."""
    for directory in (start, *start.parents):
        if (directory / "watches.yaml").is_file():
            return directory
    return None


def _ansible_target(target: str) -> Path | None:
    """The project directory of an Ansible operator TARGET (watches.yaml or its directory)."""
    path = Path(target)
    if path.is_file() and path.suffix in (".yaml", ".yml"):
        return path.resolve().parent
    if path.is_dir() and (path / "watches.yaml").is_file():
        return path.resolve()
    return None


def _project_root_of(location: Path) -> Path | None:
    found = find_project(location if location.is_dir() else location.parent)
    return found[0] if found is not None else None


def _watched_directory(target: str) -> Path:
    location = target.split(":", 1)[0]
    path = Path(location)
    if path.is_dir():
        return path.resolve()
    if location.endswith(".py") or os.sep in location:
        path = path.resolve()
        directory = path.parent
        while (directory / "__init__.py").is_file():  # the package's whole tree
            directory = directory.parent
        return directory
    return Path.cwd()


def _generated_samples(session_target: str, root: Path, workdir: Path) -> Path | None:
    config = workdir / "config"
    generated = subprocess.run(
        _setpoint("generate", session_target, "-o", str(config)),
        capture_output=True,
        text=True,
        cwd=root,
    )
    sample_dir = config / "samples"
    if generated.returncode != 0 or not any(sample_dir.glob("*.yaml")):
        lines = generated.stderr.strip().splitlines()
        _say(f"no samples generated: {lines[-1] if lines else 'no output'}")
        return None
    return sample_dir


def _has_samples(directory: Path) -> bool:
    return any(path.name != "kustomization.yaml" for path in directory.glob("*.yaml"))


def _install(session: DevSession, kubeconfig: Path) -> bool:
    done = subprocess.run(
        _setpoint("install", session.target, "--kubeconfig", str(kubeconfig)),
        capture_output=True,
        text=True,
        cwd=session.root,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        _say(click.style("CRDs not installed: ", fg="red") + (lines[-1] if lines else "failed"))
        return False
    _say("CRDs installed")
    return True


def _apply_samples(samples: Path, kubeconfig: Path) -> None:
    if (samples / "kustomization.yaml").is_file():
        source = ["-k", str(samples)]
    else:
        source = ["-f", str(samples)]
    applied = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), "apply", "-n", "default", *source],
        capture_output=True,
        text=True,
    )
    _say(f"samples applied from {samples}" if applied.returncode == 0 else
         f"samples not applied: {applied.stderr.strip()}")  # fmt: skip


class _Terminated(KeyboardInterrupt):
    """SIGTERM: this process alone was asked to stop (its children were not)."""


def _interrupt(signum: int, frame: object) -> None:
    # SIGTERM (a terminal closing, a supervisor, `kill`) stops like Ctrl-C, so the cluster and
    # the operator started here stop too instead of outliving this process.
    raise _Terminated


def _await_exit(processes: list[subprocess.Popen[bytes] | None], seconds: float) -> None:
    """Ctrl-C in a terminal reaches the whole process group: the children stop on their own,
    gracefully; a SIGTERM from here on top would make them exit at once (a second signal)."""
    deadline = time.monotonic() + seconds
    for process in processes:
        if process is None:
            continue
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return


class _Changes:
    """What a batch of file changes means: a reload (Python source) and/or new samples."""

    def __init__(self, session: DevSession) -> None:
        self.session = session

    def relevant(self, change: object, path: str) -> bool:
        file = Path(path)
        if self.session.samples is not None and file.parent == self.session.samples:
            return file.suffix in (".yaml", ".yml")
        if "__pycache__" in file.parts or any(part.startswith(".") for part in file.parts):
            return False
        if self.session.ansible:
            return self._ansible_source(file)
        return file.suffix == ".py"

    def _ansible_source(self, file: Path) -> bool:
        """watches.yaml, roles, playbooks (any file: templates, files) and the CRDs."""
        try:
            parts = file.relative_to(self.session.watched).parts
        except ValueError:
            return False
        if parts[:1] == ("config",):
            return parts[:2] == ("config", "crd")
        return parts[:1] in (("roles",), ("playbooks",)) or file.suffix in (".yaml", ".yml")

    def reloads(self, paths: set[str]) -> bool:
        """Whether the changes need the operator restarted (and the CRDs installed again)."""
        if self.session.ansible:
            samples = self.session.samples
            return any(samples is None or Path(path).parent != samples for path in paths)
        return any(path.endswith(".py") for path in paths)

    def samples_changed(self, paths: set[str]) -> bool:
        samples = self.session.samples
        return samples is not None and any(Path(path).parent == samples for path in paths)


def _watch(session: DevSession) -> Iterator[set[str]]:
    """Batches of changed paths; an empty batch every POLL_MILLISECONDS without changes."""
    import watchfiles

    directories = {session.watched}
    if session.samples is not None and not session.samples.is_relative_to(session.watched):
        directories.add(session.samples)
    changes = _Changes(session)
    for batch in watchfiles.watch(
        *directories,
        watch_filter=changes.relevant,
        rust_timeout=POLL_MILLISECONDS,
        yield_on_timeout=True,
    ):
        yield {path for _, path in batch}


def _session(
    target: str | None, samples: bool | None, watch_dir: str | None, workdir: Path
) -> DevSession:
    ansible_root = _ansible_target(target) if target is not None else None
    if target is None:
        found = find_project(Path.cwd())
        ansible_root = find_ansible_project(Path.cwd()) if found is None else None
        if found is None and ansible_root is None:
            raise click.UsageError(
                "no TARGET and no project here: run it in a project made by `setpoint init` "
                "(or a directory below) or an Ansible operator's (watches.yaml), or give TARGET "
                "(a module, a .py file or a watches.yaml)"
            )
        root, target = found if found is not None else (Path.cwd(), str(ansible_root))
    else:
        location = Path(target.split(":", 1)[0])
        found_root = _project_root_of(location.resolve()) if location.exists() else None
        root = found_root or _project_root_of(Path.cwd()) or Path.cwd()
    if ansible_root is not None:  # commands run in the project: the TARGET path is absolute
        root, target = ansible_root, str(Path(target).resolve())
        watched = Path(watch_dir).resolve() if watch_dir else ansible_root
    else:
        watched = Path(watch_dir).resolve() if watch_dir else _watched_directory_in(target, root)
    project_samples = root / "config" / "samples"
    in_project = project_settings(root) is not None or (
        ansible_root is not None and project_samples.is_dir()
    )
    if samples is None:
        samples = in_project
    sample_dir: Path | None = None
    if samples:
        if project_samples.is_dir() and _has_samples(project_samples):
            sample_dir = project_samples.resolve()
        else:
            sample_dir = _generated_samples(target, root, workdir)
    return DevSession(
        target=target,
        root=root.resolve(),
        watched=watched,
        samples=sample_dir,
        ansible=ansible_root is not None,
    )


def _watched_directory_in(target: str, root: Path) -> Path:
    if project_settings(root) is not None:
        return root.resolve()
    return _watched_directory(target)


@click.command(name="dev")
@click.argument("target", required=False)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, exists=True),
    help="Use this cluster instead of starting a local one.",
)
@click.option(
    "--samples/--no-samples",
    default=None,
    help="Apply the samples (namespace default) at the start and whenever a sample file "
    "changes. Default: on in a project made by `setpoint init` (its config/samples).",
)
@click.option(
    "--watch",
    "watch_dir",
    type=click.Path(file_okay=False, exists=True),
    help="Directory to watch (default: the project's, or the TARGET file's, or the current one).",
)
@click.option("--once", is_flag=True, help="Start everything, then stop at the first change.")
@click.option(
    "--console/--no-console",
    "console",
    default=True,
    show_default=True,
    help="Start the web console (setpoint console) on the cluster and the operator, and print "
    "its URL; the operator's metrics then listen on a fixed free port of 127.0.0.1.",
)
def dev_command(
    target: str | None,
    kubeconfig: str | None,
    samples: bool | None,
    watch_dir: str | None,
    once: bool,
    console: bool,
) -> None:
    """Local cluster + the operator's CRDs + samples + the operator, restarted on every source
    change. Without TARGET: the operator of the project the current directory is in.

    \b
    Example:
      setpoint dev                           # in a project made by `setpoint init`
      setpoint dev myop/operator.py --samples
      # in another terminal: export KUBECONFIG=... (printed below); kubectl get all
    """
    workdir = Path(tempfile.mkdtemp(prefix="setpoint-dev-"))
    cluster: subprocess.Popen[bytes] | None = None
    operator: subprocess.Popen[bytes] | None = None
    console_process: subprocess.Popen[bytes] | None = None
    # The console follows the operator across reloads: its metrics keep one address.
    metrics_address = f"127.0.0.1:{_free_port()}" if console else None
    previous = signal.signal(signal.SIGTERM, _interrupt), signal.getsignal(signal.SIGINT)
    # A shell starts background jobs with SIGINT ignored, and Python then keeps ignoring it:
    # Ctrl-C to the process group would stop the children and leave this process waiting.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        session = _session(target, samples, watch_dir, workdir)
        if kubeconfig is None:
            _say("starting a local cluster ...")
            cluster, config_path = start_local_cluster(workdir)
        else:
            config_path = Path(kubeconfig)
        _say(f"cluster ready; in another terminal: export KUBECONFIG={config_path}")
        if metrics_address is not None:
            console_process = start_console(workdir, config_path, [f"http://{metrics_address}"])
            try:
                _say(f"console: {console_url(console_process, workdir)}")
            except click.ClickException as failed:  # the session is still useful without it
                _say(click.style(failed.message, fg="yellow"))
        samples_due = session.samples is not None
        reload = True
        changes = _watch(session)
        while True:
            if reload:
                _stop(operator)
                operator = None
                if _install(session, config_path):
                    if samples_due and session.samples is not None:
                        _apply_samples(session.samples, config_path)
                        samples_due = False
                    # --webhooks-local: the operator's webhooks (if any) are registered against
                    # the dev cluster with a fresh certificate, removed when it stops or reloads.
                    operator = subprocess.Popen(
                        _operator_command(
                            metrics_address,
                            "run",
                            session.target,
                            "--kubeconfig",
                            str(config_path),
                            "--webhooks-local",
                            # The reconcile trace is on under dev (for the console).
                            "--trace",
                        ),
                        cwd=session.root,
                    )
                    _say(f"operator running (pid {operator.pid}); watching {session.watched} "
                         "for changes")  # fmt: skip
                else:
                    _say(f"waiting for a change under {session.watched} to try again")
                reload = False
            elif samples_due and session.samples is not None:
                _apply_samples(session.samples, config_path)
                samples_due = False
            paths = next(changes)
            if operator is not None and operator.poll() not in (None, 0):
                _say(f"the operator exited with code {operator.returncode}; waiting for a "
                     f"change under {session.watched} to start it again")  # fmt: skip
                operator = None
            if not paths:
                continue
            names = sorted({Path(path).name for path in paths})
            if _Changes(session).samples_changed(paths):
                samples_due = True
            if _Changes(session).reloads(paths):
                _say(f"changed: {', '.join(names)}; reloading")
                reload = True
                if once:
                    return
            else:
                _say(f"changed: {', '.join(names)}")
    except KeyboardInterrupt as interrupt:
        _say("stopping")
        if not isinstance(interrupt, _Terminated):
            _await_exit([operator, console_process, cluster], GROUP_INTERRUPT_GRACE)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _stop(operator)
        _stop(console_process)
        _stop(cluster)
        shutil.rmtree(workdir, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
