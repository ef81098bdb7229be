"""CRD ``pattern`` keywords compiled with RE2, as kube-apiserver's Go ``regexp`` compiles them.

Go's regexp is RE2: matching takes linear time whatever the pattern, so a schema author cannot
write a pattern that holds the server for seconds on a short string (``(a+)+$`` does exactly
that on Python's backtracking ``re``). The syntax is RE2's too: ``\\z`` works, look-arounds
and back-references are refused when the CRD is written, with Go's wording.
"""

from __future__ import annotations

from typing import Final, Protocol

import re2  # type: ignore[import-untyped]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # refusals are reported to the client, not printed to stderr

# RE2's error texts beside the words Go's regexp/syntax uses for the same error.
_GO_WORDING: Final = (
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("missing )", "missing closing )"),
    ("missing ]", "missing closing ]"),
    ("unexpected )", "unexpected )"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid named capture group", "invalid named capture"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("invalid UTF-8", "invalid UTF-8"),
)


class CompiledPattern(Protocol):
    """What validation needs of a compiled pattern."""

    def search(self, text: str) -> object | None:
        """A match anywhere in ``text``, or None."""


def compile_pattern(pattern: str) -> CompiledPattern | None:
    """``pattern`` compiled by RE2, or None when it is not valid RE2 syntax."""
    try:
        compiled: CompiledPattern = re2.compile(pattern, _OPTIONS)
    except re2.error:
        return None
    return compiled


def pattern_error(pattern: str) -> str | None:
    """Why ``pattern`` does not compile, in Go's words (``error parsing regexp: ...``)."""
    try:
        re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        return "error parsing regexp: " + _go_wording(exc)
    return None


def _go_wording(exc: BaseException) -> str:
    raw = exc.args[0] if exc.args else str(exc)
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    message, _, fragment = text.partition(": ")
    for re2_words, go_words in _GO_WORDING:
        if message == re2_words:
            message = go_words
            break
    return f"{message}: `{fragment}`" if fragment else message
