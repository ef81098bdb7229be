"""The ring both debug feeds keep, and the Secret redaction both apply."""

from __future__ import annotations

import asyncio
import threading

import pytest

from setpoint.api.patch import create_json_patch
from setpoint.api.record_ring import RecordRing
from setpoint.api.secret_redaction import REDACTED, redact_patch, redact_secret

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def test_the_ring_numbers_keeps_the_newest_and_says_what_was_dropped() -> None:
    ring: RecordRing[str] = RecordRing(3)
    assert ring.since(0) == ([], False)
    for letter in "abcde":
        ring.append(letter)
    assert ring.last_seq == 5 and len(ring) == 3
    assert ring.since(0) == ([(3, "c"), (4, "d"), (5, "e")], True)
    assert ring.since(1) == ([(3, "c"), (4, "d"), (5, "e")], True)
    assert ring.since(2) == ([(3, "c"), (4, "d"), (5, "e")], False)
    assert ring.since(4) == ([(5, "e")], False)
    assert ring.since(5) == ([], False)
    assert ring.since(9) == ([], False)
    assert ring.since(0, lambda item: item != "d", 1) == ([(3, "c")], True)


@pytest.mark.parametrize("capacity", [0, -1, True, 2.5])
def test_a_ring_needs_a_positive_whole_capacity(capacity: object) -> None:
    with pytest.raises(ValueError, match="capacity: must be an integer >= 1"):
        RecordRing(capacity)  # type: ignore[arg-type]


async def test_a_waiting_reader_wakes_for_a_record_handed_over_from_another_thread() -> None:
    ring: RecordRing[int] = RecordRing(10)
    assert await ring.wait_after(0, 0.01) is False
    waiting = asyncio.create_task(ring.wait_after(0, 30))
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    threading.Thread(target=loop.call_soon_threadsafe, args=(ring.append, 1)).start()
    assert await asyncio.wait_for(waiting, 30) is True
    assert await ring.wait_after(0, 0.01) is True  # already there: no wait
    woken = asyncio.create_task(ring.wait_after(1, 30))
    await asyncio.sleep(0)
    ring.wake()
    assert await asyncio.wait_for(woken, 30) is False  # woken without a new record


def secret(**values: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "annotations": {LAST_APPLIED: str(values), "team": "a"}},
        "stringData": dict(values),
        "data": {key: value.encode().hex() for key, value in values.items()},
    }


def test_a_secret_keeps_its_keys_and_loses_its_values() -> None:
    original = secret(password="hunter2")
    redacted = redact_secret(original)
    assert redacted["data"] == {"password": REDACTED}
    assert redacted["stringData"] == {"password": REDACTED}
    assert redacted["metadata"]["annotations"] == {LAST_APPLIED: REDACTED, "team": "a"}
    assert original["stringData"] == {"password": "hunter2"}, "the original is left as it is"
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"password": "x"}}
    assert redact_secret(config_map) is config_map


def test_a_patch_between_secrets_shows_what_changed_but_no_value() -> None:
    before, after = secret(password="hunter2"), secret(password="correct", user="mallory")
    patch = redact_patch(create_json_patch(before, after))
    assert (
        "hunter2" not in str(patch) and "correct" not in str(patch) and "mallory" not in str(patch)
    )
    assert {"op": "replace", "path": "/data/password", "value": REDACTED} in patch
    assert {"op": "add", "path": "/data/user", "value": REDACTED} in patch
    assert {"op": "replace", "path": f"/metadata/annotations/{LAST_APPLIED.replace('/', '~1')}",
            "value": REDACTED} in patch  # fmt: skip
    created = redact_patch(create_json_patch({}, before))
    assert {"op": "add", "path": "/data", "value": {"password": REDACTED}} in created
    whole = redact_patch([{"op": "add", "path": "", "value": before}])
    assert whole[0]["value"]["stringData"] == {"password": REDACTED}
    removed = [{"op": "remove", "path": "/data/password"}]
    assert redact_patch(removed) == removed
