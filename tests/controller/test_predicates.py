"""Predicates decide which cache events reach the queue."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given

from setpoint.api.selectors import LabelSelector, SelectorError
from setpoint.cache.cached_object import CachedObject
from setpoint.controller.predicates import (
    AnnotationsChanged,
    FunctionPredicate,
    GenerationChanged,
    LabelsChanged,
    LabelSelectorPredicate,
    Predicate,
    ResourceVersionChanged,
    and_,
    not_,
    or_,
    predicate_for,
)

from .objects import cached


def test_generation_changed_passes_spec_changes_only() -> None:
    predicate = GenerationChanged()
    old = cached(generation=1, resource_version="1")
    status_write = cached(generation=1, resource_version="2")
    spec_change = cached(generation=2, resource_version="3")
    assert not predicate.update(old, status_write)
    assert predicate.update(old, spec_change)
    assert predicate.create(old) and predicate.delete(old) and predicate.generic(old)


def test_resource_version_changed() -> None:
    predicate = ResourceVersionChanged()
    assert not predicate.update(cached(resource_version="5"), cached(resource_version="5"))
    assert predicate.update(cached(resource_version="5"), cached(resource_version="6"))


def test_labels_and_annotations_changed() -> None:
    plain = cached(labels={"a": "1"}, annotations={"x": "1"})
    relabelled = cached(labels={"a": "2"}, annotations={"x": "1"})
    reannotated = cached(labels={"a": "1"}, annotations={"x": "2"})
    assert LabelsChanged().update(plain, relabelled)
    assert not LabelsChanged().update(plain, reannotated)
    assert AnnotationsChanged().update(plain, reannotated)
    assert not AnnotationsChanged().update(plain, relabelled)
    assert LabelsChanged().update(cached(), cached(labels={"new": "x"}))


def test_label_selector_predicate_from_dict_string_and_selector() -> None:
    web = cached(labels={"app": "web", "tier": "front"})
    db = cached(labels={"app": "db"})
    from_dict = LabelSelectorPredicate(
        {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]}
    )
    from_parsed = LabelSelectorPredicate(LabelSelector.parse("app in (web),tier"))
    for predicate in (from_dict, from_parsed):
        assert predicate.create(web) and not predicate.create(db)
        assert predicate.update(db, web) and not predicate.update(web, db)  # the new object counts
        assert predicate.delete(web) and not predicate.generic(db)


def test_label_selector_predicate_rejects_bad_selectors_naming_the_field() -> None:
    with pytest.raises(SelectorError, match="matchExpressions"):
        LabelSelectorPredicate({"matchExpressions": "nope"})
    with pytest.raises(TypeError, match="LabelSelectorPredicate"):
        LabelSelectorPredicate(42)  # type: ignore[arg-type]


def test_function_predicates_per_event_kind() -> None:
    predicate = FunctionPredicate(create=lambda o: o.name == "keep", delete=lambda o: False)
    assert predicate.create(cached("keep")) and not predicate.create(cached("drop"))
    assert not predicate.delete(cached("keep"))
    assert predicate.update(cached(), cached()) and predicate.generic(cached())
    by_name = predicate_for(lambda o: o.name.startswith("a"))
    assert by_name.update(cached("b"), cached("a1")) and not by_name.update(
        cached("a"), cached("b")
    )


def test_combinators() -> None:
    old, new = cached(generation=1, labels={"a": "1"}), cached(generation=1, labels={"a": "2"})
    assert not GenerationChanged().update(old, new)
    assert or_(GenerationChanged(), LabelsChanged()).update(old, new)
    assert not and_(GenerationChanged(), LabelsChanged()).update(old, new)
    assert not_(GenerationChanged()).update(old, new)
    assert and_().create(old) and not or_().create(old)
    with pytest.raises(TypeError, match="predicate_for"):
        and_(lambda o: True)  # type: ignore[arg-type]


def test_base_predicate_passes_everything() -> None:
    predicate = Predicate()
    obj = cached()
    assert predicate.create(obj) and predicate.update(obj, obj)
    assert predicate.delete(obj) and predicate.generic(obj)


class Constant(Predicate):
    def __init__(self, value: bool) -> None:
        self.value = value

    def create(self, obj: CachedObject) -> bool:
        return self.value

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return self.value


@given(st.lists(st.booleans(), max_size=5))
def test_combinators_follow_boolean_logic(values: list[bool]) -> None:
    obj = cached()
    predicates = [Constant(v) for v in values]
    assert and_(*predicates).create(obj) is all(values)
    assert or_(*predicates).update(obj, obj) is any(values)
    assert not_(and_(*predicates)).create(obj) is (not all(values))
