"""``x-kubernetes-validations`` rules are compiled with the CRD and enforced on writes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.cluster.apiserver.schema import cel_validation
from setpoint.cluster.apiserver.storage import MemoryStorage
from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.hardening.conftest import served
from tests.cluster.raw_api import RawAPI

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
async def api() -> AsyncIterator[RawAPI]:
    storage = MemoryStorage()
    async with served(storage) as (_, client):
        yield client
    await storage.close()


def crd_with_rules(rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    crd = widget_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["name"] = {"type": "string"}
    spec["properties"]["items"] = {"type": "array", "items": {"type": "integer"}}
    spec["properties"].update(extra)
    spec["x-kubernetes-validations"] = rules
    return crd


async def install(api: RawAPI, crd: dict[str, Any]) -> str:
    reply = await api.request("POST", CRDS, crd)
    assert reply.status == 201, reply.body
    return f"/apis/{crd['spec']['group']}/v1/namespaces/default/widgets"


def causes(reply: Any) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in reply.body["details"]["causes"]]


async def test_rules_messages_reasons_and_field_paths(api: RawAPI) -> None:
    group_path = await install(
        api,
        crd_with_rules(
            [
                {"rule": "self.size <= 10"},
                {"rule": "self.name.startsWith('w')", "message": "name must start with w"},
                {
                    "rule": "self.items.isSorted()",
                    "messageExpression": (
                        "'items out of order: ' + self.items.map(i, string(i)).join(', ')"
                    ),
                    "fieldPath": ".items",
                },
                {
                    "rule": "!has(self.color) || self.color != 'red'",
                    "reason": "FieldValueForbidden",
                },
            ]
        ),
    )
    group = group_path.split("/")[2]
    good = widget("good", group, size=3)
    good["spec"].update(name="wide", items=[1, 2, 3])
    assert (await api.request("POST", group_path, good)).status == 201

    bad = widget("bad", group, size=11)
    bad["spec"].update(name="bad", items=[3, 1], color="red")
    reply = await api.request("POST", group_path, bad)
    assert reply.status == 422, reply.body
    assert causes(reply) == [
        ("spec", 'Invalid value: "object": failed rule: self.size <= 10'),
        ("spec", 'Invalid value: "object": name must start with w'),
        ("spec.items", 'Invalid value: "object": items out of order: 3, 1'),
        ("spec", "Forbidden: failed rule: !has(self.color) || self.color != 'red'"),
    ]


async def test_transition_rules_see_the_old_object(api: RawAPI) -> None:
    path = await install(
        api,
        crd_with_rules(
            [
                {"rule": "self.size >= oldSelf.size", "message": "size may not shrink"},
                {
                    "rule": "!oldSelf.hasValue() || self.name == oldSelf.value().name",
                    "optionalOldSelf": True,
                    "message": "name is immutable",
                },
            ]
        ),
    )
    group = path.split("/")[2]
    obj = widget("t", group, size=5)
    obj["spec"]["name"] = "one"
    created = await api.request("POST", path, obj)
    assert created.status == 201, created.body
    shrink = {"spec": {"size": 4, "name": "two"}}
    reply = await api.request(
        "PATCH", f"{path}/t", shrink, content_type="application/merge-patch+json"
    )
    assert reply.status == 422
    messages = [m for _, m in causes(reply)]
    assert any("size may not shrink" in m for m in messages)
    assert any("name is immutable" in m for m in messages)
    grow = {"spec": {"size": 6}}
    reply = await api.request(
        "PATCH", f"{path}/t", grow, content_type="application/merge-patch+json"
    )
    assert reply.status == 200, reply.body


async def test_a_rule_that_does_not_compile_is_refused_with_the_crd(api: RawAPI) -> None:
    reply = await api.request("POST", CRDS, crd_with_rules([{"rule": "self.size >"}]))
    assert reply.status == 422
    (field, message) = causes(reply)[0]
    assert field.endswith("x-kubernetes-validations[0].rule")
    assert "compilation failed: ERROR: <input>:1:" in message
    assert "Syntax error" in message


async def test_a_rule_iterating_without_bound_is_stopped(api: RawAPI) -> None:
    path = await install(
        api, crd_with_rules([{"rule": "self.items.all(a, self.items.all(b, a + b >= 0))"}])
    )
    group = path.split("/")[2]
    obj = widget("many", group)
    obj["spec"]["items"] = list(range(2000))
    reply = await api.request("POST", path, obj)
    assert reply.status == 422
    assert "call cost exceeds limit for rule" in reply.body["message"]
    assert (await api.request("GET", "/healthz")).status == 200


async def test_kubernetes_regex_functions_use_re2(api: RawAPI) -> None:
    path = await install(
        api,
        crd_with_rules(
            [{"rule": "self.name.find('[0-9]+') == '42' && self.name.findAll('[a-z]').size() == 2"}]
        ),
    )
    group = path.split("/")[2]
    good = widget("re", group)
    good["spec"]["name"] = "ab42"
    assert (await api.request("POST", path, good)).status == 201
    bad = widget("re2", group)
    bad["spec"]["name"] = "abc7"
    assert (await api.request("POST", path, bad)).status == 422


async def test_quantity_and_url_functions(api: RawAPI) -> None:
    path = await install(
        api,
        crd_with_rules(
            [
                {
                    "rule": "quantity(self.name).isLessThan(quantity('2Gi'))",
                    "message": "at most 2Gi",
                },
                {"rule": "quantity('1Gi') == quantity('1024Mi')"},
                {"rule": "!has(self.color) || url(self.color).getScheme() == 'https'"},
            ]
        ),
    )
    group = path.split("/")[2]
    good = widget("q", group)
    good["spec"].update(name="1536Mi", color="https://example.com/x")
    assert (await api.request("POST", path, good)).status == 201
    bad = widget("q2", group)
    bad["spec"].update(name="3G", color="http://example.com")
    reply = await api.request("POST", path, bad)
    assert reply.status == 422
    assert [m for _, m in causes(reply)] == [
        'Invalid value: "object": at most 2Gi',
        'Invalid value: "object": failed rule: !has(self.color) || '
        "url(self.color).getScheme() == 'https'",
    ]


@pytest.mark.parametrize(
    ("rule", "field", "fragment"),
    [
        ({"rule": "self.size > 0", "message": "   "}, "message", "message must be non-empty"),
        ({"rule": "self.size > 0", "message": "a\nb"}, "message", "must not contain line breaks"),
        ({"rule": "self.size >\n0"}, "message", "must be specified if rule contains line breaks"),
        ({"rule": "self.size > 0", "reason": "Nope"}, "reason", 'Unsupported value: "Nope"'),
        ({"rule": "self.size > 0", "optionalOldSelf": True}, "optionalOldSelf", "may not be set"),
        (
            {"rule": "self.size > 0", "messageExpression": "'a' +"},
            "messageExpression",
            "messageExpression compilation failed",
        ),
    ],
)
async def test_malformed_rule_entries_are_refused(
    api: RawAPI, rule: dict[str, Any], field: str, fragment: str
) -> None:
    reply = await api.request("POST", CRDS, crd_with_rules([rule]))
    assert reply.status == 422, reply.body
    fields = [f for f, _ in causes(reply)]
    assert any(f.endswith(f"x-kubernetes-validations[0].{field}") for f in fields), fields
    assert fragment in reply.body["message"]


def test_all_rules_of_a_write_share_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cel_validation, "REQUEST_BUDGET_SECONDS", 0.05)
    item_rule = {"rule": "self.v.all(a, self.v.all(b, a + b >= 0))"}  # ~10,000 steps per item
    schema = {
        "type": "object",
        "properties": {
            "l": {
                "type": "array",
                "items": {
                    "type": "object",
                    "x-kubernetes-validations": [item_rule],
                    "properties": {"v": {"type": "array", "items": {"type": "integer"}}},
                },
            }
        },
    }
    root = cel_validation.build(schema)
    assert root is not None
    errors = cel_validation.CelValidator(root).validate({"l": [{"v": list(range(99))}] * 5000})
    assert len(errors) == 1
    assert "running out of cost budget, no further validation rules will be run" in str(errors[0])
