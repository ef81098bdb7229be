"""What each run reports as its trigger."""

from __future__ import annotations

from setpoint.ansible.triggers import Triggers
from setpoint.api.gvk import ObjectKey

KEY = ObjectKey("ns", "g1")


def test_events_are_reported_latest_first_with_a_count() -> None:
    triggers = Triggers()
    triggers.note(KEY, "Gadget ns/g1 added")
    triggers.note(KEY, "dependent Deployment ns/web changed")
    assert triggers.take(KEY) == "dependent Deployment ns/web changed (and 1 more)"
    assert triggers.take(KEY) == "resync"  # nothing noted since


def test_an_event_during_a_run_wins_over_its_retry_or_period() -> None:
    triggers = Triggers()
    triggers.take(KEY)  # a run starts
    triggers.note(KEY, "Gadget ns/g1 spec changed (generation 2)")  # an edit while it runs
    triggers.note_retry(KEY)  # the run failed
    assert triggers.take(KEY) == "Gadget ns/g1 spec changed (generation 2)"
    triggers.note_retry(KEY)
    assert triggers.take(KEY) == "retry after a failed run"


def test_an_early_requeue_is_not_the_period() -> None:
    triggers = Triggers()
    triggers.note_period(KEY, 0)
    assert triggers.take(KEY) == "reconcile period (0s)"
    triggers.note_period(KEY, 3600)
    assert triggers.take(KEY) == "retry scheduled before the last run"
