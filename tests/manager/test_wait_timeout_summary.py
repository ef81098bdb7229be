"""`wait_for` gives up with one short line: what it waited for and what it saw last (kind,
name, status), never an object's managedFields or spec."""

from __future__ import annotations

from typing import Any

import pytest

from setpoint.client.errors import NotFound
from setpoint.testing import WaitTimeout, wait_for


def _pod() -> dict[str, Any]:
    field = {"manager": "kubectl", "fieldsV1": {"f:spec": {"f:containers": {"x" * 40: {}}}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "shop", "resourceVersion": "812",
                     "generation": 1, "managedFields": [field] * 30},
        "spec": {"containers": [{"name": "web", "image": "nginx", "args": ["y" * 200]}]},
        "status": {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
        ], "containerStatuses": [{}]},
    }  # fmt: skip


async def test_an_object_is_summarized_without_managed_fields() -> None:
    with pytest.raises(WaitTimeout) as raised:
        await wait_for(_pod, lambda pod: False, timeout=0.05, what="pod web-0 to be Ready")
    message = str(raised.value)
    assert message == (
        "timed out after 0.05s waiting for pod web-0 to be Ready; last seen: Pod shop/web-0 "
        "(resourceVersion 812, generation 1): status phase=Pending, conditions "
        "[PodScheduled=True, Ready=False(ContainersNotReady)], containerStatuses=<1 items>"
    )
    assert "managedFields" not in message and "\n" not in message


async def test_lists_errors_and_others_are_one_short_line() -> None:
    pods = [_pod() for _ in range(7)]
    with pytest.raises(WaitTimeout, match=r"last seen: 7 items: Pod shop/web-0, .*, … 2 more$"):
        await wait_for(lambda: pods, lambda items: False, timeout=0.05, what="pods")

    def missing() -> None:
        raise NotFound({"kind": "Status", "code": 404, "reason": "NotFound",
                        "message": 'pods "web-1" not found'})  # fmt: skip

    with pytest.raises(WaitTimeout, match=r"last seen: NotFound: .*web-1"):
        await wait_for(missing, timeout=0.05, what="pod web-1")
    with pytest.raises(WaitTimeout) as raised:
        await wait_for(lambda: "z" * 5000, lambda text: False, timeout=0.05, what="text")
    assert len(str(raised.value)) < 500
