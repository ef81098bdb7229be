"""The reconcile of one watch: run its role or playbook for the CR, report in status and Events.

The steps are Operator SDK's: read the CR (gone: done); a CR being deleted without our
finalizer is left alone; add the finalizer when the watch has one; mark ``Running``; run
Ansible with the CR as extra vars and a kubeconfig pointing at the proxy; read the CR again;
after a successful finalizer run remove the finalizer; write the conditions; ask to run again
after ``reconcilePeriod`` (or the ``ansible.sdk.operatorframework.io/reconcile-period``
annotation, or what the run's ``requeue_after`` task said).

Beyond Operator SDK, each failed task becomes a ``Warning`` Event on the CR naming the task and
its message, and every run says what triggered it (the CR's event, a dependent's event, the
reconcile period, a retry) in the log and in its Event.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from setpoint.ansible.kubeconfig import Owner, write_kubeconfig
from setpoint.ansible.metrics import RECONCILES, gvk_label, record_result
from setpoint.ansible.parameters import make_parameters
from setpoint.ansible.runner import RunOutcome, RunSpec, mapping_of, run_ansible
from setpoint.ansible.status import (
    AnsibleResult,
    failed_conditions,
    running_conditions,
    succeeded_conditions,
)
from setpoint.ansible.triggers import Triggers
from setpoint.ansible.watches import Watch, parse_go_duration
from setpoint.client.errors import NotFound
from setpoint.controller.reconcile import Result

if TYPE_CHECKING:
    from setpoint.controller.reconcile import Request
    from setpoint.manager.context import Context

__all__ = [
    "FINALIZER_RETRY_SECONDS",
    "RECONCILE_PERIOD_ANNOTATION",
    "AnsibleReconciler",
    "AnsibleRunError",
]

log = logging.getLogger("setpoint.ansible")

RECONCILE_PERIOD_ANNOTATION = "ansible.sdk.operatorframework.io/reconcile-period"
VERBOSITY_ANNOTATION = "ansible.sdk.operatorframework.io/verbosity"
MAX_RUNNER_ARTIFACTS_ANNOTATION = "ansible.sdk.operatorframework.io/max-runner-artifacts"
RUN_SECONDS_KEPT = 10_000
#: Operator SDK runs a deleted CR's reconcile again after 5 s while its finalizer stays.
FINALIZER_RETRY_SECONDS = 5.0


class AnsibleRunError(RuntimeError):
    """The run failed (a task failed, or it ended without its stats); retried with backoff."""


class ProxyAddress(Protocol):
    """Where the proxy listens, once it does (see ``AnsibleOperator``)."""

    async def url(self) -> str:
        """The proxy's URL; waits until it listens."""
        ...


class AnsibleReconciler:
    """Reconciles the CRs of one watch (``reconcile(ctx, request)``, for an ``Operator``)."""

    def __init__(
        self,
        watch: Watch,
        proxy: ProxyAddress,
        *,
        artifacts_root: Path,
        triggers: Triggers,
        user_metrics: ProxyAddress | None = None,
    ) -> None:
        self.watch = watch
        self.proxy = proxy
        #: Where the ``osdk_metric`` module posts (told to runs as SETPOINT_ANSIBLE_METRICS_URL).
        self.user_metrics = user_metrics
        self.artifacts_root = artifacts_root
        self.triggers = triggers
        #: Seconds of the latest runs (the bench reads them), oldest first.
        self.run_seconds: collections.deque[float] = collections.deque(maxlen=RUN_SECONDS_KEPT)

    async def reconcile(self, ctx: Context, request: Request) -> Result | None:
        watch = self.watch
        trigger = self.triggers.take(request)
        obj = await ctx.get()
        if obj is None:
            return None
        metadata: Mapping[str, Any] = obj.get("metadata") or {}
        annotations: Mapping[str, str] = metadata.get("annotations") or {}
        period = watch.reconcile_period
        if RECONCILE_PERIOD_ANNOTATION in annotations:
            try:
                period = parse_go_duration(annotations[RECONCILE_PERIOD_ANNOTATION])
            except ValueError as error:
                message = f"annotation {RECONCILE_PERIOD_ANNOTATION}: {error}"
                record_result(watch.gvk, succeeded=False)
                if watch.manage_status:
                    await self._write_conditions(
                        ctx, lambda current: failed_conditions(current, message, None)
                    )
                raise AnsibleRunError(message) from None
        deleting = metadata.get("deletionTimestamp") is not None
        finalizer = watch.finalizer
        finalizers = list(metadata.get("finalizers") or [])
        if finalizer is None or finalizer.name not in finalizers:
            if deleting:
                ctx.log.info("resource is being deleted, skipping reconciliation")
                return None
            if finalizer is not None:
                obj = await ctx.client.patch(
                    obj,
                    {
                        "metadata": {
                            "finalizers": [*finalizers, finalizer.name],
                            "resourceVersion": metadata.get("resourceVersion"),
                        }
                    },
                )
                metadata = obj.get("metadata") or {}
        if watch.manage_status:
            await self._write_conditions(ctx, running_conditions)

        finalizer_run = deleting and finalizer is not None
        spec = self._spec(finalizer_run)
        outcome = await self._run(ctx, obj, spec, finalizer_run, trigger, annotations)

        try:
            fresh = await ctx.client.get(obj)
        except NotFound:
            return None
        fresh_metadata = fresh.get("metadata") or {}
        requeue = outcome.requeue_after if outcome.requeue_after is not None else period
        if finalizer is not None and finalizer_run and outcome.succeeded:
            remaining = [
                name for name in fresh_metadata.get("finalizers") or [] if name != finalizer.name
            ]
            with contextlib.suppress(NotFound):
                await ctx.client.patch(
                    fresh,
                    {
                        "metadata": {
                            "finalizers": remaining,
                            "resourceVersion": fresh_metadata.get("resourceVersion"),
                        }
                    },
                )
            return None
        if fresh_metadata.get("deletionTimestamp") is not None and finalizer is not None:
            requeue = FINALIZER_RETRY_SECONDS
        if watch.manage_status and outcome.result is not None:
            record_result(watch.gvk, outcome.succeeded)
            if outcome.succeeded:
                result = outcome.result
                await self._write_conditions(
                    ctx, lambda current: succeeded_conditions(current, result)
                )
            else:
                message = outcome.failure_message()
                await self._write_conditions(
                    ctx, lambda current: failed_conditions(current, message, outcome.result)
                )
        if outcome.result is None:
            self.triggers.note_retry(request)
            raise AnsibleRunError(
                f"the run ended without its stats (ansible-runner status {outcome.status!r}); "
                f"see {outcome.stdout_path}"
            )
        if outcome.failures:
            self.triggers.note_retry(request)
            raise AnsibleRunError(
                f"{len(outcome.failures)} task(s) failed: "
                + "; ".join(f"{failure.name}: {failure.message}" for failure in outcome.failures)
            )
        if requeue > 0:
            self.triggers.note_period(request, requeue)
            return Result(requeue_after=requeue)
        return None

    def _spec(self, finalizer_run: bool) -> RunSpec:
        watch = self.watch
        finalizer = watch.finalizer
        if finalizer_run and finalizer is not None and (finalizer.playbook or finalizer.role):
            return RunSpec(playbook=finalizer.playbook, role=finalizer.role)
        return RunSpec(playbook=watch.playbook, role=watch.role)

    async def _run(
        self,
        ctx: Context,
        obj: Mapping[str, Any],
        spec: RunSpec,
        finalizer_run: bool,
        trigger: str,
        annotations: Mapping[str, str],
    ) -> RunOutcome:
        watch = self.watch
        gvk = watch.gvk
        metadata = obj.get("metadata") or {}
        namespace = metadata.get("namespace") or ""
        name = metadata.get("name") or ""
        owner = Owner(gvk.api_version, gvk.kind, name, str(metadata.get("uid") or ""), namespace)
        extravars = make_parameters(
            obj,
            group=gvk.group,
            kind=gvk.kind,
            snake_case=watch.snake_case_parameters,
            unsafe=watch.mark_unsafe,
            variables=watch.vars,
            finalizer_variables=watch.finalizer.vars if finalizer_run and watch.finalizer else None,
        )
        verbosity = _annotation_int(annotations, VERBOSITY_ANNOTATION, watch.ansible_verbosity)
        artifacts = _annotation_int(
            annotations, MAX_RUNNER_ARTIFACTS_ANNOTATION, watch.max_runner_artifacts
        )
        directory = self.artifacts_root.joinpath(
            gvk.group or "core", gvk.version, gvk.kind, namespace or "_cluster", name
        )
        ident = secrets.token_hex(8)
        what = (
            "finalizer " + (spec.playbook or spec.role or "")
            if finalizer_run
            else (spec.playbook or spec.role or "")
        )
        ctx.log.info(
            "ansible run %s started (trigger: %s): %s",
            ident,
            trigger,
            what,
            extra={"job": ident, "trigger": trigger},
        )
        proxy_url = await self.proxy.url()
        environment = {}
        if self.user_metrics is not None:
            environment["SETPOINT_ANSIBLE_METRICS_URL"] = await self.user_metrics.url()
        kubeconfig = await asyncio.to_thread(_write_kubeconfig, owner, proxy_url, directory)
        try:
            outcome = await run_ansible(
                spec,
                directory=directory,
                ident=ident,
                extravars=extravars,
                kubeconfig=kubeconfig,
                verbosity=verbosity,
                rotate_artifacts=artifacts,
                on_event=_task_logger(ctx.log, ident),
                environment=environment,
            )
        finally:
            kubeconfig.unlink(missing_ok=True)
        self.run_seconds.append(outcome.seconds)
        RECONCILES.labels(gvk_label(gvk)).observe(outcome.seconds)
        counts = _counts(outcome.result)
        if outcome.succeeded:
            ctx.log.info(
                "ansible run %s succeeded in %.2fs (trigger: %s): %s",
                ident,
                outcome.seconds,
                trigger,
                counts,
                extra={"job": ident, "trigger": trigger},
            )
            ctx.recorder.normal(
                obj, "AnsibleRunSucceeded", f"Ansible run succeeded ({counts}); trigger: {trigger}"
            )
        else:
            for failure in outcome.failures:
                ctx.recorder.warning(
                    obj,
                    "AnsibleTaskFailed",
                    f"task {failure.name!r} failed: {failure.message}; trigger: {trigger}",
                )
            if outcome.result is None:
                ctx.recorder.warning(
                    obj,
                    "AnsibleRunFailed",
                    f"Ansible run ended without its stats (status {outcome.status}); "
                    f"trigger: {trigger}",
                )
            ctx.log.error(
                "ansible run %s failed in %.2fs (trigger: %s): %s; output: %s",
                ident,
                outcome.seconds,
                trigger,
                "; ".join(f"{f.name}: {f.message}" for f in outcome.failures) or outcome.status,
                outcome.stdout_path,
                extra={"job": ident, "trigger": trigger},
            )
        return outcome

    async def _write_conditions(self, ctx: Context, make: Any) -> None:
        """Read the CR from the API server and write its conditions (status subresource)."""
        try:
            current = await ctx.client.get(
                ctx.api_version, ctx.kind, ctx.name, namespace=ctx.namespace
            )
        except NotFound:
            return
        status = mapping_of(current.get("status"))
        conditions = make(status.get("conditions"))
        if conditions == status.get("conditions"):
            return
        with contextlib.suppress(NotFound):
            await ctx.client.patch(
                ctx.api_version,
                ctx.kind,
                ctx.name,
                {"status": {"conditions": conditions}},
                namespace=ctx.namespace,
                subresource="status",
            )


def _write_kubeconfig(owner: Owner, proxy_url: str, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return write_kubeconfig(owner, proxy_url, directory / "kubeconfig")


def _counts(result: AnsibleResult | None) -> str:
    if result is None:
        return "no stats"
    return (
        f"ok={result.ok} changed={result.changed} failures={result.failures} "
        f"skipped={result.skipped}"
    )


def _annotation_int(annotations: Mapping[str, str], name: str, default: int) -> int:
    text = annotations.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        log.warning("annotation %s: %r is not an integer; using %d", name, text, default)
        return default


def _task_logger(logger: logging.Logger, ident: str) -> Any:
    def on_event(event: Mapping[str, Any]) -> None:
        kind = event.get("event")
        data = event.get("event_data") or {}
        if kind == "playbook_on_task_start":
            logger.debug(
                "[playbook task start] %s",
                data.get("name") or data.get("task"),
                extra={"job": ident},
            )
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            result = mapping_of(data.get("res"))
            logger.error(
                "[playbook task failed] %s: %s",
                data.get("task"),
                result.get("msg") or "unknown playbook failure",
                extra={"job": ident},
            )

    return on_event
