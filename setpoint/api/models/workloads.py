"""Workloads: Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from setpoint.api.models.base import (
    Condition,
    KubeModel,
    KubeObject,
    LabelSelector,
    Metadata,
    ObjectMeta,
    ObjectReference,
)
from setpoint.api.models.pods import PodTemplateSpec

__all__ = [
    "CronJob",
    "CronJobSpec",
    "CronJobStatus",
    "DaemonSet",
    "DaemonSetSpec",
    "DaemonSetStatus",
    "Deployment",
    "DeploymentSpec",
    "DeploymentStatus",
    "DeploymentStrategy",
    "Job",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
    "ReplicaSet",
    "ReplicaSetSpec",
    "ReplicaSetStatus",
    "RollingUpdateDeployment",
    "StatefulSet",
    "StatefulSetSpec",
    "StatefulSetStatus",
]


class RollingUpdateDeployment(KubeModel):
    """How far a rolling update may go below and above the desired replicas (a count or a
    percentage such as ``"25%"``)."""

    max_unavailable: int | str | None = None
    max_surge: int | str | None = None


class DeploymentStrategy(KubeModel):
    """``RollingUpdate`` (the default) or ``Recreate``."""

    type: str | None = None
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(KubeModel):
    """How many pods of which template a Deployment keeps, and how it rolls them."""

    replicas: int | None = None
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    strategy: DeploymentStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None
    progress_deadline_seconds: int | None = None
    paused: bool | None = None


class DeploymentStatus(KubeModel):
    """What the deployment controller observed."""

    observed_generation: int | None = None
    replicas: int | None = None
    updated_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    unavailable_replicas: int | None = None
    terminating_replicas: int | None = None
    collision_count: int | None = None
    conditions: list[Condition] = Field(default_factory=list)


class Deployment(KubeObject, api_version="apps/v1", kind="Deployment"):
    """A Deployment: replicated pods, rolled out through ReplicaSets."""

    spec: DeploymentSpec = Field(default_factory=DeploymentSpec)
    status: DeploymentStatus = Field(default_factory=DeploymentStatus)


class ReplicaSetSpec(KubeModel):
    """How many pods of which template a ReplicaSet keeps."""

    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class ReplicaSetStatus(KubeModel):
    """What the replicaset controller observed."""

    replicas: int | None = None
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    terminating_replicas: int | None = None
    observed_generation: int | None = None
    conditions: list[Condition] = Field(default_factory=list)


class ReplicaSet(KubeObject, api_version="apps/v1", kind="ReplicaSet"):
    """A ReplicaSet: a number of identical pods."""

    spec: ReplicaSetSpec = Field(default_factory=ReplicaSetSpec)
    status: ReplicaSetStatus = Field(default_factory=ReplicaSetStatus)


class StatefulSetSpec(KubeModel):
    """Pods with stable names (``NAME-0``, ``NAME-1`` ...) and their volume claims."""

    replicas: int | None = None
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    service_name: str | None = None
    pod_management_policy: str | None = None
    update_strategy: dict[str, Any] | None = None
    volume_claim_templates: list[dict[str, Any]] = Field(default_factory=list)
    revision_history_limit: int | None = None
    min_ready_seconds: int | None = None
    persistent_volume_claim_retention_policy: dict[str, str] | None = None
    ordinals: dict[str, int] | None = None


class StatefulSetStatus(KubeModel):
    """What the statefulset controller observed."""

    observed_generation: int | None = None
    replicas: int | None = None
    ready_replicas: int | None = None
    current_replicas: int | None = None
    updated_replicas: int | None = None
    available_replicas: int | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: int | None = None
    conditions: list[Condition] = Field(default_factory=list)


class StatefulSet(KubeObject, api_version="apps/v1", kind="StatefulSet"):
    """A StatefulSet: ordered pods with stable identities and storage."""

    spec: StatefulSetSpec = Field(default_factory=StatefulSetSpec)
    status: StatefulSetStatus = Field(default_factory=StatefulSetStatus)


class DaemonSetSpec(KubeModel):
    """One pod of a template on every (selected) node."""

    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    update_strategy: dict[str, Any] | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None


class DaemonSetStatus(KubeModel):
    """What the daemonset controller observed."""

    current_number_scheduled: int | None = None
    number_misscheduled: int | None = None
    desired_number_scheduled: int | None = None
    number_ready: int | None = None
    observed_generation: int | None = None
    updated_number_scheduled: int | None = None
    number_available: int | None = None
    number_unavailable: int | None = None
    collision_count: int | None = None
    conditions: list[Condition] = Field(default_factory=list)


class DaemonSet(KubeObject, api_version="apps/v1", kind="DaemonSet"):
    """A DaemonSet: a pod per node."""

    spec: DaemonSetSpec = Field(default_factory=DaemonSetSpec)
    status: DaemonSetStatus = Field(default_factory=DaemonSetStatus)


class JobSpec(KubeModel):
    """Pods that run to completion: how many, how parallel, how many retries."""

    parallelism: int | None = None
    completions: int | None = None
    completion_mode: str | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    ttl_seconds_after_finished: int | None = None
    suspend: bool | None = None
    pod_failure_policy: dict[str, Any] | None = None
    pod_replacement_policy: str | None = None


class JobStatus(KubeModel):
    """What the job controller observed (``Complete`` / ``Failed`` conditions)."""

    conditions: list[Condition] = Field(default_factory=list)
    start_time: str | None = None
    completion_time: str | None = None
    active: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    terminating: int | None = None
    ready: int | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    uncounted_terminated_pods: dict[str, list[str]] | None = None


class Job(KubeObject, api_version="batch/v1", kind="Job"):
    """A Job: pods that run to completion."""

    spec: JobSpec = Field(default_factory=JobSpec)
    status: JobStatus = Field(default_factory=JobStatus)


class JobTemplateSpec(KubeModel):
    """The Jobs a CronJob makes."""

    metadata: Metadata = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)


class CronJobSpec(KubeModel):
    """When (a cron ``schedule``) and which Job to run."""

    schedule: str | None = None
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    concurrency_policy: str | None = None
    suspend: bool | None = None
    job_template: JobTemplateSpec = Field(default_factory=JobTemplateSpec)
    successful_jobs_history_limit: int | None = None
    failed_jobs_history_limit: int | None = None


class CronJobStatus(KubeModel):
    """The Jobs running now and the last schedule times."""

    active: list[ObjectReference] = Field(default_factory=list)
    last_schedule_time: str | None = None
    last_successful_time: str | None = None


class CronJob(KubeObject, api_version="batch/v1", kind="CronJob"):
    """A CronJob: Jobs on a schedule."""

    spec: CronJobSpec = Field(default_factory=CronJobSpec)
    status: CronJobStatus = Field(default_factory=CronJobStatus)
