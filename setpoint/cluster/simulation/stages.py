"""kwok ``Stage`` objects (``kwok.x-k8s.io/v1alpha1``) compiled into what the kubelet runs.

A Stage says: for objects of ``resourceRef`` that ``selector`` matches, after ``delay``, do
``next``. The fields and their meaning are kwok's (``pkg/apis/v1alpha1/stage_types.go``):

- ``selector``: ``matchLabels`` and ``matchAnnotations`` (equality), and ``matchExpressions``
  whose ``key`` (or ``jq.key``) is a jq expression evaluated over the object, compared with
  ``values`` by ``In``/``NotIn`` (any result equal to a value; strings, booleans and integers
  compare by their text) or tested by ``Exists``/``DoesNotExist`` (any non-null result). A
  Stage without a selector matches nothing; an empty one matches everything.
- ``weight``/``weightFrom``: when several Stages match, one is drawn with these weights.
- ``delay``: ``durationMilliseconds`` or ``durationFrom`` (a jq expression giving a Go duration
  or an RFC 3339 time, read as the time left until it), plus a uniformly drawn part up to
  ``jitterDurationMilliseconds``/``jitterDurationFrom`` (a jitter below the duration replaces
  it). Delays run on the cluster clock.
- ``next``: an ``event`` to record, ``finalizers`` to add, remove or empty, ``delete``, and a
  ``statusTemplate`` (:mod:`.go_template`) rendered over the object and merged into its status
  as a strategic merge patch.
- ``immediateNextStage``: accepted (the local kubelet always looks for the next stage at once).

Not supported, and refused when the Stage is written, each with a one-line error naming the
field: CEL expressions, ``next.patches``, ``steps``, ``statusSubresource``, ``statusPatchAs``,
template constructs and functions beyond those kwok's default stages use.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import jq

from setpoint.api import field_errors as fe
from setpoint.api.go_durations import parse_go_duration
from setpoint.cluster.simulation.go_template import GoTemplate, TemplateError

__all__ = [
    "GROUP",
    "KIND",
    "STAGE_TEMPLATE_FUNCTIONS",
    "CompiledStage",
    "StageError",
    "Subject",
    "as_subject",
    "choose_stage",
    "compile_stage",
    "stage_field_errors",
]

GROUP: Final = "kwok.x-k8s.io"
KIND: Final = "Stage"
OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")
#: The functions kwok adds to its templates; the kubelet supplies them when rendering (their
#: names are known here so that a template is checked when the Stage is written).
STAGE_TEMPLATE_FUNCTIONS: Final = (
    "Now",
    "StartTime",
    "Quote",
    "YAML",
    "Version",
    "NodeIPWith",
    "NodeIPsWith",
    "PodIPWith",
    "PodIPsWith",
    "NodeConditions",
)
_UNSUPPORTED_NEXT: Final = ("patches", "statusSubresource", "statusPatchAs")


class StageError(ValueError):
    """A Stage that cannot run; the message names the Stage and the field."""


def _refuse(*_: Any) -> Any:
    raise TemplateError("not callable while checking")


#: One step of a plain jq path: ``.name``, ``["key"]`` (after a dot or not), ``.[]``/``[]``.
_PATH_STEP: Final = re.compile(
    r'\.?\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\.([A-Za-z_][A-Za-z0-9_]*)|\.?\[\]'
)
_ITERATE: Final = object()


class _PathError(Exception):
    """jq would fail here (a field of a non-object, iterating a non-list)."""


def _path_steps(expression: str) -> list[Any] | None:
    """The steps of a plain path expression (what most Stage keys are), or None for anything
    jq itself must run (pipes, ``select``, functions)."""
    text = expression.strip()
    steps: list[Any] = []
    position = 0
    while position < len(text):
        match = _PATH_STEP.match(text, position)
        if match is None:
            return None
        if match.group(1) is not None:
            steps.append(json.loads(f'"{match.group(1)}"'))
        elif match.group(2) is not None:
            steps.append(match.group(2))
        else:
            steps.append(_ITERATE)
        position = match.end()
    return steps or None


def _walk(steps: list[Any], obj: Any) -> list[Any]:
    values = [obj]
    for step in steps:
        following: list[Any] = []
        for value in values:
            if step is _ITERATE:
                if isinstance(value, list):
                    following.extend(value)
                elif isinstance(value, dict):
                    following.extend(value.values())
                else:
                    raise _PathError
            elif value is None:
                following.append(None)
            elif isinstance(value, dict):
                following.append(value.get(step))
            else:
                raise _PathError
        values = following
    return values


class _Query:
    """A compiled jq expression; plain paths are walked in Python (same results, no JSON
    round trip), anything else runs in jq."""

    __slots__ = ("_program", "_steps")

    def __init__(self, expression: str) -> None:
        try:
            self._program = jq.compile(expression)
        except ValueError as error:
            first = str(error).splitlines()[0] if str(error) else "syntax error"
            raise ValueError(f"{expression!r} is not a jq expression: {first}") from None
        self._steps = _path_steps(expression)

    def run(self, subject: Subject) -> list[Any] | None:
        """kwok's Query.Execute: the non-null results, or None when the expression fails."""
        try:
            if self._steps is not None:
                results = _walk(self._steps, subject.obj)
            else:
                results = self._program.input_text(subject.text).all()
        except (ValueError, _PathError):
            return None
        return [value for value in results if value is not None]


def _query(expression: str) -> _Query:
    return _Query(expression)


class Subject:
    """An object matched against Stages, encoded to JSON once for all of its jq queries (a
    pod meets several Stages of several expressions each)."""

    __slots__ = ("_text", "obj")

    def __init__(self, obj: Mapping[str, Any]) -> None:
        self.obj = obj
        self._text: str | None = None

    @property
    def text(self) -> str:
        """The object as JSON text (what jq reads)."""
        if self._text is None:
            self._text = json.dumps(self.obj, separators=(",", ":"))
        return self._text


def as_subject(obj: Mapping[str, Any] | Subject) -> Subject:
    """``obj`` ready to be matched (itself when it already is)."""
    return obj if isinstance(obj, Subject) else Subject(obj)


def _run_query(program: _Query, subject: Subject) -> list[Any] | None:
    """kwok's Query.Execute: the non-null results, or None when the expression fails."""
    return program.run(subject)


def _as_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    return None


@dataclass(frozen=True, slots=True)
class _Requirement:
    program: Any
    operator: str
    values: tuple[str, ...]

    def matches(self, subject: Subject) -> bool:
        data = _run_query(self.program, subject)
        if data is None:
            return self.operator in ("NotIn", "DoesNotExist")
        if self.operator in ("In", "NotIn"):
            found = any(_as_text(value) in self.values for value in data)
            return found if self.operator == "In" else not found
        return bool(data) if self.operator == "Exists" else not data


@dataclass(frozen=True, slots=True)
class _Value:
    """A number given directly (milliseconds, weight) and/or by a jq expression."""

    value: int | None
    program: Any | None


@dataclass(frozen=True, slots=True)
class CompiledStage:
    """One Stage, ready to match and run."""

    name: str
    api_group: str
    kind: str
    match_labels: Mapping[str, str] | None
    match_annotations: Mapping[str, str] | None
    requirements: tuple[_Requirement, ...]
    weight: _Value
    delay: _Value | None
    jitter: _Value | None
    event: Mapping[str, str] | None = None
    finalizers: Mapping[str, Any] | None = None
    delete: bool = False
    status_template: str = ""
    immediate_next_stage: bool = False
    #: kwok ignores a Stage without a selector (an empty one matches everything).
    has_selector: bool = True
    resource_version: str = field(default="", compare=False)

    def applies_to(self, api_version: str, kind: str) -> bool:
        """Whether the Stage's ``resourceRef`` names objects of ``api_version``/``kind``."""
        group = api_version.rpartition("/")[0]
        wanted = self.api_group
        # kwok's own pod stages say apiGroup "v1": the core group's version.
        return kind == self.kind and wanted in (group, api_version, "")

    def matches(self, obj: Mapping[str, Any] | Subject) -> bool:
        """kwok's selector rules (labels, annotations, then every expression)."""
        subject = as_subject(obj)
        meta = subject.obj.get("metadata") or {}
        for wanted, have in (
            (self.match_labels, meta.get("labels") or {}),
            (self.match_annotations, meta.get("annotations") or {}),
        ):
            if wanted is not None and any(have.get(k) != v for k, v in wanted.items()):
                return False
        return all(requirement.matches(subject) for requirement in self.requirements)

    def weight_of(self, obj: Mapping[str, Any] | Subject) -> int:
        """The draw weight of this Stage for ``obj`` (``weightFrom`` first)."""
        if self.weight.program is not None:
            data = _run_query(self.weight.program, as_subject(obj)) or []
            if data:
                value = data[0]
                if isinstance(value, int | float) and not isinstance(value, bool):
                    return int(value)
                if isinstance(value, str):
                    try:
                        return int(value)
                    except ValueError:
                        pass
        return self.weight.value or 0

    def delay_of(
        self, obj: Mapping[str, Any] | Subject, now: datetime, rng: random.Random
    ) -> float:
        """Seconds to wait before ``next`` (0: at once); jitter is drawn from ``rng``."""
        obj = as_subject(obj)
        duration = _seconds(self.delay, obj, now)
        if duration is None:
            return 0.0
        jitter = _seconds(self.jitter, obj, now)
        if jitter is None:
            return max(0.0, duration)
        if jitter <= duration:
            return max(0.0, jitter)
        return max(0.0, duration + rng.uniform(0.0, jitter - duration))


def _seconds(value: _Value | None, obj: Subject, now: datetime) -> float | None:
    if value is None:
        return None
    default = value.value / 1000.0 if value.value is not None else None
    if value.program is None:
        return default
    data = _run_query(value.program, obj) or []
    if not data:
        return default
    first = data[0]
    if isinstance(first, str):
        if first == "":
            return None
        try:
            moment = datetime.fromisoformat(first)
        except ValueError:
            try:
                return parse_go_duration(first)
            except ValueError:
                return default
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return (moment - now).total_seconds()
    return default


def _expression(source: Any, where: str) -> Any | None:
    """The jq program of an ``ExpressionFrom`` (``expressionFrom`` or ``jq.expression``)."""
    if source is None:
        return None
    if not isinstance(source, Mapping):
        raise StageError(f"{where}: must be an object")
    if source.get("cel") is not None:
        raise StageError(f"{where}.cel: CEL expressions are not supported (use jq)")
    text = source.get("expressionFrom")
    if isinstance(source.get("jq"), Mapping):
        text = source["jq"].get("expression")
    if not text:
        return None
    try:
        return _query(str(text))
    except ValueError as error:
        raise StageError(f"{where}: {error}") from None


def _milliseconds(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise StageError(f"{where}: must be an integer")
    return value


def _string_map(value: Any, where: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise StageError(f"{where}: must be a map of strings")
    return {str(k): str(v) for k, v in value.items()}


def _requirements(expressions: Any) -> tuple[_Requirement, ...]:
    if expressions is None:
        return ()
    if not isinstance(expressions, list):
        raise StageError("spec.selector.matchExpressions: must be a list")
    found = []
    for index, entry in enumerate(expressions):
        where = f"spec.selector.matchExpressions[{index}]"
        if not isinstance(entry, Mapping):
            raise StageError(f"{where}: must be an object")
        if entry.get("cel") is not None:
            raise StageError(f"{where}.cel: CEL expressions are not supported (use key or jq)")
        source: Mapping[str, Any] = entry["jq"] if isinstance(entry.get("jq"), Mapping) else entry
        key, operator = source.get("key"), source.get("operator")
        values = source.get("values") or []
        if not key:
            raise StageError(f"{where}.key: Required value")
        if operator not in OPERATORS:
            raise StageError(
                f'{where}.operator: Unsupported value: "{operator}": supported values: '
                + ", ".join(f'"{o}"' for o in OPERATORS)
            )
        if operator in ("In", "NotIn") and not values:
            raise StageError(f"{where}.values: must be non-empty for In and NotIn")
        if operator in ("Exists", "DoesNotExist") and values:
            raise StageError(f"{where}.values: must be empty for Exists and DoesNotExist")
        try:
            program = _query(str(key))
        except ValueError as error:
            raise StageError(f"{where}.key: {error}") from None
        found.append(_Requirement(program, str(operator), tuple(str(v) for v in values)))
    return tuple(found)


def compile_stage(stage: Mapping[str, Any]) -> CompiledStage:
    """The runnable form of a Stage object; :class:`StageError` names the Stage and field."""
    meta = stage.get("metadata") or {}
    name = str(meta.get("name") or "")
    try:
        return _compile(stage, name, str(meta.get("resourceVersion") or ""))
    except StageError as error:
        raise StageError(f'stage "{name}": {error}') from None


def _compile(stage: Mapping[str, Any], name: str, resource_version: str) -> CompiledStage:
    spec = stage.get("spec")
    if not isinstance(spec, Mapping):
        raise StageError("spec: Required value")
    if spec.get("steps"):
        raise StageError("spec.steps: not supported (use spec.next)")
    ref = spec.get("resourceRef")
    if not isinstance(ref, Mapping) or not ref.get("kind"):
        raise StageError("spec.resourceRef.kind: Required value")
    selector: Any = spec.get("selector")
    if selector is not None and not isinstance(selector, Mapping):
        raise StageError("spec.selector: must be an object")
    selector = selector or {}
    delay: Any = spec.get("delay")
    if delay is not None and not isinstance(delay, Mapping):
        raise StageError("spec.delay: must be an object")
    next_: Any = spec.get("next") or {}
    if not isinstance(next_, Mapping):
        raise StageError("spec.next: must be an object")
    for unsupported in _UNSUPPORTED_NEXT:
        if next_.get(unsupported):
            raise StageError(f"spec.next.{unsupported}: not supported")
    template = str(next_.get("statusTemplate") or "")
    if template:
        try:
            GoTemplate(template, dict.fromkeys(STAGE_TEMPLATE_FUNCTIONS, _refuse))
        except TemplateError as error:
            raise StageError(f"spec.next.statusTemplate: {error}") from None
    event = next_.get("event")
    if event is not None and not isinstance(event, Mapping):
        raise StageError("spec.next.event: must be an object")
    finalizers = next_.get("finalizers")
    if finalizers is not None and not isinstance(finalizers, Mapping):
        raise StageError("spec.next.finalizers: must be an object")
    delay = delay or {}
    has_delay = delay.get("durationMilliseconds") is not None or delay.get("durationFrom")
    has_jitter = delay.get("jitterDurationMilliseconds") is not None or delay.get(
        "jitterDurationFrom"
    )
    return CompiledStage(
        name=name,
        api_group=str(ref.get("apiGroup") or ""),
        kind=str(ref["kind"]),
        match_labels=_string_map(selector.get("matchLabels"), "spec.selector.matchLabels"),
        match_annotations=_string_map(
            selector.get("matchAnnotations"), "spec.selector.matchAnnotations"
        ),
        requirements=_requirements(selector.get("matchExpressions")),
        weight=_Value(
            _milliseconds(spec.get("weight"), "spec.weight"),
            _expression(spec.get("weightFrom"), "spec.weightFrom"),
        ),
        delay=_Value(
            _milliseconds(delay.get("durationMilliseconds"), "spec.delay.durationMilliseconds"),
            _expression(delay.get("durationFrom"), "spec.delay.durationFrom"),
        )
        if has_delay
        else None,
        jitter=_Value(
            _milliseconds(
                delay.get("jitterDurationMilliseconds"), "spec.delay.jitterDurationMilliseconds"
            ),
            _expression(delay.get("jitterDurationFrom"), "spec.delay.jitterDurationFrom"),
        )
        if has_jitter
        else None,
        event={str(k): str(v) for k, v in event.items()} if event else None,
        finalizers=dict(finalizers) if finalizers else None,
        delete=bool(next_.get("delete")),
        status_template=template,
        immediate_next_stage=bool(spec.get("immediateNextStage")),
        has_selector=spec.get("selector") is not None,
        resource_version=resource_version,
    )


def stage_field_errors(stage: Mapping[str, Any]) -> list[fe.FieldError]:
    """What the API server answers a Stage that cannot run (empty: it can)."""
    try:
        _compile(stage, "", "")
    except StageError as error:
        path, _, detail = str(error).partition(": ")
        return [fe.FieldError("FieldValueInvalid", path, detail=detail or str(error))]
    return []


def choose_stage(
    stages: Sequence[CompiledStage], obj: Mapping[str, Any] | Subject, rng: random.Random
) -> CompiledStage | None:
    """The Stage that runs next for ``obj``: kwok's draw among the matching ones by weight."""
    obj = as_subject(obj)
    matching = [stage for stage in stages if stage.has_selector and stage.matches(obj)]
    if not matching:
        return None
    if len(matching) == 1:
        return matching[0]
    weights = [stage.weight_of(obj) for stage in matching]
    total = sum(w for w in weights if w > 0)
    if total <= 0:
        return rng.choice(matching)
    pick = rng.randrange(total)
    for stage, weight in zip(matching, weights, strict=True):
        if weight <= 0:
            continue
        pick -= weight
        if pick < 0:
            return stage
    return matching[-1]


def template_text(value: Any) -> str:
    """kwok's ``Quote``: a JSON string, or the JSON text of any other value, quoted."""
    text = json.dumps(value, ensure_ascii=False)
    return text if text.startswith('"') else json.dumps(text)
