"""Label selectors as the cache's readers pass them: a string, a mapping, or a matcher object.

``Store.list(label_selector=...)`` accepts:

- a mapping ``{"app": "web"}`` — every pair must match (equality-based selection);
- an object with ``matches(labels) -> bool`` (e.g. ``setpoint.api``'s ``LabelSelector``);
- a selector string in the API server's syntax (``"app=web,tier!=db,env in (a,b),!legacy"``),
  parsed by ``setpoint.api``'s label selector parser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, TypeAlias, runtime_checkable

__all__ = [
    "LabelMatcher",
    "LabelSelectorLike",
    "canonical_field_selector",
    "canonical_label_selector",
    "label_predicate",
]


@runtime_checkable
class LabelMatcher(Protocol):
    """Anything that decides whether a label set is selected."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True if ``labels`` is selected."""
        ...


LabelSelectorLike: TypeAlias = str | Mapping[str, str] | LabelMatcher


def label_predicate(selector: LabelSelectorLike) -> Callable[[Mapping[str, str]], bool]:
    """A function telling whether a label set matches ``selector``.

    Raises ``ValueError`` naming the selector when a string cannot be parsed, and ``TypeError``
    for an unsupported selector type.
    """
    if isinstance(selector, str):
        return _parse_string_selector(selector).matches
    if isinstance(selector, Mapping):
        wanted = dict(selector)
        return lambda labels: all(labels.get(k) == v for k, v in wanted.items())
    if isinstance(selector, LabelMatcher):
        return selector.matches
    raise TypeError(
        f"label_selector must be a string, a mapping or have matches(labels); "
        f"got {type(selector).__name__}"
    )


def _parse_string_selector(text: str) -> LabelMatcher:
    # The parsers load with the first selector: most caches are never given one.
    from setpoint.api.selectors import LabelSelector, SelectorError

    try:
        return LabelSelector.parse(text)
    except SelectorError as exc:
        raise ValueError(f"invalid label_selector {text!r}: {exc}") from exc


def canonical_label_selector(text: str | None) -> str | None:
    """Validate a server-side label selector and return its canonical form (None if empty).

    Equal selectors written differently (``"b=2,a=1"`` and ``"a=1, b=2"``) share one informer.
    Raises ``ValueError`` naming the selector when it does not parse.
    """
    if text is None or not text.strip():
        return None
    return str(_parse_string_selector(text)) or None


def canonical_field_selector(text: str | None) -> str | None:
    """Validate a server-side field selector and return its canonical form (None if empty)."""
    if text is None or not text.strip():
        return None
    from setpoint.api.selectors import FieldSelector, SelectorError

    try:
        return str(FieldSelector.parse(text)) or None
    except SelectorError as exc:
        raise ValueError(f"invalid field_selector {text!r}: {exc}") from exc
