"""The demo's view of a snapshot and its rules for "converged" (no cluster needed)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from setpoint.cli.demo.observation import observe
from setpoint.cli.demo.snapshot import Snapshot
from setpoint.cli.demo.view import explore_commands, progress_lines, render


def obj(kind: str, name: str, spec: dict | None = None, status: dict | None = None) -> dict:
    return {"kind": kind, "metadata": {"name": name}, "spec": spec or {}, "status": status or {}}


def test_each_kind_converges_on_its_own_terms() -> None:
    assert observe(obj("At", "a", status={"phase": "DONE"})).converged
    assert not observe(obj("At", "a", status={"phase": "RUNNING"})).converged
    assert observe(obj("At", "a")).state == "PENDING"
    assert observe(obj("Foo", "f", {"replicas": 2}, {"availableReplicas": 2})).converged
    assert observe(obj("Foo", "f", {}, {"availableReplicas": 1})).converged  # replicas default 1
    assert not observe(obj("PodSet", "p", {"replicas": 3}, {"availableReplicas": 2})).converged
    ready = {"conditions": [{"type": "Available", "status": "True", "reason": "Scaled"}]}
    assert observe(obj("TDSet", "t", status=ready)).converged
    assert observe(obj("TDSet", "t", status=ready)).state == "Available: Scaled"
    waiting = {"conditions": [{"type": "Ready", "status": "False", "reason": "Rolling"}]}
    assert not observe(obj("MemcachedProxy", "m", status=waiting)).converged
    assert observe(obj("Thing", "x")).state == "waiting"


def test_progress_lines_only_for_changes() -> None:
    first = Snapshot([observe(obj("At", "a", status={"phase": "RUNNING"}))])
    lines, states = progress_lines({}, first, 1.0)
    assert lines == ["   1.0s   At/a: RUNNING"]
    assert progress_lines(states, first, 2.0)[0] == []
    done = Snapshot([observe(obj("At", "a", status={"phase": "DONE"}))])
    assert progress_lines(states, done, 3.0)[0] == ["   3.0s ✓ At/a: DONE"]


def test_the_live_view_shows_samples_children_events_and_reconciles() -> None:
    snapshot = Snapshot(
        [observe(obj("Foo", "foo-sample", {"replicas": 1}, {"availableReplicas": 1}))],
        deployments=[("example-foo", "1/1")],
        pods={"Running": 1},
        events=[("Warning", "ErrResourceExists", "Foo/foo-sample", "already exists")],
        reconciles={"foo": 4},
    )
    console = Console(record=True, width=120)
    console.print(render(snapshot, 12.0, footer="export KUBECONFIG=/k"))
    text = console.export_text()
    for expected in (
        "Foo/foo-sample",
        "1/1 available",
        "example-foo",
        "pods: 1 Running",
        "ErrResourceExists",
        "reconciles per controller: foo 4",
        "export KUBECONFIG=/k",
    ):
        assert expected in text


def test_explore_commands_follow_the_samples() -> None:
    snapshot = Snapshot([observe(obj("At", "at-sample")), observe(obj("Foo", "foo-sample"))])
    commands = explore_commands(Path("/tmp/k"), snapshot, ["ats", "foos"])
    assert commands.splitlines()[:3] == [
        "export KUBECONFIG=/tmp/k",
        "kubectl get ats,foos",
        "kubectl logs at-sample-pod        # the At's command ran for real",
    ]
    assert "kubectl patch foo foo-sample" in commands
