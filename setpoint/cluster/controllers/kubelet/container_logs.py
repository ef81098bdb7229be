"""Reading a process container's log file as ``pods/log`` answers it (``kuberuntime/logs``).

Each stored record is ``<RFC3339Nano time> <stream> <F|P> <text>`` (:mod:`.log_files`). The
answer is the text (with the time and one space in front when ``timestamps`` is asked) from
where ``tailLines`` and ``sinceSeconds``/``sinceTime`` say, cut at ``limitBytes``; with
``follow`` new records are sent as they are written (across a rotation) until the container
instance exits.

Nothing loads the file: ``tailLines`` scans back from the end block by block, ``since`` is a
binary search on the records' times (they only grow), and the answer is read and sent
:data:`BLOCK_BYTES` at a time. Every file access runs in a worker thread, so a large log never
stalls the event loop.
"""

from __future__ import annotations

import asyncio
import calendar
import os
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Final, TypeVar

from setpoint.api.clock import Clock
from setpoint.cluster.apiserver.http.pod_endpoints import LogOptions
from setpoint.cluster.controllers.kubelet.process_pod import ProcessContainer

#: How often a followed log is checked for new records (real time: processes are real).
FOLLOW_POLL_SECONDS: Final = 0.05
#: Bytes read (and sent) at a time.
BLOCK_BYTES: Final = 64 * 1024
#: Enough of a record's start to hold its time, stream and tag.
HEADER_BYTES: Final = 64
#: Threads reading log files: few, so that concurrent reads of long lines do not each grow a
#: malloc arena of their own (RSS), and never the event loop's.
LOG_READERS: Final = 2
_READERS = ThreadPoolExecutor(max_workers=LOG_READERS, thread_name_prefix="pod-log-reader")
T = TypeVar("T")


async def _in_reader(function: Callable[..., T], *args: object) -> T:
    return await asyncio.get_running_loop().run_in_executor(_READERS, function, *args)


def record_nanoseconds(moment: bytes) -> int:
    """A record's RFC 3339 time as nanoseconds since the epoch (-1 when malformed)."""
    try:
        text = moment.decode("ascii").rstrip("Z")
        seconds, _, fraction = text.partition(".")
        stamp = calendar.timegm(datetime.strptime(seconds, "%Y-%m-%dT%H:%M:%S").timetuple())
    except (UnicodeDecodeError, ValueError):
        return -1
    return stamp * 1_000_000_000 + int((fraction + "000000000")[:9] or 0)


def _tag_at(log_file: BinaryIO, offset: int) -> bytes:
    log_file.seek(offset)
    parts = log_file.read(HEADER_BYTES).split(b" ", 3)
    return parts[2] if len(parts) > 2 else b""


def tail_offset(log_file: BinaryIO, size: int, lines: int) -> int:
    """Where the last ``lines`` lines start: a line ends with an ``F`` record (or at the end
    of the file after ``P`` pieces); the scan goes back from the end one block at a time."""
    if lines <= 0:
        return size
    ends = 0
    position = size
    record_end = size
    # The first record from the end: does the file end inside a line (P pieces)?
    first = True
    while position > 0:
        start = max(0, position - BLOCK_BYTES)
        log_file.seek(start)
        block = log_file.read(position - start)
        index = len(block)
        while True:
            newline = block.rfind(b"\n", 0, index)
            if newline < 0:
                break
            record_start = start + newline + 1
            if record_start < record_end:
                header = block[newline + 1 : newline + 1 + HEADER_BYTES]
                if len(header) < HEADER_BYTES and record_start + len(header) < record_end:
                    header = b""  # the header runs past this block: read it
                parts = header.split(b" ", 3)
                tag = parts[2] if len(parts) > 3 else _tag_at(log_file, record_start)
                if tag == b"F" or (first and tag == b"P"):
                    ends += 1
                    if ends > lines:
                        return record_end
                first = False
                record_end = record_start
            index = newline
        position = start
    if record_end > 0:  # the first record of the file
        tag = _tag_at(log_file, 0)
        if tag == b"F" or (first and tag == b"P"):
            ends += 1
            if ends > lines:
                return record_end
    return 0


def since_offset(log_file: BinaryIO, size: int, since_ns: int) -> int:
    """The first record written at or after ``since_ns`` (a binary search on offsets)."""
    low, high = 0, size
    while low < high:
        middle = (low + high) // 2
        start = _record_start_after(log_file, middle, size)
        if start >= size:
            high = middle
            continue
        log_file.seek(start)
        moment = log_file.read(HEADER_BYTES).split(b" ", 1)[0]
        if record_nanoseconds(moment) < since_ns:
            low = start + 1
        else:
            high = middle
    return _record_start_after(log_file, low, size)


def _record_start_after(log_file: BinaryIO, offset: int, size: int) -> int:
    """The start of the first record at or after ``offset``."""
    if offset <= 0:
        return 0
    log_file.seek(offset - 1)
    while True:
        block = log_file.read(BLOCK_BYTES)
        if not block:
            return size
        newline = block.find(b"\n")
        if newline >= 0:
            return offset + newline
        offset += len(block)


def render(records: bytes, timestamps: bool) -> Iterator[bytes]:
    """The answer's bytes for complete ``records`` (each ending with a newline), about
    :data:`BLOCK_BYTES` at a time; each record's text is copied once."""
    view = memoryview(records)
    out = bytearray()
    start = 0
    while (end := records.find(b"\n", start)) >= 0:
        moment_end = records.find(b" ", start, end)
        stream_end = records.find(b" ", moment_end + 1, end) if moment_end >= 0 else -1
        tag_end = records.find(b" ", stream_end + 1, end) if stream_end >= 0 else -1
        if tag_end >= 0:
            if timestamps:
                out += view[start : moment_end + 1]
            out += view[tag_end + 1 : end]
            if records[stream_end + 1 : tag_end] == b"F":
                out += b"\n"
            if len(out) >= BLOCK_BYTES:
                yield bytes(out)
                out = bytearray()
        start = end + 1
    if out:
        yield bytes(out)


def _open(path: Path) -> BinaryIO:
    return path.open("rb")


class _Reader:
    """Complete records from an open log file, one block at a time (in a worker thread)."""

    def __init__(self, log_file: BinaryIO, offset: int) -> None:
        self.file = log_file
        self.offset = offset
        self.carry = bytearray()

    def next_records(self) -> bytes:
        """The next complete records (b"" at the end of what is written so far); a record
        longer than a block is gathered once, not copied again per block."""
        while True:
            self.file.seek(self.offset)
            block = self.file.read(BLOCK_BYTES)
            self.offset += len(block)
            cut = block.rfind(b"\n") + 1
            if cut:
                records = bytes(self.carry) + block[:cut] if self.carry else block[:cut]
                self.carry = bytearray(block[cut:])
                return records
            if not block:
                return b""
            self.carry += block


async def read_log(
    container: ProcessContainer, options: LogOptions, clock: Clock
) -> AsyncIterator[bytes]:
    """The log of ``container``'s current (or previous) instance."""
    number = container.restart_count - 1 if options.previous else container.restart_count
    path: Path = container.log_path(max(number, 0))
    instance = container.instances[number] if 0 <= number < len(container.instances) else None
    try:
        log_file = await _in_reader(_open, path)
    except FileNotFoundError:
        return
    since_ns: int | None = None
    if options.since_seconds is not None:
        since_ns = int((clock.now().timestamp() - options.since_seconds) * 1_000_000_000)
    if options.since_time is not None:
        since_ns = int(options.since_time.timestamp() * 1_000_000_000)
    try:
        start = await _in_reader(_start_offset, log_file, options, since_ns)
        reader = _Reader(log_file, start)
        left = options.limit_bytes
        while True:
            records = await _in_reader(reader.next_records)
            if records:
                for chunk in _limited(render(records, options.timestamps), left):
                    if left is not None:
                        left -= len(chunk)
                    yield chunk
                if left is not None and left <= 0:
                    return
                continue
            if not options.follow or options.previous or instance is None:
                return
            if instance.finished_at is not None:
                if not await _in_reader(_has_more, reader):
                    return
                continue
            if await _in_reader(_rotated, reader, path):
                log_file.close()
                log_file = await _in_reader(_open, path)
                reader = _Reader(log_file, 0)
                continue
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
    finally:
        log_file.close()


def _start_offset(log_file: BinaryIO, options: LogOptions, since_ns: int | None) -> int:
    size = os.fstat(log_file.fileno()).st_size
    start = 0
    if options.tail_lines is not None:
        start = tail_offset(log_file, size, max(0, options.tail_lines))
    if since_ns is not None:
        start = max(start, since_offset(log_file, size, since_ns))
    return start


def _limited(chunks: Iterator[bytes], left: int | None) -> Iterator[bytes]:
    for chunk in chunks:
        if left is not None:
            chunk = chunk[: max(0, left)]
            left -= len(chunk)
        if chunk:
            yield chunk
        if left is not None and left <= 0:
            return


def _has_more(reader: _Reader) -> bool:
    return os.fstat(reader.file.fileno()).st_size > reader.offset


def _rotated(reader: _Reader, path: Path) -> bool:
    """Whether ``path`` is now another file and the old one has been read to its end."""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(reader.file.fileno())
    return (current.st_ino, current.st_dev) != (opened.st_ino, opened.st_dev) and (
        opened.st_size <= reader.offset
    )
