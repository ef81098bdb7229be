"""An operator holding a `Metacontroller` runs it when started through `run_operator`, which
starts `Operator.fresh()` copies."""

from __future__ import annotations

import uuid

import setpoint
from setpoint.client import Client
from setpoint.composite import Metacontroller
from setpoint.testing import run_operator

from .conftest import HookServer
from .test_composite_webhooks import config_map, config_map_for, create_thing, spec


def test_fresh_copies_the_metacontroller_runner_with_its_options() -> None:
    op = setpoint.Operator("with-metacontroller")
    op.add(Metacontroller(op, target_label_selector="shard=a", workers_per_controller=3))
    copy = op.fresh()
    (managed,) = copy._runnables
    runner = managed.target
    assert isinstance(runner, Metacontroller) and runner.manager is copy
    assert runner.workers == 3
    assert runner.selector.matches({"shard": "a"}) and not runner.selector.matches({"shard": "b"})


async def test_run_operator_runs_the_composite_controllers_of_an_operator_with_metacontroller(
    client: Client, kubeconfig: str, namespace: str, hooks: HookServer, crds: None
) -> None:
    shard = uuid.uuid4().hex[:12]
    op = setpoint.Operator("metacontroller")
    op.add(Metacontroller(op, target_label_selector=f"composite-test={shard}"))
    hooks.handlers["/sync"] = lambda request: {"children": [config_map_for(request["parent"])]}
    declared = await client.create(
        {
            "apiVersion": "metacontroller.k8s.io/v1alpha1",
            "kind": "CompositeController",
            "metadata": {"name": f"fresh-{shard}", "labels": {"composite-test": shard}},
            "spec": spec(hooks),
        }
    )
    try:
        async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
            await create_thing(client, namespace)
            assert (await config_map(client, namespace))["data"] == {"size": "1"}
    finally:
        await client.delete(declared, missing_ok=True)
