"""``setpoint cluster node stop|start NODE``: make a simulated node fail, and come back.

Stopping a node's kubelet is what a machine that dies or is cut off looks like to the control
plane: its Lease is no longer renewed, its status no longer posted, nothing is done to its pods.
The command annotates the Node (``setpoint.dev/kubelet: stopped``), which the local cluster's
kubelet obeys; the node lifecycle controller then marks the node ``Unknown`` after its grace
period, taints it, and its pods are evicted and replaced elsewhere. ``start`` removes the
annotation: the kubelet registers the node again and catches up with its pods. It talks to the
cluster over its API like any client, so it works on any local cluster (``--kubeconfig``).
"""

from __future__ import annotations

import asyncio
import sys

import click

#: The Node annotation the local cluster's kubelet reads (see the kubelet's ``KUBELET_ANNOTATION``).
KUBELET_ANNOTATION = "setpoint.dev/kubelet"
STOPPED = "stopped"


async def _annotate(kubeconfig: str | None, name: str, value: str | None) -> None:
    from setpoint.client import Client

    options = {"path": kubeconfig} if kubeconfig else {}
    client = await Client.from_kubeconfig(**options)
    try:
        await client.patch(
            "v1",
            "Node",
            name,
            {"metadata": {"annotations": {KUBELET_ANNOTATION: value}}},
            patch_type="merge",
        )
    finally:
        await client.close()


def _run(kubeconfig: str | None, name: str, value: str | None, done: str) -> None:
    try:
        asyncio.run(_annotate(kubeconfig, name, value))
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
    """Stop and start the kubelets of the local cluster's simulated nodes.

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
    _run(kubeconfig, name, STOPPED, "kubelet stopped")


@node.command()
@click.argument("name")
@_KUBECONFIG
def start(name: str, kubeconfig: str | None) -> None:
    """Start node NAME's kubelet again: it posts Ready and catches up with its pods.

    \b
    Example:
      setpoint cluster node start setpoint-node-1
    """
    _run(kubeconfig, name, None, "kubelet started")
