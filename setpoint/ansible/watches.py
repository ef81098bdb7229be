"""Reading Operator SDK's ``watches.yaml``: which kinds an Ansible operator reconciles, and how.

Each entry names a kind (``group``, ``version``, ``kind``) and the role or playbook a reconcile
of it runs, with Operator SDK's options and defaults (``manageStatus`` and
``watchDependentResources`` true, ``snakeCaseParameters`` true, ``reconcilePeriod`` 0 = none,
``maxRunnerArtifacts`` 20). ``${VAR}`` and ``$VAR`` are replaced by the environment, as
Operator SDK does; unset variables are left as they are.

Roles are found as Operator SDK finds them: an absolute path; a collection role
``namespace.collection.role`` under ``ANSIBLE_COLLECTIONS_PATH`` (default
``/usr/share/ansible/collections`` and ``~/.ansible/collections``); a directory of
``ANSIBLE_ROLES_PATH`` (``<dir>/<role>`` or ``<dir>/roles/<role>``); ``roles/<role>`` beside
the watches file. Relative playbook paths are relative to the watches file's directory (Operator
SDK: the working directory, which its image sets to the project's).

Every problem is a :class:`WatchesError` of one line naming the entry and the field.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from setpoint.api import go_durations
from setpoint.api.selector_error import SelectorError
from setpoint.api.selectors import LabelSelector

__all__ = [
    "DEFAULT_ANSIBLE_VERBOSITY",
    "DEFAULT_MAX_RUNNER_ARTIFACTS",
    "Finalizer",
    "GroupVersionKind",
    "Watch",
    "WatchesError",
    "load_watches",
    "parse_go_duration",
    "parse_watches",
]

#: Operator SDK's defaults.
DEFAULT_MAX_RUNNER_ARTIFACTS = 20
DEFAULT_ANSIBLE_VERBOSITY = 2

_FIELDS = {
    "group",
    "version",
    "kind",
    "role",
    "playbook",
    "vars",
    "maxRunnerArtifacts",
    "reconcilePeriod",
    "manageStatus",
    "watchDependentResources",
    "watchClusterScopedResources",
    "snakeCaseParameters",
    "watchAnnotationsChanges",
    "markUnsafe",
    "selector",
    "blacklist",
    "finalizer",
    "maxConcurrentReconciles",
}
_FINALIZER_FIELDS = {"name", "role", "playbook", "vars"}

_ENV_REFERENCE = re.compile(r"\$(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class WatchesError(ValueError):
    """watches.yaml is unreadable or one of its entries is invalid (one line, naming the field)."""


@dataclass(frozen=True)
class GroupVersionKind:
    """A kind as watches.yaml names it; ``group`` is ``""`` for the core group."""

    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        """``group/version``, or ``version`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


@dataclass(frozen=True)
class Finalizer:
    """``finalizer:``: its name and what runs when a CR carrying it is deleted.

    Without a role or playbook the watch's own role or playbook runs, with ``vars`` added.
    """

    name: str
    role: str | None = None
    playbook: str | None = None
    vars: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Watch:
    """One entry of watches.yaml, validated, with paths resolved."""

    gvk: GroupVersionKind
    role: str | None = None
    playbook: str | None = None
    vars: Mapping[str, Any] = field(default_factory=dict)
    max_runner_artifacts: int = DEFAULT_MAX_RUNNER_ARTIFACTS
    reconcile_period: float = 0.0
    manage_status: bool = True
    watch_dependent_resources: bool = True
    watch_cluster_scoped_resources: bool = False
    snake_case_parameters: bool = True
    watch_annotations_changes: bool = False
    mark_unsafe: bool = False
    selector: Mapping[str, Any] = field(default_factory=dict)
    blacklist: tuple[GroupVersionKind, ...] = ()
    finalizer: Finalizer | None = None
    max_concurrent_reconciles: int = 1
    ansible_verbosity: int = DEFAULT_ANSIBLE_VERBOSITY

    @property
    def name(self) -> str:
        """The controller's name: ``<kind>.<group>`` in lower case (unique per watches file)."""
        kind = self.gvk.kind.lower()
        return f"{kind}.{self.gvk.group}" if self.gvk.group else kind


def parse_go_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` (``30s``, ``1m``, ``1h30m``, ``500ms``), in seconds."""
    try:
        return go_durations.parse_go_duration(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a duration (e.g. 30s, 1m, 1h30m)") from None


def _expand_environment(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1) if match.group(1) is not None else match.group(2)
        value = os.environ.get(name)
        return match.group(0) if value is None else value

    return _ENV_REFERENCE.sub(replace, text)


def load_watches(path: str | os.PathLike[str]) -> list[Watch]:
    """Read and validate a watches.yaml file (or the ``watches.yaml`` of a directory)."""
    location = Path(path)
    if location.is_dir():
        location = location / "watches.yaml"
    try:
        text = location.read_text(encoding="utf-8")
    except OSError as error:
        raise WatchesError(f"{location}: cannot read it: {error.strerror or error}") from None
    return parse_watches(text, root=location.parent, source=str(location))


def parse_watches(text: str, *, root: Path, source: str = "watches.yaml") -> list[Watch]:
    """Validate the text of a watches file; relative paths are resolved against ``root``."""
    try:
        document = yaml.safe_load(_expand_environment(text))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise WatchesError(f"{source}: not valid YAML{where}: {problem}") from None
    if document is None:
        raise WatchesError(f"{source}: no watches: the file is empty")
    if not isinstance(document, list):
        raise WatchesError(
            f"{source}: must be a list of watches (- group: ..., version: ..., kind: ...), "
            f"got {type(document).__name__}"
        )
    watches: list[Watch] = []
    seen: set[GroupVersionKind] = set()
    for index, entry in enumerate(document):
        watch = _parse_entry(entry, index, root, source)
        if watch.gvk in seen:
            raise WatchesError(f"{source}: entry {index + 1}: duplicate GVK: {watch.gvk}")
        seen.add(watch.gvk)
        watches.append(watch)
    if not watches:
        raise WatchesError(f"{source}: no watches: the list is empty")
    return watches


class _Entry:
    """Typed reads of one entry's fields, each failure naming the field."""

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        self.data = data
        self.where = where

    def fail(self, name: str, problem: str) -> WatchesError:
        return WatchesError(f"{self.where}: {name}: {problem}")

    def string(self, name: str, *, required: bool = False) -> str | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise self.fail(name, "required")
            return None
        if not isinstance(value, str):
            raise self.fail(name, f"must be a string, got {_describe(value)}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(name, f"must be true or false, got {_describe(value)}")
        return value

    def integer(self, name: str, default: int, minimum: int) -> int:
        value = self.data.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(name, f"must be an integer, got {_describe(value)}")
        if value < minimum:
            raise self.fail(name, f"must be >= {minimum}, got {value}")
        return value

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.data.get(name)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(name, f"must be a mapping, got {_describe(value)}")
        return dict(value)


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _unknown_fields(data: Mapping[str, Any], known: set[str], where: str) -> None:
    for key in data:
        if key not in known:
            close = [name for name in sorted(known) if name.lower() == str(key).lower()]
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise WatchesError(f"{where}: {key}: unknown field{hint}")


def _parse_entry(entry: Any, index: int, root: Path, source: str) -> Watch:
    where = f"{source}: entry {index + 1}"
    if not isinstance(entry, Mapping):
        raise WatchesError(f"{where}: must be a mapping (group, version, kind, role ...)")
    fields = _Entry(entry, where)
    group = fields.string("group") or ""
    version = fields.string("version", required=True) or ""
    kind = fields.string("kind", required=True) or ""
    if not version:
        raise fields.fail("version", "must not be empty")
    if not kind:
        raise fields.fail("kind", "must not be empty")
    gvk = GroupVersionKind(group, version, kind)
    where = f"{source}: entry {index + 1} ({gvk})"
    fields.where = where
    _unknown_fields(entry, _FIELDS, where)

    playbook = fields.string("playbook")
    role = fields.string("role")
    playbook, role = _resolve_target(fields, playbook, role, root, "playbook", "role")
    if playbook is None and role is None:
        raise WatchesError(f"{where}: role or playbook: one of them is required")

    period_text = entry.get("reconcilePeriod")
    period = 0.0
    if period_text is not None:
        if not isinstance(period_text, str):
            raise fields.fail(
                "reconcilePeriod", f"must be a duration string such as 30s, got {period_text!r}"
            )
        try:
            period = parse_go_duration(period_text)
        except ValueError as error:
            raise fields.fail("reconcilePeriod", str(error)) from None

    selector = fields.mapping("selector")
    try:
        LabelSelector.from_dict(selector, path="selector")
    except SelectorError as error:
        raise WatchesError(f"{where}: {error}") from None

    blacklist_value = entry.get("blacklist") or []
    if not isinstance(blacklist_value, Sequence) or isinstance(blacklist_value, str):
        raise fields.fail("blacklist", "must be a list of {group, version, kind}")
    blacklist: list[GroupVersionKind] = []
    for position, item in enumerate(blacklist_value):
        item_where = f"{where}: blacklist[{position}]"
        if not isinstance(item, Mapping):
            raise WatchesError(f"{item_where}: must be a mapping of group, version, kind")
        item_fields = _Entry(item, item_where)
        _unknown_fields(item, {"group", "version", "kind"}, item_where)
        blacklist.append(
            GroupVersionKind(
                item_fields.string("group") or "",
                item_fields.string("version", required=True) or "",
                item_fields.string("kind", required=True) or "",
            )
        )

    finalizer = _parse_finalizer(entry.get("finalizer"), where, root)
    return Watch(
        gvk=gvk,
        role=role,
        playbook=playbook,
        vars=fields.mapping("vars"),
        max_runner_artifacts=fields.integer("maxRunnerArtifacts", DEFAULT_MAX_RUNNER_ARTIFACTS, 0)
        or DEFAULT_MAX_RUNNER_ARTIFACTS,
        reconcile_period=period,
        manage_status=fields.boolean("manageStatus", True),
        watch_dependent_resources=fields.boolean("watchDependentResources", True),
        watch_cluster_scoped_resources=fields.boolean("watchClusterScopedResources", False),
        snake_case_parameters=fields.boolean("snakeCaseParameters", True),
        watch_annotations_changes=fields.boolean("watchAnnotationsChanges", False),
        mark_unsafe=fields.boolean("markUnsafe", False),
        selector=selector,
        blacklist=tuple(blacklist),
        finalizer=finalizer,
        max_concurrent_reconciles=fields.integer(
            "maxConcurrentReconciles", _max_concurrent_from_environment(gvk, where), 1
        ),
        ansible_verbosity=_verbosity_from_environment(gvk, where),
    )


def _parse_finalizer(value: Any, where: str, root: Path) -> Finalizer | None:
    if value is None:
        return None
    finalizer_where = f"{where}: finalizer"
    if not isinstance(value, Mapping):
        raise WatchesError(f"{finalizer_where}: must be a mapping (name, role or playbook, vars)")
    _unknown_fields(value, _FINALIZER_FIELDS, finalizer_where)
    fields = _Entry(value, finalizer_where)
    name = fields.string("name")
    if not name:
        raise fields.fail("name", "required (the finalizer's name, e.g. example.com/cleanup)")
    variables = fields.mapping("vars")
    playbook, role = _resolve_target(
        fields, fields.string("playbook"), fields.string("role"), root, "playbook", "role"
    )
    if playbook is None and role is None and not variables:
        raise WatchesError(f"{finalizer_where}: role, playbook or vars: one of them is required")
    return Finalizer(name=name, role=role, playbook=playbook, vars=variables)


def _resolve_target(
    fields: _Entry,
    playbook: str | None,
    role: str | None,
    root: Path,
    playbook_field: str,
    role_field: str,
) -> tuple[str | None, str | None]:
    """Absolute paths of the playbook and role; a playbook wins over a role, as in Operator
    SDK."""
    if playbook:
        path = Path(playbook) if Path(playbook).is_absolute() else root / playbook
        if not path.is_file():
            raise fields.fail(playbook_field, f"{path} was not found")
        return str(path), None
    if role:
        candidates = _role_candidates(role, root)
        for candidate in candidates:
            if candidate.is_dir():
                return None, str(candidate)
        raise fields.fail(
            role_field, f"{role} was not found (looked in {', '.join(map(str, candidates))})"
        )
    return None, None


def _role_candidates(role: str, root: Path) -> list[Path]:
    if Path(role).is_absolute():
        return [Path(role)]
    candidates: list[Path] = []
    parts = role.split(".")
    if len(parts) == 3:
        collections = os.environ.get("ANSIBLE_COLLECTIONS_PATH") or os.pathsep.join(
            ["/usr/share/ansible/collections", str(Path.home() / ".ansible" / "collections")]
        )
        for directory in collections.split(os.pathsep):
            if directory:
                candidates.append(
                    Path(directory)
                    / "ansible_collections"
                    / parts[0]
                    / parts[1]
                    / "roles"
                    / parts[2]
                )
    for directory in (os.environ.get("ANSIBLE_ROLES_PATH") or "").split(os.pathsep):
        if directory:
            candidates.append(Path(directory) / role)
            candidates.append(Path(directory) / "roles" / role)
    candidates.append(root / "roles" / role)
    return candidates


def _environment_key(prefix: str, gvk: GroupVersionKind) -> str:
    return f"{prefix}_{gvk.kind}_{gvk.group}".replace(".", "_").upper()


def _environment_integer(name: str, where: str) -> int | None:
    text = os.environ.get(name)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise WatchesError(
            f"{where}: environment variable {name}: not an integer: {text!r}"
        ) from None


def _max_concurrent_from_environment(gvk: GroupVersionKind, where: str) -> int:
    """Operator SDK's ``MAX_CONCURRENT_RECONCILES_<KIND>_<GROUP>`` (or the older
    ``WORKER_<KIND>_<GROUP>``); its default is the number of CPUs."""
    for prefix in ("MAX_CONCURRENT_RECONCILES", "WORKER"):
        name = _environment_key(prefix, gvk)
        value = _environment_integer(name, where)
        if value is not None:
            if value < 1:
                raise WatchesError(f"{where}: environment variable {name}: must be >= 1")
            return value
    return os.cpu_count() or 1


def _verbosity_from_environment(gvk: GroupVersionKind, where: str) -> int:
    name = _environment_key("ANSIBLE_VERBOSITY", gvk)
    value = _environment_integer(name, where)
    if value is None:
        return DEFAULT_ANSIBLE_VERBOSITY
    if not 0 <= value <= 7:
        raise WatchesError(f"{where}: environment variable {name}: must be between 0 and 7")
    return value
