"""Defaulters answer lossless patches: only what the defaulter changed."""

from __future__ import annotations

from typing import Any

from setpoint.api.patch import apply_json_patch, create_json_patch
from setpoint.webhook import AdmissionRequest, Defaulter, lossless_patch
from tests.webhook.models import Widget, widget


def request(obj: dict[str, Any], operation: str = "CREATE") -> AdmissionRequest:
    return AdmissionRequest.from_review(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": "u1", "operation": operation, "object": obj},
        }
    )


def default_size(obj: Widget) -> None:
    if obj.spec.size is None:
        obj.spec.size = 3


async def test_the_patch_holds_only_the_defaulters_change_never_unknown_fields() -> None:
    # controller-runtime #2931: `color` is unknown to this model; a diff of the sent object
    # against the re-serialised model removes it.
    sent = widget(color="red")
    answer = await Defaulter(Widget, default_size)(request(sent))
    assert answer.allowed
    assert answer.patch == [{"op": "add", "path": "/spec/size", "value": 3}]
    assert apply_json_patch(sent, answer.patch)["spec"] == {"color": "red", "size": 3}
    # What the diff-based approach would have sent (the bug this design avoids):
    typed = Widget.model_validate(sent)
    default_size(typed)
    naive = create_json_patch(sent, typed.model_dump(mode="json", by_alias=True))
    assert {"op": "remove", "path": "/spec/color"} in naive


async def test_fields_the_user_never_set_are_not_written() -> None:
    # `mode` has a model default and `ports` an empty one: neither is in the patch.
    answer = await Defaulter(Widget, default_size)(request(widget()))
    assert answer.patch == [{"op": "add", "path": "/spec/size", "value": 3}]


async def test_a_defaulter_that_changes_nothing_answers_no_patch() -> None:
    answer = await Defaulter(Widget, default_size)(request(widget(size=1)))
    assert answer.allowed
    assert answer.patch == []
    assert "patch" not in answer.to_review("u1", "admission.k8s.io/v1")["response"]


async def test_list_items_are_patched_in_place_keeping_their_unknown_fields() -> None:
    async def name_ports(obj: Widget) -> None:
        for port in obj.spec.ports:
            if port.port is None:
                port.port = 80

    sent = widget(ports=[{"target": 1}])
    sent["spec"]["ports"][0]["unknownKey"] = "kept"  # type: ignore[index]
    answer = await Defaulter(Widget, name_ports)(request(sent))
    patched = apply_json_patch(sent, answer.patch)
    assert patched["spec"]["ports"] == [{"target": 1, "unknownKey": "kept", "port": 80}]


def test_lossless_patch_removes_only_what_the_model_removed() -> None:
    sent = {"spec": {"a": 1, "b": 2, "unknown": 3}}
    assert lossless_patch(sent, {"spec": {"a": 1, "b": 2}}, {"spec": {"a": 1}}) == [
        {"op": "remove", "path": "/spec/b"}
    ]


async def test_deletes_are_not_defaulted() -> None:
    answer = await Defaulter(Widget, default_size)(request(widget(), "DELETE"))
    assert answer.allowed and answer.patch == []
