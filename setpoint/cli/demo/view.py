"""Drawing a :class:`~setpoint.cli.demo.snapshot.Snapshot`: a rich live view for a terminal,
one line per change otherwise, and the commands to explore further."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from setpoint.cli.demo.observation import Observation
from setpoint.cli.demo.snapshot import Snapshot

__all__ = ["explore_commands", "progress_lines", "render"]


def _mark(observation: Observation) -> Text:
    return Text("✓", style="green") if observation.converged else Text("…", style="yellow")


def render(snapshot: Snapshot, elapsed: float, footer: str | None = None) -> RenderableType:
    """The live view: samples, their Deployments and Pods, the latest Events, reconciles."""
    samples = Table(title=f"the seed operators' samples — {elapsed:.0f} s", title_justify="left")
    samples.add_column("")
    samples.add_column("resource")
    samples.add_column("state")
    for observation in snapshot.observations:
        samples.add_row(_mark(observation), observation.label, observation.state)

    children = Table(title="children", title_justify="left")
    children.add_column("deployment")
    children.add_column("available")
    for name, available in snapshot.deployments:
        children.add_row(name, available)
    pods = ", ".join(f"{count} {phase}" for phase, count in snapshot.pods.items()) or "none"

    events = Table(title="latest events", title_justify="left")
    for column in ("type", "reason", "object", "message"):
        events.add_column(column)
    for event_type, reason, regarding, message in snapshot.events:
        style = "red" if event_type == "Warning" else ""
        events.add_row(Text(event_type, style=style), reason, regarding, message)

    reconciles = ", ".join(f"{name} {count}" for name, count in snapshot.reconciles.items())
    return Group(
        samples,
        children,
        Text(f"pods: {pods}"),
        events,
        Text(f"reconciles per controller: {reconciles or 'none yet'}"),
        Text(footer or ""),
    )


def progress_lines(
    previous: dict[str, str], snapshot: Snapshot, elapsed: float
) -> tuple[list[str], dict[str, str]]:
    """The lines to print for the samples whose state changed since ``previous``."""
    lines: list[str] = []
    current: dict[str, str] = {}
    for observation in snapshot.observations:
        current[observation.label] = observation.state
        if previous.get(observation.label) != observation.state:
            mark = "✓" if observation.converged else " "
            lines.append(f"{elapsed:6.1f}s {mark} {observation.label}: {observation.state}")
    return lines, current


def explore_commands(kubeconfig: Path, snapshot: Snapshot, plurals: list[str]) -> str:
    """What to try next, against the demo's cluster."""
    kinds = {observation.kind: observation.name for observation in snapshot.observations}
    lines = [f"export KUBECONFIG={kubeconfig}"]
    if plurals:
        lines.append(f"kubectl get {','.join(plurals)}")
    if "At" in kinds:
        lines.append(f"kubectl logs {kinds['At']}-pod        # the At's command ran for real")
    lines.append("kubectl get deploy,rs,pods")
    lines.append("kubectl get events --sort-by=.lastTimestamp")
    if "Foo" in kinds:
        foo = kinds["Foo"]
        lines.append(
            f'kubectl patch foo {foo} --type merge -p \'{{"spec":{{"replicas":3}}}}\''
            "   # then: kubectl get deploy -w"
        )
    return "\n".join(lines)
