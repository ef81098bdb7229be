"""One Ansible run of a role or playbook for one CR, through ``ansible-runner``'s Python API.

``ansible_runner.run`` prepares a private data directory (extra vars, environment, inventory)
and starts ``ansible-playbook`` as a child process; its events (task started, ok, failed, the
final stats) come back to this process through a callback, in a worker thread so that the
operator's event loop never waits on Ansible. That is what Operator SDK does with its
``ansible-runner`` command and an HTTP event receiver, minus one process and the HTTP hop per
run (measured in ``bench/ansible_operator.py``).

The run's directory is ``<artifacts root>/<group>/<version>/<kind>/<namespace>/<name>``;
``artifacts/<ident>/`` keeps the last ``maxRunnerArtifacts`` runs' output and events, as
Operator SDK keeps them under ``/tmp/ansible-operator/runner``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from setpoint.ansible.status import AnsibleResult
from setpoint.ansible.watches import parse_go_duration

__all__ = [
    "FailedTask",
    "RunOutcome",
    "RunSpec",
    "ansible_collections_path",
    "default_artifacts_root",
    "mapping_of",
    "run_ansible",
]

log = logging.getLogger("setpoint.ansible.runner")

#: The message Operator SDK reports for a failed task that gave none.
UNKNOWN_FAILURE = "unknown playbook failure"
_REQUEUE_ACTIONS = ("operator_sdk.util.requeue_after", "requeue_after")
_BUNDLED_COLLECTIONS = Path(__file__).parent / "collections"


@dataclass(frozen=True)
class FailedTask:
    """A task that failed (and was neither ignored nor rescued)."""

    name: str
    message: str


@dataclass
class RunOutcome:
    """What one run did: its stats, the tasks that failed, a requeue it asked for."""

    result: AnsibleResult | None = None
    failures: list[FailedTask] = field(default_factory=list)
    requeue_after: float | None = None
    status: str = ""
    seconds: float = 0.0
    stdout_path: Path | None = None

    @property
    def succeeded(self) -> bool:
        """True when the run finished with stats and no task failed."""
        return self.result is not None and not self.failures

    def failure_message(self) -> str:
        """The failed tasks' messages, one per line (Operator SDK's ``Failure`` message)."""
        return "\n".join(failure.message for failure in self.failures)


@dataclass(frozen=True)
class RunSpec:
    """What to run: a playbook path, or a role directory."""

    playbook: str | None = None
    role: str | None = None


def default_artifacts_root() -> Path:
    """Where run directories go: ``$SETPOINT_ANSIBLE_ARTIFACTS`` or a ``setpoint-ansible``
    directory in the system's temporary directory."""
    configured = os.environ.get("SETPOINT_ANSIBLE_ARTIFACTS")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "setpoint-ansible"


def ansible_collections_path() -> str:
    """``ANSIBLE_COLLECTIONS_PATH`` for runs: setpoint's ``operator_sdk.util`` first, then what
    the environment says (or Ansible's defaults). Collections installed in the Python
    environment (``kubernetes.core``) are found on ``sys.path`` as usual."""
    configured = os.environ.get("ANSIBLE_COLLECTIONS_PATH") or os.pathsep.join(
        [str(Path.home() / ".ansible" / "collections"), "/usr/share/ansible/collections"]
    )
    return os.pathsep.join([str(_BUNDLED_COLLECTIONS), configured])


def _inventory() -> str:
    inventory = os.environ.get("ANSIBLE_INVENTORY")
    if inventory:
        return inventory
    # The operator's own interpreter: it has the kubernetes client kubernetes.core needs.
    return f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n"


class _EventCollector:
    """Turns the run's events into a :class:`RunOutcome` (called from the runner's thread)."""

    def __init__(self, on_event: Callable[[Mapping[str, Any]], None] | None) -> None:
        self.outcome = RunOutcome()
        self.on_event = on_event

    def __call__(self, event: Mapping[str, Any]) -> bool:
        kind = event.get("event")
        data = event.get("event_data") or {}
        if kind == "playbook_on_stats":
            self.outcome.result = AnsibleResult.from_stats(data, str(event.get("created") or ""))
        elif kind == "runner_on_failed" and not _ignored(data):
            result = mapping_of(data.get("res"))
            message = result.get("msg") if isinstance(result.get("msg"), str) else None
            self.outcome.failures.append(
                FailedTask(str(data.get("task") or ""), message or UNKNOWN_FAILURE)
            )
        elif kind == "runner_on_ok" and data.get("task_action") in _REQUEUE_ACTIONS:
            result = mapping_of(data.get("res"))
            period = result.get("period")
            if isinstance(period, str):
                try:
                    self.outcome.requeue_after = parse_go_duration(period)
                except ValueError:
                    log.error("requeue_after: %r is not a duration; ignored", period)
        if self.on_event is not None:
            self.on_event(event)
        return True  # keep it in the artifacts


def mapping_of(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one (event fields are loosely typed)."""
    return value if isinstance(value, Mapping) else {}


def _ignored(data: Mapping[str, Any]) -> bool:
    if data.get("ignore_errors") is True:
        return True
    rescued = data.get("rescued")
    return isinstance(rescued, Mapping) and any(value == 1 for value in rescued.values())


def _run_blocking(
    spec: RunSpec,
    directory: Path,
    ident: str,
    extravars: dict[str, Any],
    envvars: dict[str, str],
    verbosity: int,
    rotate_artifacts: int,
    collector: _EventCollector,
    cancelled: threading.Event,
) -> str:
    import ansible_runner  # the optional extra: imported only by a run

    directory.mkdir(parents=True, exist_ok=True)
    # ansible-runner prefers env/ files left by an earlier run to the arguments given now.
    shutil.rmtree(directory / "env", ignore_errors=True)

    options: dict[str, Any] = {
        "private_data_dir": str(directory),
        "ident": ident,
        "extravars": extravars,
        "envvars": envvars,
        "inventory": _inventory(),
        "event_handler": collector,
        "cancel_callback": cancelled.is_set,
        "quiet": True,
        "rotate_artifacts": rotate_artifacts,
        "verbosity": verbosity or None,
        "settings": {"suppress_ansible_output": True},
    }
    if spec.playbook is not None:
        options["playbook"] = spec.playbook
    else:
        role = Path(spec.role or "")
        options["role"] = role.name
        options["roles_path"] = str(role.parent)
        options["role_skip_facts"] = os.environ.get("ANSIBLE_GATHERING") == "explicit"
    runner = ansible_runner.run(**options)
    return str(runner.status)


async def run_ansible(
    spec: RunSpec,
    *,
    directory: Path,
    ident: str,
    extravars: dict[str, Any],
    kubeconfig: Path,
    verbosity: int = 0,
    rotate_artifacts: int = 20,
    on_event: Callable[[Mapping[str, Any]], None] | None = None,
    environment: Mapping[str, str] | None = None,
) -> RunOutcome:
    """Run the role or playbook in a worker thread; returns what it did.

    ``kubeconfig`` is given to the run as ``K8S_AUTH_KUBECONFIG`` and ``KUBECONFIG``, which the
    ``kubernetes.core`` modules read; ``environment`` adds variables. A cancelled call stops
    the run (``ansible-runner`` terminates ``ansible-playbook``) before raising.
    """
    binaries = str(Path(sys.executable).parent)
    envvars = {
        "K8S_AUTH_KUBECONFIG": str(kubeconfig),
        "KUBECONFIG": str(kubeconfig),
        "ANSIBLE_COLLECTIONS_PATH": ansible_collections_path(),
        # ansible-playbook of the operator's environment, even when it is not activated.
        "PATH": os.pathsep.join([binaries, os.environ.get("PATH", "")]),
        **(environment or {}),
    }
    collector = _EventCollector(on_event)
    cancelled = threading.Event()
    started = time.monotonic()
    try:
        status = await asyncio.to_thread(
            _run_blocking,
            spec,
            directory,
            ident,
            extravars,
            envvars,
            verbosity,
            rotate_artifacts,
            collector,
            cancelled,
        )
    except asyncio.CancelledError:
        cancelled.set()
        raise
    outcome = collector.outcome
    outcome.status = status
    outcome.seconds = time.monotonic() - started
    outcome.stdout_path = directory / "artifacts" / ident / "stdout"
    return outcome
