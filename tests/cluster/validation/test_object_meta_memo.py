"""Metadata validation answers the same whatever its memos of good names and values hold."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.validation import object_meta
from setpoint.cluster.apiserver.validation.object_meta import validate_object_meta

# Good and bad label keys and values, strings and not.
_KEYS = st.sampled_from(["app", "tier", "example.com/x", "-bad", "a" * 64, "Good_1", "", "x/"])
_VALUES = st.sampled_from(["web", "", "v1.2", "-bad", "b" * 64, "ok_1"]) | st.sampled_from(
    [1, None, True, ["web"], {"a": "b"}]
)
_LABELS = st.one_of(
    st.none(), st.dictionaries(_KEYS, _VALUES, max_size=4), st.sampled_from(["app=web", 3])
)


def _answer(labels: Any) -> list[tuple[str, str, str]]:
    metadata: dict[str, Any] = {"name": "n", "namespace": "default"}
    if labels is not None:
        metadata["labels"] = labels
    errors = validate_object_meta(metadata, namespaced=True, name_rule="subdomain")
    return [(e.type, e.field, str(e.detail)) for e in errors]


@settings(max_examples=200, deadline=None)
@given(st.lists(_LABELS, min_size=1, max_size=6))
def test_labels_checked_from_known_good_strings_give_the_errors_of_a_fresh_check(
    sequence: list[Any],
) -> None:
    """Label maps validated one after another (so that their keys and values are remembered
    as good in between) give each the errors it gives when nothing is remembered."""
    fresh_answers = []
    for labels in sequence:
        object_meta._qualified_name_problems._valid.clear()
        object_meta._label_value_problems._valid.clear()
        fresh_answers.append(_answer(labels))
    for labels, fresh in zip(sequence, fresh_answers, strict=True):
        assert _answer(labels) == fresh
        assert _answer(labels) == fresh  # the second time, everything good is remembered
