"""Per-reconcile logging context: which controller, which key, which reconcile.

The controller sets three context variables around every reconcile (``controller``, ``key`` as
``namespace/name``, and a fresh ``reconcile_id``). Because they are ``contextvars``, they follow
the reconcile into everything it awaits and into the thread running a sync reconciler, and they
never leak to another worker.

Two ways to get them onto log lines:

- :class:`LogContextFilter` (attach to a handler) copies them onto every ``LogRecord`` as
  ``record.controller``, ``record.key`` and ``record.reconcile_id`` (empty strings outside a
  reconcile) for formatters to use; the manager's formatters read them;
- :class:`ReconcileLoggerAdapter` appends them to the message for plain formatters.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import os
import uuid
from collections.abc import MutableMapping
from typing import Any

__all__ = [
    "CONTROLLER",
    "KEY",
    "RECONCILE_ID",
    "LogContextFilter",
    "ReconcileLoggerAdapter",
    "current",
    "new_reconcile_id",
    "reconcile_context",
]

CONTROLLER: contextvars.ContextVar[str] = contextvars.ContextVar("controller", default="")
KEY: contextvars.ContextVar[str] = contextvars.ContextVar("key", default="")
RECONCILE_ID: contextvars.ContextVar[str] = contextvars.ContextVar("reconcile_id", default="")


def _fresh_prefix() -> str:
    # A random UUID's first 19 hex digits, with its version (4) and variant bits.
    return str(uuid.uuid4())[:24]


def _fresh_counter() -> itertools.count[int]:
    return itertools.count(int.from_bytes(os.urandom(6), "big"))


_id_prefix = _fresh_prefix()
_id_counter = _fresh_counter()


def _after_fork() -> None:
    # A forked child must not repeat its parent's ids.
    global _id_prefix, _id_counter
    _id_prefix, _id_counter = _fresh_prefix(), _fresh_counter()


os.register_at_fork(after_in_child=_after_fork)


def new_reconcile_id() -> str:
    """A unique id for one reconcile, shaped as the UUID controller-runtime gives each.

    Its first 19 hex digits are random once per process, its last 12 a counter from a random
    start: unique within the process and, with 118 random bits per process, across processes.
    A fresh UUID4 per reconcile would cost more than the reconcile's logging.
    """
    return f"{_id_prefix}{next(_id_counter) & 0xFFFF_FFFF_FFFF:012x}"


class _ReconcileContext:
    """The context manager of :func:`reconcile_context` (a class, not a generator: every
    reconcile enters one)."""

    __slots__ = ("_tokens", "controller", "key", "reconcile_id")

    def __init__(self, controller: str, key: str, reconcile_id: str) -> None:
        self.controller = controller
        self.key = key
        self.reconcile_id = reconcile_id

    def __enter__(self) -> str:
        self._tokens = (
            CONTROLLER.set(self.controller),
            KEY.set(self.key),
            RECONCILE_ID.set(self.reconcile_id),
        )
        return self.reconcile_id

    def __exit__(self, *exc_info: object) -> None:
        tokens = self._tokens
        RECONCILE_ID.reset(tokens[2])
        KEY.reset(tokens[1])
        CONTROLLER.reset(tokens[0])


def reconcile_context(
    controller: str, key: str, reconcile_id: str | None = None
) -> _ReconcileContext:
    """Set the three variables for the duration of a ``with`` block, which gets the reconcile
    id (a new one unless given)."""
    return _ReconcileContext(controller, key, reconcile_id or new_reconcile_id())


def current() -> dict[str, str]:
    """The current values (empty strings outside a reconcile)."""
    return {"controller": CONTROLLER.get(), "key": KEY.get(), "reconcile_id": RECONCILE_ID.get()}


class LogContextFilter(logging.Filter):
    """Adds ``controller``, ``key`` and ``reconcile_id`` attributes to every record it sees.

    Values already set on the record (e.g. through ``extra=``) are kept.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in (("controller", CONTROLLER), ("key", KEY), ("reconcile_id", RECONCILE_ID)):
            if not hasattr(record, name):
                setattr(record, name, var.get())
        return True


class ReconcileLoggerAdapter(logging.LoggerAdapter[logging.Logger]):
    """A logger that appends ``controller=… key=… reconcile_id=…`` inside a reconcile.

    It also passes the values as ``extra`` so structured formatters see them as fields.
    """

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        values = current()
        if not values["controller"]:
            return msg, kwargs
        extra = dict(kwargs.get("extra") or {})
        for name, value in values.items():
            extra.setdefault(name, value)
        kwargs["extra"] = extra
        suffix = " ".join(f"{name}={value}" for name, value in values.items())
        return f"{msg} [{suffix}]", kwargs
