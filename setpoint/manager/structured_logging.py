"""Structured logging for operators: JSON lines or human-readable lines, reconcile context on each.

`configure_logging("json")` makes every record one JSON object with zap's field names, the ones
controller-runtime operators emit, so log pipelines built for Go operators parse them unchanged::

    {"ts": "2026-01-02T03:04:05.678Z", "level": "info", "logger": "setpoint.controller.widget",
     "msg": "created ConfigMap", "controller": "widget", "namespace": "default", "name": "w1",
     "reconcileID": "3f0c…", "configmap": "w1-config"}

Inside a reconcile the controller, the key (split into namespace and name) and the reconcile id
come from the controller's context variables (`setpoint.controller.log_context`), so user code
logs with the standard `logging` module and gets them for free; `extra={...}` adds fields.
`configure_logging("human")` prints the same data as `ts LEVEL logger msg {fields}`.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping
from typing import IO, Any, Literal

import msgspec

from setpoint.controller import log_context

__all__ = [
    "LOG_FORMATS",
    "HumanFormatter",
    "JsonFormatter",
    "ReconcileContextFilter",
    "configure_logging",
]

LogFormat = Literal["json", "human"]
LOG_FORMATS: tuple[LogFormat, ...] = ("json", "human")

# Attributes every LogRecord has; anything else on a record came from `extra=` and is a field.
_STANDARD_ATTRIBUTES = frozenset(
    vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None))
) | {"message", "asctime", "taskName"}

# Record attributes that carry the reconcile context (set by the controller's LogContextFilter);
# they come out as the fields controller, namespace, name and reconcileID.
_CONTEXT_ATTRIBUTES = frozenset({"controller", "key", "reconcile_id"})

# zap's lower-case level names; Python's WARNING is zap's "warn" and CRITICAL is "fatal"-ish.
_LEVEL_NAMES = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warn",
    logging.ERROR: "error",
    logging.CRITICAL: "critical",
}

# Marks handlers installed by configure_logging, so calling it again replaces them.
_HANDLER_MARK = "_setpoint_handler"

_json_encoder = msgspec.json.Encoder()


def _format_ts(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created % 1 * 1000):03d}Z"


def _level_name(levelno: int) -> str:
    return _LEVEL_NAMES.get(levelno) or logging.getLevelName(levelno).lower()


def _split_key(key: str) -> dict[str, str]:
    namespace, _, name = key.rpartition("/")
    fields = {"namespace": namespace} if namespace else {}
    fields["name"] = name
    return fields


class ReconcileContextFilter(log_context.LogContextFilter):
    """Stamps the reconcile context (`controller`, `key`, `reconcile_id`) onto each record.

    Done in a filter, at the time of the logging call and in the caller's task, rather than in
    the formatter, so handlers that format later or in another thread still see the right
    context. Values given through `extra=` win.
    """


def _record_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The zap-style context fields first, then the caller's `extra=` fields.

    The context is read from the record (stamped by `ReconcileContextFilter` or the controller's
    `LogContextFilter`), or from the context variables when no filter stamped it.
    """
    attributes = vars(record)
    values = log_context.current() if "controller" not in attributes else attributes
    fields: dict[str, Any] = {}
    controller = values.get("controller")
    if controller:
        fields["controller"] = controller
    key = values.get("key")
    if key:
        fields.update(_split_key(str(key)))
    reconcile_id = values.get("reconcile_id")
    if reconcile_id:
        fields["reconcileID"] = reconcile_id
    for attribute, value in attributes.items():
        if attribute in _STANDARD_ATTRIBUTES or attribute in _CONTEXT_ATTRIBUTES:
            continue
        if not attribute.startswith("_"):
            fields.setdefault(attribute, value)
    return fields


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(item) for item in value]
    return str(value)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, context, extra fields, error."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _format_ts(record.created),
            "level": _level_name(record.levelno),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for field_name, value in _record_fields(record).items():
            entry.setdefault(field_name, _jsonable(value))
        if record.exc_info and record.exc_info[1] is not None:
            entry["error"] = str(record.exc_info[1]) or type(record.exc_info[1]).__name__
            entry["stacktrace"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["stacktrace"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        return _json_encoder.encode(entry).decode()


class HumanFormatter(logging.Formatter):
    """`ts LEVEL logger msg {"field": value, ...}` then the traceback, like zap's console."""

    def format(self, record: logging.LogRecord) -> str:
        parts = [
            _format_ts(record.created),
            _level_name(record.levelno).upper().ljust(5),
            record.name,
            record.getMessage(),
        ]
        fields = _record_fields(record)
        if fields:
            parts.append(_json_encoder.encode(_jsonable(fields)).decode())
        line = "\t".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            line += "\n" + record.stack_info
        return line


def configure_logging(
    format: LogFormat = "human",
    level: int | str = logging.INFO,
    *,
    stream: IO[str] | None = None,
    logger: str | None = None,
) -> logging.Handler:
    """Send log records of `logger` (default: the root logger) to `stream` in `format`.

    Replaces a handler installed by an earlier call, leaves other handlers alone, and returns
    the new handler. `level` is a level number or name ("debug", "INFO", ...).
    """
    formatter: logging.Formatter
    if format == "json":
        formatter = JsonFormatter()
    elif format == "human":
        formatter = HumanFormatter()
    else:
        raise ValueError(f"log format: expected one of {', '.join(LOG_FORMATS)}, got {format!r}")
    if isinstance(level, str):
        level_number = logging.getLevelName(level.upper())
        if not isinstance(level_number, int):
            raise ValueError(
                f"log level: {level!r} is not a level (use debug, info, warning, error or critical)"
            )
        level = level_number
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(formatter)
    handler.addFilter(ReconcileContextFilter())
    setattr(handler, _HANDLER_MARK, True)
    target = logging.getLogger(logger)
    for existing in list(target.handlers):
        if getattr(existing, _HANDLER_MARK, False):
            target.removeHandler(existing)  # not closed: the stream belongs to the caller
    target.addHandler(handler)
    target.setLevel(level)
    return handler
