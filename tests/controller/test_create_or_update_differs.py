"""What counts as a change for create_or_update / create_or_patch: only what mutate set."""

from __future__ import annotations

import copy
from typing import Any

from setpoint.controller.create_or_update import _tracked_copy, differs

SERVER_DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web", "team": "a"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
        "revisionHistoryLimit": 10,
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {"name": "web", "image": "nginx", "imagePullPolicy": "Always",
                     "terminationMessagePath": "/dev/termination-log"}
                ],
                "restartPolicy": "Always",
            },
        },
    },
}  # fmt: skip


def mutated(mutate: Any) -> tuple[dict[str, Any], dict[str, Any], set[int]]:
    current = copy.deepcopy(SERVER_DEPLOYMENT)
    originals: set[int] = set()
    desired = _tracked_copy(current, originals)
    mutate(desired)
    return current, desired, originals


def whole_spec(replicas: int) -> Any:
    def mutate(obj: dict[str, Any]) -> None:
        obj["spec"] = {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        }

    return mutate


def test_what_the_server_defaulted_inside_a_replaced_spec_is_no_difference() -> None:
    assert not differs(*mutated(whole_spec(2)))
    assert differs(*mutated(whole_spec(3)))


def test_a_key_deleted_in_place_is_a_difference_and_a_changed_list_item_too() -> None:
    def drop_label(obj: dict[str, Any]) -> None:
        del obj["metadata"]["labels"]["team"]

    def new_image(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"

    def second_container(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "x"})

    assert differs(*mutated(drop_label))
    assert differs(*mutated(new_image))
    assert differs(*mutated(second_container))
    assert not differs(*mutated(lambda obj: obj["metadata"]["labels"].update(app="web")))


STORED_SECRET: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "creds", "namespace": "ns"},
    "type": "Opaque",
    "data": {"user": "YWRtaW4=", "token": "czNjcjN0"},  # admin, s3cr3t
}


def test_a_secret_written_with_string_data_equals_the_stored_one_with_the_same_values() -> None:
    """stringData is write-only: the server stores it in data, base64-encoded, so the cached
    Secret never has it. Comparing the raw fields re-applied the Secret on every reconcile."""
    same = {**STORED_SECRET, "data": None, "stringData": {"user": "admin", "token": "s3cr3t"}}
    del same["data"]
    assert not differs(STORED_SECRET, same)
    assert differs(STORED_SECRET, {**same, "stringData": {"user": "admin", "token": "other"}})
    mixed = {**STORED_SECRET, "data": {"user": "YWRtaW4="}, "stringData": {"token": "s3cr3t"}}
    assert not differs(STORED_SECRET, mixed)


def test_string_data_in_a_secret_edited_in_place_does_not_count_data_as_deleted() -> None:
    current = copy.deepcopy(STORED_SECRET)
    originals: set[int] = set()
    desired = _tracked_copy(current, originals)
    del desired["data"]
    desired["stringData"] = {"user": "admin", "token": "s3cr3t"}
    assert not differs(current, desired, originals)
    desired["stringData"] = {"user": "admin"}
    assert differs(current, desired, originals)  # token left out of data: a deletion
