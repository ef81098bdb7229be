"""One Go-duration parser: the CLI clock, Ansible watches, composite hooks and CronJob
``@every`` read a duration alike (each with the error message of its own context)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from setpoint.ansible.watches import parse_go_duration as ansible_duration
from setpoint.api.go_durations import parse_go_duration
from setpoint.cluster.controllers.cronjob.cron_schedule import EverySchedule, parse_schedule
from setpoint.composite.hook_wire import parse_duration as hook_duration

_PART = st.tuples(
    st.one_of(
        st.integers(0, 999).map(str),
        st.tuples(st.integers(0, 99), st.integers(0, 99)).map(lambda p: f"{p[0]}.{p[1]}"),
    ),
    st.sampled_from(["ns", "us", "µs", "μs", "ms", "s", "m", "h"]),
).map("".join)
_DURATIONS = st.lists(_PART, min_size=1, max_size=4).map("".join)


@given(_DURATIONS)
def test_every_reader_of_durations_agrees(text: str) -> None:
    seconds = parse_go_duration(text)

    assert ansible_duration(text) == seconds
    assert hook_duration(text, field_name="t") == seconds
    schedule = parse_schedule(f"@every {text}")
    assert isinstance(schedule, EverySchedule) and schedule.seconds == seconds


@pytest.mark.parametrize("text", ["soon", "10", "1d", "h1", "1.5.5s"])
def test_each_refuses_in_its_own_words(text: str) -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        ansible_duration(text)
    with pytest.raises(ValueError, match=f"t: invalid duration '{text}'"):
        hook_duration(text, field_name="t")
    with pytest.raises(ValueError, match=f'time: invalid duration "{text}"'):
        parse_schedule(f"@every {text}")
