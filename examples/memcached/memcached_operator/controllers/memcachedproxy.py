"""Reconciles MemcachedProxies: mcrouter configured from the backend Service's endpoints.

As the seed talk describes it: the proxy Deployment mounts its `config.json` from a ConfigMap
whose name is a hash of its content (`<proxy>-config-<hash>`). When the pods behind the backend
Service change, the Endpoints controller updates the Service's Endpoints, this reconcile renders
a new config, creates the ConfigMap for it and points the Deployment's volume at it, and the
Deployment controller rolls the proxy. Once the Deployment's ReplicaSet for that template exists,
the ConfigMap's owner becomes that ReplicaSet, so when the Deployment controller deletes an old
ReplicaSet (`revisionHistoryLimit`), the garbage collector deletes its ConfigMap with it.
"""

from __future__ import annotations

from typing import Any, Final

import setpoint
from memcached_operator.api.v1alpha1.memcachedproxy import MemcachedProxy
from memcached_operator.controllers import mcrouter
from memcached_operator.operator import op
from setpoint import kinds
from setpoint.api.rbac import Permission
from setpoint.cache import CachedObject
from setpoint.client import AlreadyExists
from setpoint.controller import controller_reference, owner_reference

#: On the proxy's Deployment, pods, ReplicaSets and ConfigMaps: the proxy's name.
PROXY_LABEL = "cache.example.com/memcachedproxy"
CONFIG_VOLUME = "config"
CONFIG_DIRECTORY = "/etc/mcrouter"
#: Old ReplicaSets kept by the Deployment controller, each with its ConfigMap; 0 makes old
#: ConfigMaps go as soon as a rollout ends (a proxy's config is never rolled back by hand).
REVISION_HISTORY_LIMIT = 0

READY = "Ready"


class ServiceIndex:
    """Which proxies read which Service: the reverse lookup an Endpoints event needs.

    Filled by the reconcile (the operator's initial list reconciles every proxy, so a restart
    rebuilds it); read by the Endpoints map function, which must not do I/O.
    """

    def __init__(self) -> None:
        self._service_of: dict[setpoint.Request, tuple[str, str]] = {}

    def record(self, proxy: setpoint.Request, namespace: str, name: str) -> None:
        self._service_of[proxy] = (namespace, name)

    def forget(self, proxy: setpoint.Request) -> None:
        self._service_of.pop(proxy, None)

    def proxies_of(self, namespace: str | None, name: str) -> list[setpoint.Request]:
        return [
            proxy for proxy, service in self._service_of.items() if service == (namespace, name)
        ]


SERVICES = ServiceIndex()


def endpoints_to_proxies(endpoints: CachedObject) -> list[setpoint.Request]:
    """The proxies whose backend Service these Endpoints belong to."""
    return SERVICES.proxies_of(endpoints.namespace, endpoints.name)


def labelled_to_proxy(obj: CachedObject) -> list[setpoint.Request]:
    """The proxy a labelled ReplicaSet or ConfigMap belongs to."""
    proxy = obj.labels.get(PROXY_LABEL)
    return [setpoint.Request(obj.namespace, proxy)] if proxy else []


def labels_for(proxy: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "mcrouter",
        "app.kubernetes.io/managed-by": "memcached-operator",
        PROXY_LABEL: proxy,
    }


def deployment_for(proxy: MemcachedProxy, config_map: str) -> dict[str, Any]:
    """The proxy Deployment `<proxy>-mcrouter`: one mcrouter reading the ConfigMap."""
    name = proxy.metadata.name or ""
    labels = labels_for(name)
    mcrouter_spec = proxy.spec.mcrouter
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"{name}-mcrouter", "labels": labels},
        "spec": {
            "replicas": 1,
            "revisionHistoryLimit": REVISION_HISTORY_LIMIT,
            "selector": {"matchLabels": {PROXY_LABEL: name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "mcrouter",
                            "image": mcrouter_spec.image,
                            "args": [
                                f"--config-file={CONFIG_DIRECTORY}/{mcrouter.CONFIG_KEY}",
                                f"--port={mcrouter_spec.port}",
                            ],
                            "ports": [
                                {
                                    "name": "mcrouter",
                                    "containerPort": mcrouter_spec.port,
                                    "protocol": "TCP",
                                }
                            ],
                            "volumeMounts": [
                                {"name": CONFIG_VOLUME, "mountPath": CONFIG_DIRECTORY}
                            ],
                        }
                    ],
                    # Switching this name is what rolls the proxy to a new config.
                    "volumes": [{"name": CONFIG_VOLUME, "configMap": {"name": config_map}}],
                },
            },
        },
    }


def config_map_of(template_owner: dict[str, Any]) -> str | None:
    """The config ConfigMap a Deployment's or ReplicaSet's pod template mounts."""
    template = (template_owner.get("spec") or {}).get("template") or {}
    for volume in (template.get("spec") or {}).get("volumes") or []:
        if volume.get("name") == CONFIG_VOLUME:
            name = (volume.get("configMap") or {}).get("name")
            return str(name) if name else None
    return None


def deployment_ready(deployment: dict[str, Any]) -> bool:
    """The Deployment controller reports the current template rolled out and available."""
    status = deployment.get("status") or {}
    wanted = int((deployment.get("spec") or {}).get("replicas", 1))
    return (
        int(status.get("observedGeneration") or 0)
        >= int((deployment.get("metadata") or {}).get("generation") or 0)
        and int(status.get("updatedReplicas") or 0) == wanted
        and int(status.get("availableReplicas") or 0) == wanted
        and int(status.get("replicas") or 0) == wanted
    )


async def _not_ready(
    ctx: setpoint.Context, proxy: MemcachedProxy, reason: str, message: str
) -> None:
    await ctx.patch_status(
        {"observedGeneration": proxy.metadata.generation},
        conditions=[{"type": READY, "status": "False", "reason": reason, "message": message}],
    )


GROUP: Final = "cache.example.com"
#: Exactly what this reconciler does, instead of all that `for_`, `owns` and `watches` imply.
PERMISSIONS: Final = [
    Permission(GROUP, "memcachedproxies", ["get", "list", "watch"]),
    Permission(GROUP, "memcachedproxies/status", ["get", "update", "patch"]),
    # The children's owner references block the proxy's deletion (blockOwnerDeletion).
    Permission(GROUP, "memcachedproxies/finalizers", ["update"]),
    Permission("apps", "deployments", ["get", "list", "watch", "patch"], reason="applied"),
    Permission("apps", "replicasets", ["get", "list", "watch"], reason="which mounts a config"),
    Permission("", "endpoints", ["get", "list", "watch"], reason="the backends' addresses"),
    Permission("", "services", ["get", "list", "watch"], reason="the backend Service's ports"),
    Permission(
        "",
        "configmaps",
        ["get", "list", "watch", "create", "patch", "delete"],
        reason="the mcrouter config, one ConfigMap per config",
    ),
]


@op.reconciler(
    for_=MemcachedProxy,
    owns=[kinds.Deployment],
    watches=[
        (kinds.Endpoints, endpoints_to_proxies),
        (kinds.ReplicaSet, labelled_to_proxy),
        (kinds.ConfigMap, labelled_to_proxy),
    ],
    infer_permissions=False,
    permissions=PERMISSIONS,
)
async def reconcile_memcachedproxy(ctx: setpoint.Context, request: setpoint.Request) -> None:
    proxy: MemcachedProxy | None = await ctx.get()
    if proxy is None:
        SERVICES.forget(request)
        return  # its Deployment, ReplicaSets and ConfigMaps go with it (garbage collection)
    if proxy.metadata.deletion_timestamp is not None:
        return
    name = request.name
    rules = proxy.spec.rules
    service_namespace = rules.service.namespace or request.namespace or ""
    SERVICES.record(request, service_namespace, rules.service.name)

    service = await ctx.get(kinds.Service, rules.service.name, namespace=service_namespace)
    if service is None:
        await _not_ready(
            ctx,
            proxy,
            "ServiceNotFound",
            f"Service {service_namespace}/{rules.service.name} does not exist",
        )
        return  # its Endpoints' creation wakes this reconcile
    try:
        port = mcrouter.service_port(service, rules.service.port)
    except mcrouter.UnknownPort as error:
        await _not_ready(ctx, proxy, "PortNotFound", str(error))
        return
    endpoints = await ctx.get(kinds.Endpoints, rules.service.name, namespace=service_namespace)
    servers = mcrouter.servers(endpoints, port)
    pool = mcrouter.pool_name(service_namespace, rules.service.name, port)
    config = mcrouter.render(rules.type, pool, servers)
    config_map = mcrouter.config_map_name(name, config)

    if await ctx.get(kinds.ConfigMap, config_map) is None:
        try:
            await ctx.client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {
                        "name": config_map,
                        "namespace": request.namespace,
                        "labels": {PROXY_LABEL: name},
                        "ownerReferences": [controller_reference(proxy)],
                    },
                    "data": {mcrouter.CONFIG_KEY: config},
                }
            )
        except AlreadyExists:
            pass  # made by a reconcile whose write the cache has not seen yet: same content
        ctx.log.info("config map %s created for %d servers", config_map, len(servers))
    deployment = await ctx.apply_owned(deployment_for(proxy, config_map))
    await _hand_config_maps_to_replica_sets(ctx, proxy, deployment, config_map)

    status: dict[str, Any] = {
        "observedGeneration": proxy.metadata.generation,
        "configMap": config_map,
        "servers": servers,
    }
    deployment_name = deployment["metadata"]["name"]
    if not servers:
        condition = {
            "type": READY,
            "status": "False",
            "reason": "NoServers",
            "message": f"Service {service_namespace}/{rules.service.name} has no ready endpoints",
        }
    elif deployment_ready(deployment):
        condition = {
            "type": READY,
            "status": "True",
            "reason": "Available",
            "message": (
                f"Deployment {deployment_name} serves config map {config_map} "
                f"({len(servers)} servers)"
            ),
        }
    else:
        condition = {
            "type": READY,
            "status": "False",
            "reason": "RollingOut",
            "message": f"Deployment {deployment_name} is rolling out config map {config_map}",
        }
    await ctx.patch_status(status, conditions=[condition])


async def _hand_config_maps_to_replica_sets(
    ctx: setpoint.Context, proxy: MemcachedProxy, deployment: dict[str, Any], current: str
) -> None:
    """Make each config ConfigMap owned by the ReplicaSet whose pods mount it.

    A ConfigMap no ReplicaSet mounts stays owned by the proxy while it is the current one (its
    ReplicaSet is coming); a superseded one that never got a ReplicaSet (the endpoints changed
    again first) is deleted once the Deployment controller has seen the current template.
    """
    selector = {PROXY_LABEL: proxy.metadata.name}
    deployment_uid = deployment["metadata"]["uid"]
    replica_sets = [
        rs
        for rs in await ctx.list(kinds.ReplicaSet, label_selector=selector)
        if any(
            ref.get("uid") == deployment_uid and ref.get("controller")
            for ref in rs["metadata"].get("ownerReferences") or []
        )
    ]
    settled = int((deployment.get("status") or {}).get("observedGeneration") or 0) >= int(
        deployment["metadata"].get("generation") or 0
    )
    for config_map in await ctx.list(kinds.ConfigMap, label_selector=selector):
        config_name = config_map["metadata"]["name"]
        users = [rs for rs in replica_sets if config_map_of(rs) == config_name]
        if users:
            owners = [owner_reference(rs) for rs in users]
            if config_map["metadata"].get("ownerReferences") != owners:
                await ctx.client.patch(
                    config_map,
                    {
                        "metadata": {
                            "ownerReferences": owners,
                            "resourceVersion": config_map["metadata"]["resourceVersion"],
                        }
                    },
                )
        elif config_name != current and settled:
            owned_by_proxy = any(
                ref.get("uid") == proxy.metadata.uid
                for ref in config_map["metadata"].get("ownerReferences") or []
            )
            if owned_by_proxy:
                await ctx.client.delete(config_map, missing_ok=True)
