"""The user a request acts as: stored on the request by authentication, read by everyone after.

Authentication stores the user it established with :func:`set_request_user`; impersonation
replaces it; authorization, the review APIs and admission read it with :func:`request_user`.
A request nobody stored a user on is the admin's (the local cluster's one credential).

:data:`acting_user` carries the same user to code that has no request at hand (the RBAC
escalation checks run inside the registry); it is unset for the cluster's own in-process
writes (bootstrap, controllers), which upstream makes as ``system:masters`` over loopback.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

from aiohttp import web

from setpoint.cluster.apiserver.auth.identity import ADMIN, UserInfo

#: The request key under which the request's user is kept.
REQUEST_USER_KEY: Final = web.RequestKey("setpoint.user", UserInfo)

#: The user of the API request being served in this task (None: the server itself).
acting_user: ContextVar[UserInfo | None] = ContextVar("setpoint_acting_user", default=None)


def request_user(request: web.BaseRequest) -> UserInfo:
    """The user ``request`` acts as (the admin unless authentication stored another)."""
    user = request.get(REQUEST_USER_KEY)
    return user if isinstance(user, UserInfo) else ADMIN


def set_request_user(request: web.BaseRequest, user: UserInfo) -> None:
    """Record that ``request`` acts as ``user`` (authentication, then impersonation)."""
    request[REQUEST_USER_KEY] = user
