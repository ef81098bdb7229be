"""Pod annotations that steer the simulated kubelet: exit codes, run time, readiness, pull errors.

Without writing a kwok ``Stage`` (:mod:`.stages`), a pod (or a pod template) says how its
simulated containers behave:

``simulate.setpoint.dev/exit-code: "3"``
    The containers end by themselves with this code (after ``run-for``, default the cluster's
    simulated run time, 1 s). With restartPolicy Always (or OnFailure and a non-zero code)
    the kubelet restarts them with its back-off: a crash loop, shown as ``CrashLoopBackOff``
    with ``restartCount`` growing as the cluster clock moves.
``simulate.setpoint.dev/run-for: "2m"``
    The containers end by themselves this long after they start (Go duration), exit 0 unless
    ``exit-code`` says otherwise, whatever their command.
``simulate.setpoint.dev/ready-after: "30s"``
    The containers become ready this long after they start (instead of the readinessProbe's
    ``initialDelaySeconds``).
``simulate.setpoint.dev/image-pull-error: "..."``
    Pulling the image fails with this message (empty: the runtime's "not found"); the container
    never starts and shows ``ErrImagePull``, then ``ImagePullBackOff`` between retries.
``simulate.setpoint.dev/containers: "app,sidecar"``
    Apply the above to these containers only (default: every container; init containers are
    never affected).

A value that cannot be read is ignored with a Warning Event (reason ``InvalidSimulation``)
naming the annotation and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from setpoint.api.go_durations import parse_go_duration

PREFIX: Final = "simulate.setpoint.dev/"
EXIT_CODE: Final = PREFIX + "exit-code"
RUN_FOR: Final = PREFIX + "run-for"
READY_AFTER: Final = PREFIX + "ready-after"
IMAGE_PULL_ERROR: Final = PREFIX + "image-pull-error"
CONTAINERS: Final = PREFIX + "containers"


@dataclass(frozen=True, slots=True)
class ContainerBehaviour:
    """How one simulated container behaves (None: as without annotations)."""

    exit_code: int | None = None
    run_seconds: float | None = None
    ready_after: float | None = None
    pull_error: str | None = None


@dataclass(slots=True)
class SimulationAnnotations:
    """The behaviour a pod's annotations ask for, and the annotations that were refused."""

    behaviour: ContainerBehaviour = field(default_factory=ContainerBehaviour)
    containers: frozenset[str] | None = None
    #: One line per ignored annotation: ``<annotation>: <why>``.
    errors: list[str] = field(default_factory=list)

    def for_container(self, name: str) -> ContainerBehaviour:
        """The behaviour of container ``name``."""
        if self.containers is not None and name not in self.containers:
            return ContainerBehaviour()
        return self.behaviour


def pull_error_message(image: str) -> str:
    """What containerd answers for an image that does not exist."""
    reference = _full_reference(image)
    return (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{reference}": '
        f'failed to resolve reference "{reference}": {reference}: not found'
    )


def _full_reference(image: str) -> str:
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and not digest:
        name += ":latest"
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    return f"{name}@{digest}" if digest else name


def _duration(annotations: Mapping[str, Any], key: str, errors: list[str]) -> float | None:
    text = annotations.get(key)
    if text is None:
        return None
    try:
        seconds = parse_go_duration(str(text))
    except ValueError as error:
        errors.append(f"{key}: {error}")
        return None
    if seconds < 0:
        errors.append(f"{key}: {text!r} is negative")
        return None
    return seconds


def read_simulation_annotations(pod: Mapping[str, Any]) -> SimulationAnnotations:
    """The simulated behaviour ``pod``'s annotations ask for."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    found = SimulationAnnotations()
    if not any(str(key).startswith(PREFIX) for key in annotations):
        return found
    errors = found.errors
    exit_code: int | None = None
    if EXIT_CODE in annotations:
        text = str(annotations[EXIT_CODE]).strip()
        if text.lstrip("-").isdigit() and 0 <= int(text) <= 255:
            exit_code = int(text)
        else:
            errors.append(f"{EXIT_CODE}: {text!r} is not an exit code (0-255)")
    pull_error: str | None = None
    if IMAGE_PULL_ERROR in annotations:
        pull_error = str(annotations[IMAGE_PULL_ERROR])
    found.behaviour = ContainerBehaviour(
        exit_code=exit_code,
        run_seconds=_duration(annotations, RUN_FOR, errors),
        ready_after=_duration(annotations, READY_AFTER, errors),
        pull_error=pull_error,
    )
    if CONTAINERS in annotations:
        names = {n.strip() for n in str(annotations[CONTAINERS]).split(",") if n.strip()}
        found.containers = frozenset(names)
    for key in annotations:
        if str(key).startswith(PREFIX) and key not in (
            EXIT_CODE,
            RUN_FOR,
            READY_AFTER,
            IMAGE_PULL_ERROR,
            CONTAINERS,
        ):
            errors.append(
                f"{key}: unknown simulation annotation (known: exit-code, run-for, "
                "ready-after, image-pull-error, containers)"
            )
    return found
