"""Server warnings: ``Warning: 299 - "text"`` response headers, logged once per distinct text.

The API server warns about deprecated APIs, unknown fields (``fieldValidation=Warn``) and similar.
Like client-go's default warning handler with deduplication, each distinct message is logged once
per client, at WARNING level on the ``setpoint.client.warnings`` logger.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

__all__ = ["WarningHandler", "parse_warning_headers"]

LOGGER = logging.getLogger("setpoint.client.warnings")
# Remember at most this many distinct texts so a server producing unique warnings cannot grow
# memory without bound; beyond it, warnings are still logged but no longer deduplicated.
MAX_REMEMBERED_WARNINGS = 1024
_WARN_CODE = "299"  # RFC 7234 "Miscellaneous persistent warning", the only code Kubernetes uses


def _parse_one_header(value: str) -> list[str]:
    """Texts of the 299 warnings in one header value: ``299 - "a", 299 - "b" "date"``."""
    texts: list[str] = []
    i, n = 0, len(value)
    while i < n:
        while i < n and value[i] in " ,\t":
            i += 1
        start = i
        while i < n and value[i] != " ":
            i += 1
        code = value[start:i]
        i += 1
        while i < n and value[i] != " ":  # the agent, usually "-"
            i += 1
        i += 1
        if i >= n or value[i] != '"':
            break
        text, i = _quoted(value, i)
        while i < n and value[i] == " ":
            i += 1
        if i < n and value[i] == '"':  # optional warn-date
            _, i = _quoted(value, i)
        if code == _WARN_CODE and text:
            texts.append(text)
    return texts


def _quoted(value: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    i += 1
    while i < len(value):
        char = value[i]
        if char == "\\" and i + 1 < len(value):
            out.append(value[i + 1])
            i += 2
            continue
        if char == '"':
            return "".join(out), i + 1
        out.append(char)
        i += 1
    return "".join(out), i


def parse_warning_headers(values: Iterable[str]) -> list[str]:
    """All warning texts (code 299) in the given ``Warning`` header values, in order."""
    texts: list[str] = []
    for value in values:
        texts.extend(_parse_one_header(value))
    return texts


class WarningHandler:
    """Logs each distinct warning once; pass ``sink`` to receive every warning instead."""

    def __init__(self, sink: Callable[[str], None] | None = None) -> None:
        self._sink = sink
        self._seen: set[str] = set()

    def handle(self, header_values: Iterable[str]) -> None:
        """Process the ``Warning`` header values of one response."""
        for text in parse_warning_headers(header_values):
            if self._sink is not None:
                self._sink(text)
                continue
            if text in self._seen:
                continue
            if len(self._seen) < MAX_REMEMBERED_WARNINGS:
                self._seen.add(text)
            LOGGER.warning("Warning: %s", text)
