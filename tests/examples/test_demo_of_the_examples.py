"""``make demo ARGS=--once``: every example operator, in one process, converges its samples on
a local cluster with ``--run-pods``, an invalid object is refused by an example's webhook, and
a sample written in one version is read in another through the operator's conversion webhook."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.examples.projects import EXAMPLES, example_projects

pytestmark = pytest.mark.slow


def test_the_demo_converges_every_example() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "setpoint", "demo", str(EXAMPLES), "--once", "--timeout", "240"],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "everything converged" in done.stderr
    # The CronJob example's validating webhook refuses its demo/denied-*.yaml.
    assert (
        '  refused, 422 Invalid: admission webhook "vcronjob-v1.kb.io" denied the request: '
        'CronJob.batch.tutorial.kubebuilder.io "cronjob-bad-schedule" is invalid: '
        'spec.schedule: Invalid value: "*/1 * * *": expected exactly 5 fields, found 4: '
        "[*/1 * * *]"
    ) in done.stdout.splitlines()
    # The v1 sample read as v2 (its schedule a string in v1, fields in v2), and back.
    said = done.stderr
    assert (
        "read CronJob/cronjob-sample (written as v1) as v2, converted by its operator: "
        'spec {"schedule":{"minute":"*/1"}}'
    ) in said, said
    assert (
        "read CronJob/cronjob-sample-v2 (written as v2) as v1, converted by its operator: "
        'spec {"schedule":"*/1 * * * *"}'
    ) in said
    converged = [line for line in done.stdout.splitlines() if " ✓ " in line]
    # One sample per kind of each example, at least; each reported converged.
    assert len(converged) >= len(example_projects())
