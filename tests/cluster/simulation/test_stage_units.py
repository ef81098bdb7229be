"""The pieces of kwok Stages without a cluster: the Go template subset, selectors, delays,
the weighted draw, and the one-line refusals."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest

from setpoint.cluster.simulation.go_template import GoTemplate, TemplateError
from setpoint.cluster.simulation.stages import (
    StageError,
    choose_stage,
    compile_stage,
    stage_field_errors,
)

NOW = datetime(2026, 12, 24, 18, tzinfo=UTC)


def _render(source: str, data: Any, **functions: Any) -> str:
    return GoTemplate(source, functions).render(data)


def test_go_template_fields_variables_ranges_and_pipelines() -> None:
    data = {"spec": {"containers": [{"name": "a"}, {"name": "b"}], "n": 3.0}, "metadata": {}}
    assert _render("{{ .spec.n }} {{ .missing }}", data) == "3 <no value>"
    assert (
        _render("{{ range $i, $c := .spec.containers }}{{ $i }}={{ $c.name }};{{ end }}", data)
        == "0=a;1=b;"
    )
    assert _render("{{ range .spec.none }}x{{ else }}empty{{ end }}", data) == "empty"
    assert _render('{{ $a := or .metadata.annotations dict }}{{ index $a "k" }}', data) == (
        "<no value>"
    )
    assert _render("{{ if eq .spec.n 3 }}three{{ else if .x }}x{{ else }}no{{ end }}", data) == (
        "three"
    )
    assert _render("{{ with .spec.containers }}{{ len . }}{{ end }}", data) == "2"
    assert _render('{{ "a" | Q }}', data, Q=lambda s: f"<{s}>") == "<a>"
    assert _render("a  {{- 1 -}}  b{{/* note */}}", data) == "a1b"
    assert _render("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}", data) == "2"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('{{ template "x" }}', "{{template}} is not supported"),
        ("{{ upper .a }}", 'function "upper" is not supported'),
        ("{{ if .a }}no end", "{{if}} has no {{end}}"),
    ],
)
def test_go_template_refuses_what_it_does_not_know(source: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message.replace("{", r"\{").replace("}", r"\}")):
        GoTemplate(source)


def _stage(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, **spec},
    }


POD = {
    "metadata": {"labels": {"app": "web"}, "annotations": {"delay": "90s"}},
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
}


def test_selectors_follow_kwok_rules() -> None:
    def matches(**selector: Any) -> bool:
        return compile_stage(_stage("s", selector=selector)).matches(POD)

    assert matches()
    assert matches(matchLabels={"app": "web"}) and not matches(matchLabels={"app": "db"})
    expression = '.status.conditions.[] | select( .type == "Ready" ) | .status'
    assert matches(matchExpressions=[{"key": expression, "operator": "In", "values": ["True"]}])
    assert matches(
        matchExpressions=[{"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}]
    )
    assert not matches(
        matchExpressions=[{"key": ".status.phase", "operator": "NotIn", "values": ["Running"]}]
    )
    assert matches(matchExpressions=[{"jq": {"key": ".status.phase", "operator": "Exists"}}])
    # kwok ignores a Stage without a selector.
    assert choose_stage([compile_stage(_stage("none"))], POD, random.Random(1)) is None


def test_delays_weights_and_the_draw() -> None:
    rng = random.Random(7)
    fixed = compile_stage(_stage("d", selector={}, delay={"durationMilliseconds": 1500}))
    assert fixed.delay_of(POD, NOW, rng) == 1.5
    from_annotation = compile_stage(
        _stage(
            "f",
            selector={},
            delay={
                "durationMilliseconds": 1000,
                "durationFrom": {"expressionFrom": '.metadata.annotations["delay"]'},
            },
        )
    )
    assert from_annotation.delay_of(POD, NOW, rng) == 90.0
    until = {"metadata": {"deletionTimestamp": "2026-12-24T18:00:30Z"}}
    deadline = compile_stage(
        _stage(
            "t",
            selector={},
            delay={"durationFrom": {"expressionFrom": ".metadata.deletionTimestamp"}},
        )
    )
    assert deadline.delay_of(until, NOW, rng) == 30.0
    jittered = compile_stage(
        _stage(
            "j",
            selector={},
            delay={"durationMilliseconds": 1000, "jitterDurationMilliseconds": 5000},
        )
    )
    assert all(1.0 <= jittered.delay_of(POD, NOW, rng) <= 5.0 for _ in range(50))
    heavy = compile_stage(_stage("heavy", selector={}, weight=99))
    light = compile_stage(_stage("light", selector={}, weight=1))
    drawn = [choose_stage([heavy, light], POD, rng).name for _ in range(200)]  # type: ignore[union-attr]
    assert drawn.count("heavy") > 150


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"selector": {"matchExpressions": [{"cel": {"expression": "true"}}]}},
            "spec.selector.matchExpressions[0].cel: CEL expressions are not supported "
            "(use key or jq)",
        ),
        (
            {"selector": {"matchExpressions": [{"key": ".a ||| b", "operator": "Exists"}]}},
            "spec.selector.matchExpressions[0].key: '.a ||| b' is not a jq expression",
        ),
        ({"next": {"patches": [{"template": "x"}]}}, "spec.next.patches: not supported"),
        ({"steps": [{"delete": True}]}, "spec.steps: not supported (use spec.next)"),
    ],
)
def test_a_stage_that_cannot_run_is_one_line_naming_it(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(StageError) as raised:
        compile_stage(_stage("odd", **spec))
    assert str(raised.value).startswith(f'stage "odd": {message}')
    assert "\n" not in str(raised.value)
    assert stage_field_errors(_stage("odd", **spec))[0].field == message.split(":")[0]


PATHS = [
    ".metadata.deletionTimestamp",
    ".status.phase",
    ".metadata.ownerReferences.[].kind",
    ".metadata.ownerReferences[].kind",
    '.metadata.labels["pod-container-running-failed.stage.kwok.x-k8s.io"]',
    '.metadata.annotations["a\\"b"]',
    ".status.initContainerStatuses.[].state.running.startedAt",
    ".spec",
    ".spec.containers.[]",
    '.status.conditions.[] | select( .type == "Ready" ) | .status',
]
OBJECTS = [
    {},
    {"metadata": None},
    {"metadata": {"ownerReferences": [{"kind": "Job"}, {"kind": "X"}], "labels": {"a": "b"}}},
    {"metadata": {"ownerReferences": "odd", "annotations": {'a"b': "q"}}},
    {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
    {"status": {"initContainerStatuses": [{"state": {"running": {"startedAt": "t"}}}, {}]}},
    {"status": "text", "spec": {"containers": [{"name": "a"}, None]}},
]


def test_plain_paths_give_what_jq_gives() -> None:
    import jq

    from setpoint.cluster.simulation.stages import Subject, _Query

    for expression in PATHS:
        query = _Query(expression)
        assert (query._steps is None) == ("|" in expression), expression  # the fast path ran
        for obj in OBJECTS:
            try:
                expected = [
                    v for v in jq.compile(expression).input_value(obj).all() if v is not None
                ]
            except ValueError:
                expected = None
            assert query.run(Subject(obj)) == expected, (expression, obj)
