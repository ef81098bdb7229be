"""ClusterRole aggregation: the rules of a role with an ``aggregationRule`` are those of the
ClusterRoles its label selectors pick (kube-controller-manager's clusterrole-aggregation
controller).

Whenever a ClusterRole changes, every aggregated role is recomputed: the selected roles are
taken in name order, each rule added once, and the role is written only when its rules
differ. Roles that aggregate aggregated roles (``admin`` picks ``edit``, which picks ``view``)
settle in a few rounds. It runs with the API server, so aggregated roles work with or without
the other controllers.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any, Final

from setpoint.api.selectors import LabelSelector, SelectorError
from setpoint.cluster.apiserver.auth.authorization.rbac_index import RBACIndex
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations, WriteOptions
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import APIError

log = logging.getLogger(__name__)

#: The field manager (and user agent) the aggregated rules are written with.
AGGREGATOR: Final = "clusterrole-aggregation-controller"
#: Rounds of recomputing before giving up on a cycle of roles that aggregate each other.
MAX_ROUNDS: Final = 10


def aggregated_rules(
    role: dict[str, Any], roles: dict[str, dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """The rules ``role``'s aggregationRule selects from ``roles`` (None: not aggregated)."""
    rule = role.get("aggregationRule")
    if not isinstance(rule, dict):
        return None
    name = (role.get("metadata") or {}).get("name")
    rules: list[dict[str, Any]] = []
    for selector_json in rule.get("clusterRoleSelectors") or []:
        try:
            selector = LabelSelector.from_dict(selector_json)
        except SelectorError:
            continue
        for other_name in sorted(roles):
            if other_name == name:
                continue
            other = roles[other_name]
            labels = (other.get("metadata") or {}).get("labels") or {}
            if not selector.matches(labels):
                continue
            for policy_rule in other.get("rules") or []:
                if policy_rule not in rules:
                    rules.append(copy.deepcopy(policy_rule))
    return rules


class ClusterRoleAggregation:
    """Keeps aggregated ClusterRoles' rules equal to what their selectors pick."""

    def __init__(
        self, index: RBACIndex, operations: ObjectOperations, cluster_roles: ServedResource
    ) -> None:
        self._index = index
        self._operations = operations
        self._resource = cluster_roles
        self._task: asyncio.Task[None] | None = None
        self._again = False
        index.on_cluster_role_change.append(self.schedule)

    def schedule(self) -> None:
        """Recompute soon (once per burst of changes)."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        try:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="clusterrole-aggregation"
            )
        except RuntimeError:  # no running loop: nothing to schedule on (tests of the index)
            return

    async def settle(self) -> None:
        """Recompute now, until nothing changes (also what the background task runs)."""
        for _ in range(MAX_ROUNDS):
            if not await self._round():
                return
        log.warning("ClusterRole aggregation did not settle after %d rounds", MAX_ROUNDS)

    async def _run(self) -> None:
        while True:
            self._again = False
            try:
                await self.settle()
            except Exception:
                log.exception("ClusterRole aggregation failed")
            if not self._again:
                return

    async def _round(self) -> bool:
        """One pass over the aggregated roles; whether any was written."""
        roles = dict(self._index.cluster_role_objects)
        # Read the stored roles, not only the index: a write of the previous round may not
        # have reached the index yet.
        for record in self._operations.storage.list(self._resource.storage_root):
            obj = decode(record.value)
            roles[(obj.get("metadata") or {}).get("name") or ""] = obj
        wrote = False
        for name in sorted(roles):
            role = roles[name]
            wanted = aggregated_rules(role, roles)
            if wanted is None or wanted == (role.get("rules") or []):
                continue
            new = copy.deepcopy(role)
            new["rules"] = wanted
            try:
                stored = self._operations.storage.get(self._resource.storage_key(None, name))
                if stored is None:
                    continue
                await self._operations.update_object(
                    self._resource,
                    stored,
                    new,
                    WriteOptions(field_manager=AGGREGATOR, user_agent=AGGREGATOR),
                )
            except APIError as error:
                log.warning("cannot aggregate ClusterRole %s: %s", name, error.message)
                continue
            roles[name] = new
            wrote = True
        return wrote

    async def stop(self) -> None:
        """Wait for a running recomputation to end."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
            self._task = None
