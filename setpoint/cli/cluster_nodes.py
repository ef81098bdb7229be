"""``setpoint cluster node stop|start|add|remove NODE``: nodes failing, coming back, joining
and leaving the local cluster.

Stopping a node's kubelet is what a machine that dies or is cut off looks like to the control
plane: its Lease is no longer renewed, its status no longer posted, nothing is done to its pods.
The command annotates the Node (``setpoint.dev/kubelet: stopped``), which the local cluster's
kubelet obeys; the node lifecycle controller then marks the node ``Unknown`` after its grace
period, taints it, and its pods are evicted and replaced elsewhere. ``start`` removes the
annotation: the kubelet registers the node again and catches up with its pods. ``add`` creates
a Node labelled ``setpoint.dev/simulated-node: "true"``, which the kubelet then runs as a machine
that joined; ``remove`` deletes it, as a machine taken away (its pods are collected by the pod
garbage collector). It talks to the cluster over its API like any client, so it works on any
local cluster (``--kubeconfig``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from setpoint.client import Client

#: The Node annotation the local cluster's kubelet reads (see the kubelet's ``KUBELET_ANNOTATION``).
KUBELET_ANNOTATION = "setpoint.dev/kubelet"
STOPPED = "stopped"
#: The Node label that gives a Node a simulated kubelet (the kubelet's ``SIMULATED_NODE_LABEL``).
SIMULATED_NODE_LABEL = "setpoint.dev/simulated-node"


def _annotation(value: str | None) -> Callable[[Client, str], Awaitable[object]]:
    """Set (or, with None, remove) the kubelet annotation of a Node."""
    patch = {"metadata": {"annotations": {KUBELET_ANNOTATION: value}}}
    return lambda client, name: client.patch("v1", "Node", name, patch, patch_type="merge")


async def _create(client: Client, name: str) -> object:
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        SIMULATED_NODE_LABEL: "true",
    }
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    return await client.create(node)


async def _delete(client: Client, name: str) -> object:
    return await client.delete("v1", "Node", name)


async def _with_client(
    kubeconfig: str | None, name: str, action: Callable[[Client, str], Awaitable[object]]
) -> None:
    from setpoint.client import Client

    options = {"path": kubeconfig} if kubeconfig else {}
    client = await Client.from_kubeconfig(**options)
    try:
        await action(client, name)
    finally:
        await client.close()


def _run(
    kubeconfig: str | None,
    name: str,
    action: Callable[[Client, str], Awaitable[object]],
    done: str,
) -> None:
    try:
        asyncio.run(_with_client(kubeconfig, name, action))
    except click.ClickException:
        raise
    except Exception as error:
        from setpoint.cli.run_errors import describe_failure

        message = describe_failure(error)
        if message is None:
            raise
        click.echo(f"Error: {message}", err=True)
        sys.exit(1)
    click.echo(f"node/{name} {done}")


_KUBECONFIG = click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="The local cluster's kubeconfig (default: $KUBECONFIG, then ~/.kube/config).",
)


@click.group()
def node() -> None:
    """Stop, start, add and remove the local cluster's simulated nodes.

    \b
    Example:
      setpoint cluster serve --nodes 2 --kubeconfig kc &
      setpoint cluster node stop setpoint-node-1 --kubeconfig kc
    """


@node.command()
@click.argument("name")
@_KUBECONFIG
def stop(name: str, kubeconfig: str | None) -> None:
    """Stop node NAME's kubelet: no heartbeats, no pod updates (a node failure).

    After 50 s (the node monitor grace period) the node is NotReady (Unknown), tainted
    node.kubernetes.io/unreachable, and pods that do not tolerate that are evicted.

    \b
    Example:
      setpoint cluster node stop setpoint-node-1
      kubectl get node setpoint-node-1 -w
    """
    _run(kubeconfig, name, _annotation(STOPPED), "kubelet stopped")


@node.command()
@click.argument("name")
@_KUBECONFIG
def start(name: str, kubeconfig: str | None) -> None:
    """Start node NAME's kubelet again: it posts Ready and catches up with its pods.

    \b
    Example:
      setpoint cluster node start setpoint-node-1
    """
    _run(kubeconfig, name, _annotation(None), "kubelet started")


@node.command()
@click.argument("name")
@_KUBECONFIG
def add(name: str, kubeconfig: str | None) -> None:
    """Add a simulated node NAME: a machine that joins the cluster (Ready within a moment).

    \b
    Example:
      setpoint cluster node add setpoint-node-extra
      kubectl get nodes
    """
    _run(kubeconfig, name, _create, "added")


@node.command()
@click.argument("name")
@_KUBECONFIG
def remove(name: str, kubeconfig: str | None) -> None:
    """Remove node NAME: a machine taken away (its pods are collected after 40 s).

    \b
    Example:
      setpoint cluster node remove setpoint-node-extra
    """
    _run(kubeconfig, name, _delete, "removed")
