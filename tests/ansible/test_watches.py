"""watches.yaml parsing: Operator SDK's fields and defaults; one-line errors naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from setpoint.ansible.watches import (
    GroupVersionKind,
    WatchesError,
    load_watches,
    parse_go_duration,
    parse_watches,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "roles" / "memcached" / "tasks").mkdir(parents=True)
    (tmp_path / "roles" / "memfin" / "tasks").mkdir(parents=True)
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "memcached.yml").write_text("- hosts: localhost\n")
    return tmp_path


def test_defaults_are_operator_sdks(project: Path) -> None:
    (project / "watches.yaml").write_text(
        "- version: v1alpha1\n  group: cache.example.com\n  kind: Memcached\n  role: memcached\n"
    )
    [watch] = load_watches(project)  # a directory means its watches.yaml
    assert watch.gvk == GroupVersionKind("cache.example.com", "v1alpha1", "Memcached")
    assert watch.role == str(project / "roles" / "memcached")
    assert watch.playbook is None
    assert watch.manage_status is True
    assert watch.watch_dependent_resources is True
    assert watch.watch_cluster_scoped_resources is False
    assert watch.snake_case_parameters is True
    assert watch.reconcile_period == 0
    assert watch.max_runner_artifacts == 20
    assert watch.ansible_verbosity == 2
    assert watch.finalizer is None
    assert watch.name == "memcached.cache.example.com"


def test_every_field(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIZE_VAR", "size")
    monkeypatch.setenv("MAX_CONCURRENT_RECONCILES_MEMCACHED_CACHE_EXAMPLE_COM", "4")
    text = """
- version: v1alpha1
  group: cache.example.com
  kind: Memcached
  playbook: playbooks/memcached.yml
  vars: {${SIZE_VAR}: 3}
  reconcilePeriod: 1m30s
  manageStatus: false
  watchDependentResources: false
  watchClusterScopedResources: true
  snakeCaseParameters: false
  watchAnnotationsChanges: true
  markUnsafe: true
  maxRunnerArtifacts: 5
  selector: {matchLabels: {tier: cache}}
  blacklist: [{group: "", version: v1, kind: ConfigMap}]
  finalizer: {name: cache.example.com/finalizer, role: memfin, vars: {state: absent}}
"""
    [watch] = parse_watches(text, root=project)
    assert watch.playbook == str(project / "playbooks" / "memcached.yml")
    assert watch.vars == {"size": 3}
    assert watch.reconcile_period == 90
    assert (watch.manage_status, watch.watch_dependent_resources) == (False, False)
    assert watch.watch_cluster_scoped_resources is True
    assert watch.snake_case_parameters is False
    assert watch.watch_annotations_changes is True
    assert watch.mark_unsafe is True
    assert watch.max_runner_artifacts == 5
    assert watch.selector == {"matchLabels": {"tier": "cache"}}
    assert watch.blacklist == (GroupVersionKind("", "v1", "ConfigMap"),)
    assert watch.finalizer is not None
    assert watch.finalizer.role == str(project / "roles" / "memfin")
    assert watch.finalizer.vars == {"state": "absent"}
    assert watch.max_concurrent_reconciles == 4


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("kind: Memcached\n  role: memcached", "entry 1: version: required"),
        ("version: v1\n  role: memcached", "entry 1: kind: required"),
        ("version: v1\n  kind: M", "(v1, Kind=M): role or playbook: one of them is required"),
        ("version: v1\n  kind: M\n  role: nope", "(v1, Kind=M): role: nope was not found"),
        (
            "version: v1\n  kind: M\n  playbook: missing.yml",
            "(v1, Kind=M): playbook: {root}/missing.yml was not found",
        ),
        (
            "version: v1\n  kind: M\n  role: memcached\n  reconcilePeriod: soon",
            "(v1, Kind=M): reconcilePeriod: 'soon' is not a duration (e.g. 30s, 1m, 1h30m)",
        ),
        (
            "version: v1\n  kind: M\n  role: memcached\n  manageStatus: 'yes'",
            "(v1, Kind=M): manageStatus: must be true or false, got 'yes'",
        ),
        (
            "version: v1\n  kind: M\n  role: memcached\n  reconcilePeriods: 1m",
            "(v1, Kind=M): reconcilePeriods: unknown field",
        ),
        (
            "version: v1\n  kind: M\n  role: memcached\n  snakecaseparameters: false",
            "snakecaseparameters: unknown field (did you mean 'snakeCaseParameters'?)",
        ),
        (
            "version: v1\n  kind: M\n  role: memcached\n  finalizer: {role: memfin}",
            "(v1, Kind=M): finalizer: name: required",
        ),
        (
            "version: v1\n  kind: M\n  role: memcached\n  finalizer: {name: x/y}",
            "finalizer: role, playbook or vars: one of them is required",
        ),
        (
            "version: v1\n  kind: M\n  role: memcached\n  maxConcurrentReconciles: 0",
            "maxConcurrentReconciles: must be >= 1, got 0",
        ),
        (
            "version: v1\n  kind: M\n  role: memcached\n  selector: {matchLabels: {a: 1}}",
            "selector.matchLabels[a]: Invalid value: must be a string",
        ),
    ],
)
def test_errors_name_the_entry_and_field(project: Path, entry: str, message: str) -> None:
    with pytest.raises(WatchesError) as error:
        parse_watches(f"- {entry}\n", root=project)
    text = str(error.value)
    assert "\n" not in text
    assert message.format(root=project) in text


def test_file_level_errors(project: Path) -> None:
    with pytest.raises(WatchesError, match=r"duplicate GVK: v1, Kind=M$"):
        parse_watches(
            "- {version: v1, kind: M, role: memcached}\n- {version: v1, kind: M, role: memfin}\n",
            root=project,
        )
    with pytest.raises(WatchesError, match="must be a list of watches"):
        parse_watches("version: v1\n", root=project)
    with pytest.raises(WatchesError, match=r"not valid YAML \(line 2\)"):
        parse_watches("- [unclosed\n", root=project)
    with pytest.raises(WatchesError, match="cannot read it"):
        load_watches(project / "missing.yaml")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0), ("30s", 30), ("1m", 60), ("1h30m", 5400), ("1.5h", 5400), ("500ms", 0.5)],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "1d", "m", "1m 2s"])
def test_bad_go_durations(text: str) -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        parse_go_duration(text)
