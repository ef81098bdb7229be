"""The manager's webhook server options: port bounds, -1 turning the server off."""

from __future__ import annotations

import pytest

from setpoint.manager import Manager, ManagerError
from setpoint.webhook import AdmissionRequest, AdmissionResponse


async def allow(request: AdmissionRequest) -> AdmissionResponse:
    return AdmissionResponse()


def test_a_webhook_port_out_of_range_is_refused_naming_the_option() -> None:
    with pytest.raises(ManagerError, match=r"webhook_port must be 0\.\.65535 or -1"):
        Manager(webhook_port=70000)
    manager = Manager()
    with pytest.raises(ManagerError, match="webhook_port"):
        manager.configure(webhook_port=-2)


async def test_readiness_waits_for_the_webhook_server_unless_it_is_off() -> None:
    manager = Manager()
    manager.add_webhook("/v", allow)
    [outcome] = [o for o in await manager.readyz.run_all(set()) if o.name == "webhook"]
    assert not outcome.healthy
    manager.configure(webhook_port=-1)
    [outcome] = [o for o in await manager.readyz.run_all(set()) if o.name == "webhook"]
    assert outcome.healthy
    with pytest.raises(ManagerError, match="not a new path"):
        manager.add_webhook("/v", allow)
