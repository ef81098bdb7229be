"""One line, plus a hint, for the failures a user of `setpoint run` can cause or fix.

A dead API server, a missing kubeconfig, a port in use or an RBAC refusal are not bugs of the
operator: they get one line that says what failed and what to check, and exit code 1 (2 for
usage errors). Tracebacks are for the unexpected, and for `--debug`.
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

from setpoint.client.errors import (
    ApiError,
    ConfigError,
    ConnectionFailed,
    Forbidden,
    NoKindMatch,
    Unauthorized,
)
from setpoint.manager.api_server_wait import ApiServerUnreachable, connection_reason
from setpoint.manager.manager import ManagerError, RunnableFailed

__all__ = ["describe_failure"]

CONNECTION_HINT = "is the cluster running? check --kubeconfig/--context"
CONFIG_HINT = (
    "pass --kubeconfig PATH or set $KUBECONFIG (`setpoint cluster serve` writes one for the "
    "local cluster)"
)


def _server(error: ConnectionFailed) -> str:
    url = error.url
    if not url:
        return "the API server"
    parts = urlsplit(url)
    return f"the API server at {parts.scheme}://{parts.netloc}"


def _leadership_lost(error: BaseException) -> bool:
    # Only a leader elector raises LeaderElectionLost: if its module was never imported (no
    # election ran), the error is not one, and a failure need not import it to tell.
    module = sys.modules.get("setpoint.manager.leader_election")
    return module is not None and isinstance(error, module.LeaderElectionLost)


def describe_failure(error: BaseException) -> str | None:
    """The one-line message (with a hint) for an expected failure, or None for a bug."""
    if isinstance(error, RunnableFailed):
        inner = describe_failure(error.error)
        return None if inner is None else inner
    if _leadership_lost(error):
        return f"{error}; exiting so that this replica restarts as a candidate"
    if isinstance(error, ApiServerUnreachable):
        return (
            f"cannot reach the API server at {error.url} ({error.reason}) after waiting "
            f"{error.waited:.0f}s ({error.attempts} attempts): {CONNECTION_HINT}"
        )
    if isinstance(error, ConnectionFailed):
        return f"cannot reach {_server(error)} ({connection_reason(error)}): {CONNECTION_HINT}"
    if isinstance(error, ConfigError):
        message = str(error).split(" (inside a pod")[0]  # the client's hint is for its API
        return f"{message}: {CONFIG_HINT}"
    if isinstance(error, Unauthorized):
        return (
            f"the API server refused the credentials ({error}): check the user in the "
            "kubeconfig (--kubeconfig/--context)"
        )
    if isinstance(error, Forbidden):
        missing = error.missing_permission
        rule = f"; missing permission: {missing}" if missing else ""
        return (
            f"{error}: the operator's RBAC does not allow this{rule} (check its Role/ClusterRole)"
        )
    if isinstance(error, NoKindMatch):
        return f"{error}: is the CRD installed? (kubectl apply -f the CRD manifest)"
    if isinstance(error, ApiError):
        return f"the API server answered {error}"
    if isinstance(error, ManagerError):
        return str(error)
    return None
