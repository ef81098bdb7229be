"""``setpoint rbac suggest``: the least Role/ClusterRole covering what a user was seen doing."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

__all__ = ["rbac_group"]


@click.group(name="rbac")
def rbac_group() -> None:
    """RBAC from observed behaviour.

    \b
    Example:
      setpoint rbac suggest --user system:serviceaccount:ops:myop --audit audit.jsonl
    """


@rbac_group.command(name="suggest")
@click.option(
    "--user",
    "username",
    required=True,
    help="Whose requests: a user name, or system:serviceaccount:NAMESPACE:NAME.",
)
@click.option(
    "--audit",
    "audit_log",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The audit log (JSON lines): `setpoint cluster serve --audit-log FILE` writes one.",
)
@click.option("--name", help="Name of the roles and bindings (default: suggested-<user>).")
@click.option(
    "--cluster-wide",
    is_flag=True,
    help="One ClusterRole for everything instead of a Role per namespace seen.",
)
def suggest_command(username: str, audit_log: Path, name: str | None, cluster_wide: bool) -> None:
    """Print the minimal RBAC (YAML) that allows exactly the requests USER made in the audit
    log, allowed or denied, merged by API group and resource.

    \b
    Example:
      setpoint cluster serve --audit-log audit.jsonl --kubeconfig kc &
      setpoint run myop/operator.py --kubeconfig kc --as system:serviceaccount:ops:myop
      setpoint rbac suggest --user system:serviceaccount:ops:myop --audit audit.jsonl
    """
    from setpoint.generate.rbac_suggest import AuditFormatError, read_audit_log, suggest

    try:
        suggestion = suggest(
            read_audit_log(audit_log), username, name=name, cluster_wide=cluster_wide
        )
    except AuditFormatError as error:
        raise click.ClickException(
            f"{error} (expected audit.k8s.io/v1 Events, one per line)"
        ) from None
    if suggestion.empty:
        raise click.ClickException(
            f"no requests by {username!r} in {audit_log}: check --user (as the audit log's "
            "user.username shows it)"
        )
    click.echo(yaml.safe_dump_all(suggestion.manifests(), sort_keys=False), nl=False)
