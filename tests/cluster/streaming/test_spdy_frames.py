"""SPDY/3.1 framing: the header dictionary, header blocks and frames cut from a byte stream."""

from __future__ import annotations

import zlib

from setpoint.cluster.apiserver.http.spdy import frames
from setpoint.cluster.apiserver.http.spdy.frames import FrameReader, HeaderCodec


def test_the_dictionary_is_the_one_of_the_spdy3_draft() -> None:
    # Its Adler-32 is the dictionary id every SPDY/3 header stream declares.
    assert len(frames.DICTIONARY) == 1423
    assert zlib.adler32(frames.DICTIONARY) == 0xE3C6A7C2


def test_frames_split_anywhere_are_read_whole() -> None:
    sender, receiver = HeaderCodec(), HeaderCodec()
    # A client's SYN_STREAM, built with the sender's half of a codec.
    block = sender.encode({"streamtype": "data", "port": "8080", "requestid": "0"})
    syn = frames.control_frame(frames.SYN_STREAM, 0, b"\x00\x00\x00\x01" + b"\x00" * 6 + block)
    stream = syn + frames.data_frames(1, b"hello", fin=True) + frames.ping(7)
    reader = FrameReader(receiver)
    seen = []
    for index in range(len(stream)):
        seen.extend(reader.feed(stream[index : index + 1]))
    assert [frame.kind for frame in seen] == [frames.SYN_STREAM, 0, frames.PING]
    assert seen[0].headers == {"streamtype": "data", "port": "8080", "requestid": "0"}
    assert (seen[1].stream_id, seen[1].data, seen[1].fin) == (1, b"hello", True)
    assert seen[2].value == 7
    # Header blocks share one zlib stream per direction: a second one decodes too.
    again = sender.encode({"streamtype": "error"})
    reply = frames.control_frame(frames.HEADERS, 0, b"\x00\x00\x00\x03" + again)
    assert next(iter(reader.feed(reply))).headers == {"streamtype": "error"}
