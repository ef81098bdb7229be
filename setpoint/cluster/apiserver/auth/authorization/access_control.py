"""The server's authorization step, its RBAC state and its lifetime, as one object.

:class:`AccessControl` is what the API server holds: it bootstraps the default roles, keeps
the RBAC index and the ClusterRole aggregation running, and :meth:`AccessControl.admit` is the
one call the HTTP handler makes after authentication: impersonation, then authorization of the
request's attributes, or 403.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from aiohttp import web

from setpoint.cluster.apiserver.auth.authorization.aggregation import ClusterRoleAggregation
from setpoint.cluster.apiserver.auth.authorization.attributes import request_attributes
from setpoint.cluster.apiserver.auth.authorization.authorizers import (
    ALWAYS_ALLOW,
    MODES,
    RBAC,
    AlwaysAllowAuthorizer,
    Authorizer,
    Decision,
    PrivilegedGroupAuthorizer,
    RBACAuthorizer,
    UnionAuthorizer,
)
from setpoint.cluster.apiserver.auth.authorization.bootstrap_policy import (
    cluster_role_bindings,
    cluster_roles,
)
from setpoint.cluster.apiserver.auth.authorization.forbidden import forbidden
from setpoint.cluster.apiserver.auth.authorization.impersonation import (
    impersonate,
    wants_impersonation,
)
from setpoint.cluster.apiserver.auth.authorization.rbac_index import RBAC_GROUP, RBACIndex
from setpoint.cluster.apiserver.auth.identity import PRIVILEGED_GROUP, UserInfo
from setpoint.cluster.apiserver.auth.request_user import (
    acting_user,
    request_user,
    set_request_user,
)
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations, WriteOptions
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry

log = logging.getLogger(__name__)

#: The user agent of the bootstrap writes (kube-apiserver's own post-start hook).
BOOTSTRAP_AGENT: Final = "kube-apiserver"
#: The user authentication found, kept when impersonation replaces it (the audit log's ``user``).
AUTHENTICATED_USER_KEY: Final = web.RequestKey("setpoint.authenticated_user", UserInfo)
#: The authorizer's decision on the request (absent: ``system:masters``, allowed unasked).
DECISION_KEY: Final = web.RequestKey("setpoint.decision", Decision)
#: How long :meth:`AccessControl.settle` waits for the index (generous: shared CPUs).
SETTLE_TIMEOUT_SECONDS: Final = 30.0


class AccessControl:
    """Authorization for one API server: ``mode`` is ``"RBAC"`` (default) or ``"AlwaysAllow"``."""

    def __init__(self, operations: ObjectOperations, mode: str = RBAC) -> None:
        if mode not in MODES:
            raise ValueError(f"authorization mode: must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        self._operations = operations
        self.index = RBACIndex(operations.storage)
        self.rbac = RBACAuthorizer(self.index)
        self.authorizer: Authorizer = (
            AlwaysAllowAuthorizer()
            if mode == ALWAYS_ALLOW
            else UnionAuthorizer(PrivilegedGroupAuthorizer(), self.rbac)
        )
        self._aggregation: ClusterRoleAggregation | None = None
        self._masters_first = mode == RBAC

    async def start(self, registry: ResourceRegistry) -> None:
        """Create the missing default roles and bindings, then index and aggregate roles."""
        roles = registry.get(RBAC_GROUP, "v1", "clusterroles")
        bindings = registry.get(RBAC_GROUP, "v1", "clusterrolebindings")
        assert roles is not None and bindings is not None, "RBAC resources missing"
        options = WriteOptions(user_agent=BOOTSTRAP_AGENT)
        for resource, objects in ((roles, cluster_roles()), (bindings, cluster_role_bindings())):
            for obj in objects:
                key = resource.storage_key(None, obj["metadata"]["name"])
                if self._operations.storage.get(key) is None:
                    await self._operations.create(resource, None, obj, options)
        await self.index.start()
        self._aggregation = ClusterRoleAggregation(self.index, self._operations, roles)
        await self._aggregation.settle()

    async def settle(self) -> None:
        """Return once the index holds every stored RBAC object and aggregated roles are
        current (for tests and tools that just wrote RBAC objects)."""
        async with asyncio.timeout(SETTLE_TIMEOUT_SECONDS):
            await self.index.caught_up()
            if self._aggregation is not None:
                await self._aggregation.settle()
                await self.index.caught_up()

    async def stop(self) -> None:
        """Stop following RBAC changes."""
        if self._aggregation is not None:
            await self._aggregation.stop()
        await self.index.stop()

    def admit(self, request: web.BaseRequest, user: UserInfo | None = None) -> UserInfo:
        """Impersonate if asked, then authorize ``request``; the user it acts as, or 403.

        ``user``: the one authentication just stored on ``request`` (read from it if None).
        """
        if user is None:
            user = request_user(request)
        if wants_impersonation(request.headers):
            request[AUTHENTICATED_USER_KEY] = user
            user = impersonate(user, request.headers, self.authorizer)
            set_request_user(request, user)
        acting_user.set(user)
        if self._masters_first and PRIVILEGED_GROUP in user.groups:
            return user  # allowed whatever it asks (the first authorizer says so)
        attributes = request_attributes(user, request.method, request.path, request.query)
        decision = self.authorizer.authorize(attributes)
        request[DECISION_KEY] = decision
        if not decision.allowed:
            raise forbidden(attributes, decision.reason)
        return user
