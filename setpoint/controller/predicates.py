"""Predicates: which cache events should reach a controller's queue.

A predicate looks at an event's object(s) and says yes or no. Each event kind has its own method
(``create``, ``update(old, new)``, ``delete``, ``generic``), and a predicate that has no opinion
on an event kind lets it through. The built-ins mirror controller-runtime:

- :class:`GenerationChanged`: updates only when ``metadata.generation`` changed, i.e. the spec
  changed (status and metadata writes are ignored), the usual filter for a ``for_`` type;
- :class:`ResourceVersionChanged`, :class:`LabelsChanged`, :class:`AnnotationsChanged`;
- :class:`LabelSelectorPredicate`: only objects whose labels match a selector;
- :class:`FunctionPredicate` / :func:`predicate_for`: your own functions;
- :func:`and_`, :func:`or_`, :func:`not_` to combine them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from setpoint.cache.cached_object import CachedObject

__all__ = [
    "AnnotationsChanged",
    "FunctionPredicate",
    "GenerationChanged",
    "LabelSelectorPredicate",
    "LabelsChanged",
    "Predicate",
    "ResourceVersionChanged",
    "all_pass",
    "and_",
    "checked_predicates",
    "not_",
    "or_",
    "predicate_for",
]

ObjectFilter = Callable[[CachedObject], bool]
UpdateFilter = Callable[[CachedObject, CachedObject], bool]


class Predicate:
    """Filters events; the base class lets every event through. Override what you care about."""

    def create(self, obj: CachedObject) -> bool:
        """Whether an added object (including the initial list) is enqueued."""
        return True

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        """Whether a change from ``old`` to ``new`` is enqueued."""
        return True

    def delete(self, obj: CachedObject) -> bool:
        """Whether a deleted object (or a tombstone after a relist) is enqueued."""
        return True

    def generic(self, obj: CachedObject) -> bool:
        """Whether a generic event (from a custom source) is enqueued."""
        return True


class GenerationChanged(Predicate):
    """Passes updates only when ``metadata.generation`` changed (spec changes, not status).

    Kinds without a generation (ConfigMaps, for example) never pass updates: combine with
    ``or_(GenerationChanged(), LabelsChanged())`` or use :class:`ResourceVersionChanged` for them.
    """

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return old.generation != new.generation


class ResourceVersionChanged(Predicate):
    """Passes updates only when the resourceVersion changed (drops periodic resync no-ops)."""

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return old.resource_version != new.resource_version


class LabelsChanged(Predicate):
    """Passes updates only when ``metadata.labels`` changed."""

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return dict(old.labels) != dict(new.labels)


class AnnotationsChanged(Predicate):
    """Passes updates only when ``metadata.annotations`` changed."""

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return dict(old.annotations) != dict(new.annotations)


class FunctionPredicate(Predicate):
    """A predicate from functions, one per event kind; a missing function lets events through."""

    def __init__(
        self,
        *,
        create: ObjectFilter | None = None,
        update: UpdateFilter | None = None,
        delete: ObjectFilter | None = None,
        generic: ObjectFilter | None = None,
    ) -> None:
        self._create = create
        self._update = update
        self._delete = delete
        self._generic = generic

    def create(self, obj: CachedObject) -> bool:
        return self._create is None or bool(self._create(obj))

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return self._update is None or bool(self._update(old, new))

    def delete(self, obj: CachedObject) -> bool:
        return self._delete is None or bool(self._delete(obj))

    def generic(self, obj: CachedObject) -> bool:
        return self._generic is None or bool(self._generic(obj))


def predicate_for(fn: ObjectFilter) -> Predicate:
    """One filter for every event kind; for updates it is applied to the new object."""
    return FunctionPredicate(create=fn, update=lambda _old, new: fn(new), delete=fn, generic=fn)


class LabelSelectorPredicate(Predicate):
    """Passes events whose object's labels match a selector (for updates: the new object).

    ``selector`` is a ``setpoint.api.selectors.LabelSelector`` (e.g. ``LabelSelector.parse(
    "app=web,tier!=db")``), a structured selector dict (``matchLabels``/``matchExpressions``;
    invalid ones raise ``SelectorError`` naming the field), or anything with ``matches(labels)``.
    """

    def __init__(self, selector: Mapping[str, object] | _LabelMatcher) -> None:
        if isinstance(selector, Mapping):
            from setpoint.api.selectors import LabelSelector

            self._matches: Callable[[Mapping[str, str]], bool] = LabelSelector.from_dict(
                selector, path="LabelSelectorPredicate.selector"
            ).matches
        elif callable(getattr(selector, "matches", None)):
            self._matches = selector.matches
        else:
            raise TypeError(
                "LabelSelectorPredicate: selector must be a LabelSelector dict "
                f"(matchLabels/matchExpressions) or have matches(labels), got {selector!r}"
            )

    def _check(self, obj: CachedObject) -> bool:
        return bool(self._matches(obj.labels))

    def create(self, obj: CachedObject) -> bool:
        return self._check(obj)

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return self._check(new)

    def delete(self, obj: CachedObject) -> bool:
        return self._check(obj)

    def generic(self, obj: CachedObject) -> bool:
        return self._check(obj)


class _LabelMatcher(Protocol):
    """Anything with ``matches(labels)`` (e.g. ``setpoint.api`` selectors)."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when ``labels`` satisfy the selector."""
        ...


class _And(Predicate):
    def __init__(self, predicates: Sequence[Predicate]) -> None:
        self.predicates = tuple(predicates)

    def create(self, obj: CachedObject) -> bool:
        return all(p.create(obj) for p in self.predicates)

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return all(p.update(old, new) for p in self.predicates)

    def delete(self, obj: CachedObject) -> bool:
        return all(p.delete(obj) for p in self.predicates)

    def generic(self, obj: CachedObject) -> bool:
        return all(p.generic(obj) for p in self.predicates)


class _Or(_And):
    def create(self, obj: CachedObject) -> bool:
        return any(p.create(obj) for p in self.predicates)

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return any(p.update(old, new) for p in self.predicates)

    def delete(self, obj: CachedObject) -> bool:
        return any(p.delete(obj) for p in self.predicates)

    def generic(self, obj: CachedObject) -> bool:
        return any(p.generic(obj) for p in self.predicates)


class _Not(Predicate):
    def __init__(self, predicate: Predicate) -> None:
        self.predicate = predicate

    def create(self, obj: CachedObject) -> bool:
        return not self.predicate.create(obj)

    def update(self, old: CachedObject, new: CachedObject) -> bool:
        return not self.predicate.update(old, new)

    def delete(self, obj: CachedObject) -> bool:
        return not self.predicate.delete(obj)

    def generic(self, obj: CachedObject) -> bool:
        return not self.predicate.generic(obj)


def checked_predicates(
    where: str, predicates: Predicate | Sequence[object]
) -> tuple[Predicate, ...]:
    """``predicates`` (one or several) as a tuple; raises ``TypeError`` naming ``where`` and the
    position of anything that is not a :class:`Predicate`."""
    if isinstance(predicates, Predicate):
        return (predicates,)
    for index, predicate in enumerate(predicates):
        if not isinstance(predicate, Predicate):
            raise TypeError(
                f"{where}: predicates[{index}] must be a Predicate, got "
                f"{type(predicate).__name__} (wrap plain functions with predicate_for(fn))"
            )
    return tuple(predicates)  # type: ignore[arg-type]  # checked above


def and_(*predicates: Predicate) -> Predicate:
    """Passes an event when every predicate passes it (no predicates: everything passes)."""
    return _And(checked_predicates("and_", predicates))


def or_(*predicates: Predicate) -> Predicate:
    """Passes an event when any predicate passes it (no predicates: nothing passes)."""
    return _Or(checked_predicates("or_", predicates))


def not_(predicate: Predicate) -> Predicate:
    """Passes exactly the events ``predicate`` rejects."""
    (checked,) = checked_predicates("not_", (predicate,))
    return _Not(checked)


def all_pass(predicates: Sequence[Predicate]) -> Predicate | None:
    """The conjunction of ``predicates``, or None when there are none (no filtering needed)."""
    if not predicates:
        return None
    if len(predicates) == 1:
        return predicates[0]
    return and_(*predicates)
