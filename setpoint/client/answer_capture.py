"""The bytes of a write's answer, for a caller that keeps the object as well as the dict.

The client decodes every answer into a dict for its caller. The recording client of a reconcile
also stores the answer in the cache until the watch delivers it (read-your-own-writes), and
encoding the dict again for that cost as much as the decoding. So, while a task has set
:data:`ANSWER_CAPTURE` to a :class:`CapturedAnswer`, the client leaves there the body of each
object it decodes; the last one is the write's answer, as the server sent it. A context
variable, not an attribute of the shared client: concurrent reconciles each see their own.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["ANSWER_CAPTURE", "CapturedAnswer"]


class CapturedAnswer:
    """Where the client leaves the JSON body of the object it decoded last (``b""``: none)."""

    __slots__ = ("body",)

    def __init__(self) -> None:
        self.body = b""


ANSWER_CAPTURE: ContextVar[CapturedAnswer | None] = ContextVar(
    "setpoint_answer_capture", default=None
)
