"""``setpoint cluster``: the local control plane."""

from __future__ import annotations

import click


@click.group()
def cluster() -> None:
    """Run the local Kubernetes control plane."""


@cluster.command()
@click.option("--port", type=int, default=0, show_default=True, help="Port on 127.0.0.1 (0: any free port).")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None, help="Durable storage directory (SQLite).")
@click.option("--in-memory", is_flag=True, default=False, help="Keep everything in memory (the default without --data-dir).")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None, help="Where to write the kubeconfig once ready.")
def serve(port: int, data_dir: str | None, in_memory: bool, kubeconfig: str | None) -> None:
    """Serve the Kubernetes API on 127.0.0.1 in the foreground."""
    raise click.ClickException("'setpoint cluster serve' is not built yet")
