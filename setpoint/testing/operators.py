"""Running an operator inside a test, and waiting for what it does.

::

    async def test_foo_creates_its_deployment(client, namespace, kubeconfig):
        async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
            await client.create(foo("example", replicas=1, namespace=namespace))
            deployment = await wait_for(
                lambda: client.get(*kinds.Deployment, "example-deploy", namespace=namespace)
            )
            await wait_for_event(client, foo_obj, reason="Synced")

``run_operator`` starts a fresh copy of the operator each time (a manager runs once), so the
same module-level ``op`` serves every test. ``wait_for`` polls any function (sync or async,
returning an object, a list or a bool) until its result is truthy and passes ``predicate``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from setpoint.api.clock import Clock
from setpoint.api.meta import as_mapping
from setpoint.client.client import Client
from setpoint.client.crd_install import create_or_replace_crd
from setpoint.client.errors import NotFound
from setpoint.manager.manager import Manager
from setpoint.manager.operator import Operator
from setpoint.manager.target import find_managers
from setpoint.testing.summaries import summarize

__all__ = [
    "DEFAULT_WAIT_TIMEOUT",
    "WaitTimeout",
    "install_crds",
    "operators_run_as",
    "run_operator",
    "wait_for",
    "wait_for_event",
]

#: How long ``wait_for`` waits by default: an upper bound that turns a hang into a failure.
DEFAULT_WAIT_TIMEOUT = 10.0
POLL_INTERVAL = 0.05


#: The options that say how an operator's webhooks are served (``run_operator`` picks them
#: when none is given).
_WEBHOOK_OPTIONS = frozenset({"webhook_port", "webhook_host", "webhook_cert_dir", "webhooks_local"})

#: The ServiceAccount ``run_operator`` runs operators as when not told (see operators_run_as).
_run_as: ContextVar[str | None] = ContextVar("setpoint_run_operator_as", default=None)


@contextmanager
def operators_run_as(service_account: str) -> Iterator[None]:
    """Within the block, ``run_operator`` runs every operator as ``service_account`` of the
    operator's namespace unless told otherwise: a test written for the admin then runs the
    operator under its own RBAC, unchanged (see ``install_rbac``)."""
    token = _run_as.set(service_account)
    try:
        yield
    finally:
        _run_as.reset(token)


class WaitTimeout(AssertionError):
    """``wait_for`` gave up; the message says what was awaited and, in one short line, what
    was seen last (an object's kind, name and status; never its managedFields)."""


@asynccontextmanager
async def run_operator(
    target: Operator | str,
    *,
    kubeconfig: str | Path,
    namespace: str | None = None,
    clock: Clock | None = None,
    service_account: str | None = None,
    **options: Any,
) -> AsyncIterator[Operator]:
    """Run a fresh copy of ``target`` (an ``Operator``, or a ``setpoint run`` TARGET string
    naming one) against ``kubeconfig`` for the ``async with`` block; ``namespace`` limits its
    cache (and so what it reconciles) to one namespace; ``clock`` (e.g. a ``FakeClock``)
    drives its delays and ``ctx.now()``. ``service_account`` (a name in ``namespace``) runs
    it as ``system:serviceaccount:<namespace>:<name>``, with that ServiceAccount's RBAC only
    (the kubeconfig's admin impersonates it; see ``install_rbac``). Other ``options`` are
    ``Operator``/``Manager`` ones (``impersonate_user=`` acts as any user). An operator with
    webhooks and none of the ``webhook_*`` options (nor a ServiceAccount) serves them as
    ``setpoint dev`` does: ``webhook_port=0, webhooks_local=True``.
    """
    if isinstance(target, str):
        found = [m for m in find_managers(target) if isinstance(m, Operator)]
        if len(found) != 1:
            raise ValueError(
                f"run_operator: {target!r} defines {len(found)} operators; name one with "
                "module:attribute"
            )
        target = found[0]
    if not isinstance(target, Operator):
        raise TypeError(f"run_operator: expected an Operator, got {type(target).__name__}")
    if service_account is None and "impersonate_user" not in options:
        service_account = _run_as.get()
    if service_account is not None:
        if namespace is None:
            raise ValueError("run_operator: service_account= needs namespace= (where it lives)")
        options["impersonate_user"] = f"system:serviceaccount:{namespace}:{service_account}"
    if target.serves_webhooks and service_account is None and not options.keys() & _WEBHOOK_OPTIONS:
        # Its webhooks served on a free port and registered against the cluster (removed on
        # exit), as `setpoint dev` does: no certificate to provide, no port to collide on.
        options.update(webhook_port=0, webhooks_local=True)
    if namespace is not None:
        options.setdefault("namespaces", [namespace])
    if clock is not None:
        options["clock"] = clock
    operator = target.fresh(kubeconfig=str(kubeconfig), **options)
    async with operator:
        yield operator


async def wait_for(
    probe: Callable[[], Any],
    predicate: Callable[[Any], bool] | None = None,
    *,
    timeout: float = DEFAULT_WAIT_TIMEOUT,  # noqa: ASYNC109 - an upper bound, then fail
    what: str = "",
) -> Any:
    """Call ``probe`` until its result is truthy (and passes ``predicate``); return it.

    ``probe`` may be sync or async; a ``NotFound`` it raises counts as "not yet". Raises
    :class:`WaitTimeout` after ``timeout`` seconds, naming ``what`` and the last result.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = None
    while True:
        try:
            result = probe()
            if inspect.isawaitable(result):
                result = await result
            last = result
            if result and (predicate is None or predicate(result)):
                return result
        except NotFound as error:
            last = error
        if loop.time() >= deadline:
            label = what or getattr(probe, "__qualname__", repr(probe))
            raise WaitTimeout(
                f"timed out after {timeout:g}s waiting for {label}; last seen: {summarize(last)}"
            )
        await asyncio.sleep(POLL_INTERVAL)


async def wait_for_event(
    client: Client,
    regarding: Mapping[str, Any] | BaseModel,
    *,
    reason: str | None = None,
    type: str | None = None,
    timeout: float = DEFAULT_WAIT_TIMEOUT,  # noqa: ASYNC109 - an upper bound, then fail
) -> dict[str, Any]:
    """Wait for an Event about ``regarding`` (matched by uid, else kind and name) with this
    ``reason`` and ``type`` (``Normal``/``Warning``); returns it (events.k8s.io/v1 form)."""
    obj = as_mapping(regarding)
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or "default"

    def about(event: Mapping[str, Any]) -> bool:
        ref = event.get("regarding") or event.get("involvedObject") or {}
        if metadata.get("uid") and ref.get("uid"):
            same = ref.get("uid") == metadata.get("uid")
        else:
            same = (ref.get("kind"), ref.get("name")) == (obj.get("kind"), metadata.get("name"))
        return (
            same
            and (reason is None or event.get("reason") == reason)
            and (type is None or event.get("type") == type)
        )

    async def matching() -> list[dict[str, Any]]:
        events = await client.list("events.k8s.io/v1", "Event", namespace=namespace)
        return [event for event in events if about(event)]

    label = f"an Event about {obj.get('kind')} {metadata.get('name')} (reason={reason})"
    found: list[dict[str, Any]] = await wait_for(matching, timeout=timeout, what=label)
    return found[-1]


def _manifests_of(item: Any) -> list[dict[str, Any]]:
    if isinstance(item, Mapping):
        return [dict(item)]
    if isinstance(item, str | Path):
        path = Path(item)
        files = (
            sorted(path.glob("*.yaml")) + sorted(path.glob("*.yml")) if path.is_dir() else [path]
        )
        documents: list[dict[str, Any]] = []
        for file in files:
            documents.extend(doc for doc in yaml.safe_load_all(file.read_text()) if doc)
        return documents
    if isinstance(item, type) and issubclass(item, BaseModel):
        for name in ("crd_manifest", "crd", "to_crd"):
            build = getattr(item, name, None)
            if callable(build):
                return [dict(as_mapping(build()))]
        raise TypeError(
            f"install_crds: model {item.__name__} cannot make its CRD manifest (no "
            "crd_manifest()); pass the manifest or its YAML file instead"
        )
    raise TypeError(f"install_crds: expected a manifest, a YAML path or a model, got {item!r}")


async def install_crds(
    client: Client,
    *items: Any,
    timeout: float = DEFAULT_WAIT_TIMEOUT,  # noqa: ASYNC109 - an upper bound, then fail
) -> list[dict[str, Any]]:
    """Create CRDs from manifests, YAML files/directories or CRD models (or update them to
    these manifests when they exist: tests sharing a cluster may have installed another
    version), then wait until each is Established. Returns the CRDs as the server has them."""
    installed: list[dict[str, Any]] = []
    for item in items:
        for manifest in _manifests_of(item):
            if manifest.get("kind") != "CustomResourceDefinition":
                continue
            name = manifest["metadata"]["name"]
            await create_or_replace_crd(client, manifest)

            async def established(crd_name: str = name) -> dict[str, Any] | None:
                crd = await client.get(
                    "apiextensions.k8s.io/v1", "CustomResourceDefinition", crd_name
                )
                conditions = (crd.get("status") or {}).get("conditions") or []
                ok = any(
                    c.get("type") == "Established" and c.get("status") == "True" for c in conditions
                )
                return crd if ok else None

            installed.append(await wait_for(established, timeout=timeout, what=f"CRD {name}"))
    return installed


def managers_of(target: str) -> list[Manager]:
    """The managers a ``setpoint run`` TARGET defines (for tests of several operators)."""
    return find_managers(target)
