"""The CronJob webhooks of kubebuilder's tutorial: defaulting and validation of v1.

The **defaulter** fills in what the user left out: ``concurrencyPolicy: Allow``, ``suspend:
false``, ``successfulJobsHistoryLimit: 3``, ``failedJobsHistoryLimit: 1``. The patch the API
server gets holds exactly those fields (setpoint's defaulting is lossless).

The **validator** checks what the CRD schema cannot: the schedule parses as cron, and the name
leaves room for the Jobs' ``-<unix time>`` suffix (at most 52 characters). A refusal is the
tutorial's ``apierrors.NewInvalid`` (:meth:`Denied.invalid`): 422, reason ``Invalid``, the
message ``CronJob.batch.tutorial.kubebuilder.io "<name>" is invalid: <field>: Invalid value:
...`` and one cause per field. The API server prefixes the message with ``admission webhook
"vcronjob-v1.kb.io" denied the request:`` and keeps the causes, from which kubectl prints
``The CronJob "<name>" is invalid: spec.schedule: Invalid value: ...``.
"""

from __future__ import annotations

from typing import Final

from cronjob_operator.api.v1.cronjob import GROUP, CronJob
from cronjob_operator.operator import op
from cronjob_operator.schedule import schedule_error
from setpoint.api.field_errors import FieldError, invalid
from setpoint.webhook import Denied

#: The defaults, as the tutorial's CronJobCustomDefaulter is configured.
DEFAULT_CONCURRENCY_POLICY: Final = "Allow"
DEFAULT_SUSPEND: Final = False
DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT: Final = 3
DEFAULT_FAILED_JOBS_HISTORY_LIMIT: Final = 1
#: A Job name is at most 63 characters (a DNS-1035 label) and the controller appends an
#: 11-character ``-<unix time>`` to the CronJob's name.
MAX_NAME_LENGTH: Final = 63 - 11


@op.defaulter(CronJob)
def default_cronjob(cronjob: CronJob) -> None:
    """Set the defaults of the fields the user left out."""
    spec = cronjob.spec
    if not spec.concurrency_policy:
        spec.concurrency_policy = DEFAULT_CONCURRENCY_POLICY
    if spec.suspend is None:
        spec.suspend = DEFAULT_SUSPEND
    if spec.successful_jobs_history_limit is None:
        spec.successful_jobs_history_limit = DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT
    if spec.failed_jobs_history_limit is None:
        spec.failed_jobs_history_limit = DEFAULT_FAILED_JOBS_HISTORY_LIMIT


def cronjob_errors(cronjob: CronJob) -> list[FieldError]:
    """What is wrong with ``cronjob`` beyond its schema: the name length, the schedule."""
    errors: list[FieldError] = []
    name = cronjob.metadata.name or ""
    if len(name) > MAX_NAME_LENGTH:
        errors.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    problem = schedule_error(cronjob.spec.schedule)
    if problem is not None:
        errors.append(invalid("spec.schedule", cronjob.spec.schedule, problem))
    return errors


def validate_cronjob(cronjob: CronJob) -> None:
    """Raise the tutorial's ``Invalid`` refusal when :func:`cronjob_errors` finds anything."""
    errors = cronjob_errors(cronjob)
    if errors:
        raise Denied.invalid("CronJob", cronjob.metadata.name or "", errors, group=GROUP)


@op.validator(CronJob)
class CronJobValidator:
    """Creates and updates must pass :func:`validate_cronjob`; deletes are not checked."""

    def validate_create(self, cronjob: CronJob) -> None:
        validate_cronjob(cronjob)

    def validate_update(self, old: CronJob, new: CronJob) -> None:
        validate_cronjob(new)
