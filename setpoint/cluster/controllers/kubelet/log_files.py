"""Writing a ``--run-pods`` container's output into its log file, as the CRI runtime does.

Each record is ``<RFC3339Nano time> <stdout|stderr> <F|P> <text>\\n``: ``F`` ends a line, ``P``
is a piece of a longer one (a line is cut every :data:`MAX_RECORD_BYTES`, as containerd cuts
at 16 KiB), so a line of any length is kept whole and nothing is held back waiting for a
newline. The output is read from the pipe in chunks, never line by line, so no line length
stops the reader and the container never blocks on a full pipe.

The file is rotated as the kubelet's container log manager does (``--container-log-max-size``,
default 10 Mi; ``--container-log-max-files``, default 5): once the current file reaches the
size it is renamed ``<file>.<YYYYMMDD-hhmmss>`` and a new one started; only the newest
``max_files - 1`` rotated files are kept (not compressed). ``kubectl logs`` reads the current
file, as upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Final

#: containerd's default ``max_container_log_line_size``.
MAX_RECORD_BYTES: Final = 16 * 1024
#: The kubelet's ``--container-log-max-size`` and ``--container-log-max-files`` defaults.
DEFAULT_MAX_SIZE: Final = 10 * 1024 * 1024
DEFAULT_MAX_FILES: Final = 5
#: The kubelet's rotated-file suffix (Go layout ``20060102-150405``).
ROTATED_SUFFIX_FORMAT: Final = "%Y%m%d-%H%M%S"


def log_time(moment: datetime) -> str:
    """RFC 3339 with nanoseconds and trailing zeros dropped (Go's ``RFC3339Nano``)."""
    utc = moment.astimezone(UTC)
    fraction = f"{utc.microsecond:06d}000".rstrip("0")
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"


def parse_size(text: str) -> int:
    """A Kubernetes quantity of bytes (``10Mi``, ``500Ki``, ``1G``, ``2048``) as an int."""
    units = {
        "Ki": 1 << 10,
        "Mi": 1 << 20,
        "Gi": 1 << 30,
        "Ti": 1 << 40,
        "k": 10**3,
        "K": 10**3,
        "M": 10**6,
        "G": 10**9,
        "T": 10**12,
    }
    value = text.strip()
    for suffix, factor in sorted(units.items(), key=lambda item: -len(item[0])):
        if value.endswith(suffix):
            number = value[: -len(suffix)]
            if number.isdigit():
                return int(number) * factor
            break
    if value.isdigit():
        return int(value)
    raise ValueError(f"{text!r} is not a size (e.g. 10Mi, 512Ki, 1048576)")


class ContainerLogWriter:
    """Appends one container instance's stdout and stderr to ``path`` with rotation."""

    def __init__(
        self,
        path: Path,
        now: Callable[[], datetime],
        max_size: int = DEFAULT_MAX_SIZE,
        max_files: int = DEFAULT_MAX_FILES,
    ) -> None:
        self.path = path
        self._now = now
        self._max_size = max_size
        self._max_files = max(1, max_files)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO = path.open("ab")
        self._size = self._file.tell()
        self._pending: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}

    def write(self, stream: str, data: bytes) -> None:
        """Record ``data`` read from ``stream``: every complete line, and pieces of a line
        longer than :data:`MAX_RECORD_BYTES` (all stamped with the time of this read)."""
        pending = self._pending[stream]
        pending += data
        full = f"{log_time(self._now())} {stream} F ".encode()
        out = bytearray()
        start = 0
        while True:
            end = pending.find(b"\n", start)
            if end < 0:
                break
            if end - start > MAX_RECORD_BYTES:
                break  # cut into pieces below
            out += full
            out += pending[start : end + 1]
            start = end + 1
            if len(out) >= MAX_RECORD_BYTES * 4:
                self._emit(out)
                out = bytearray()
        self._emit(out)
        while True:
            end = pending.find(b"\n", start)
            if end >= 0 and end - start <= MAX_RECORD_BYTES:
                self._record(stream, "F", pending, start, end)
                start = end + 1
                continue
            if len(pending) - start >= MAX_RECORD_BYTES:
                self._record(stream, "P", pending, start, start + MAX_RECORD_BYTES)
                start += MAX_RECORD_BYTES
                continue
            break
        del pending[:start]
        self._file.flush()
        if self._size >= self._max_size:
            self._rotate()

    def _emit(self, records: bytearray) -> None:
        if records:
            self._file.write(records)
            self._size += len(records)

    def _record(self, stream: str, tag: str, data: Any, start: int, end: int) -> None:
        header = f"{log_time(self._now())} {stream} {tag} ".encode()
        self._file.write(header)
        self._file.write(memoryview(data)[start:end])
        self._file.write(b"\n")
        self._size += len(header) + (end - start) + 1

    def _rotate(self) -> None:
        self._file.close()
        suffix = self._now().astimezone(UTC).strftime(ROTATED_SUFFIX_FORMAT)
        target = self.path.with_name(f"{self.path.name}.{suffix}")
        counter = 0
        while target.exists():  # two rotations within a second
            counter += 1
            target = self.path.with_name(f"{self.path.name}.{suffix}.{counter}")
        self.path.rename(target)
        rotated = sorted(
            (p for p in self.path.parent.glob(f"{self.path.name}.*")),
            key=lambda p: p.stat().st_mtime_ns,
        )
        for old in rotated[: max(0, len(rotated) - (self._max_files - 1))]:
            old.unlink(missing_ok=True)
        self._file = self.path.open("ab")
        self._size = 0

    def close(self) -> None:
        """Record what is left of unterminated lines (as pieces) and close the file."""
        for stream, pending in self._pending.items():
            if pending:
                self._record(stream, "P", pending, 0, len(pending))
                pending.clear()
        self._file.close()
