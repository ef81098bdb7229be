"""The error raised for label and field selectors that cannot be parsed or are invalid."""

from __future__ import annotations

__all__ = ["SelectorError"]


class SelectorError(ValueError):
    """A label or field selector that cannot be parsed or is invalid; the message says where."""
