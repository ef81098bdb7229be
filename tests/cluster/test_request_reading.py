"""Reading a request's body and write options: the shortcuts give what the general paths give.

A body already complete when the handler asks for it is taken from the buffer at once; one
still arriving is read as it comes. Random bodies, cut into random chunks, sometimes shorter
than their ``Content-Length`` (the client hung up), read both ways, give the same bytes.
Write options of a request without a query string are the defaults, as parsing a query string
without write options gives. Media types remembered per Content-Type header are those the
header gives.
"""

from __future__ import annotations

import asyncio
from typing import Any
from unittest import mock

from aiohttp import StreamReader
from aiohttp.test_utils import make_mocked_request
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict

from setpoint.cluster.apiserver.http.request_body import (
    REQUEST_BODY_KEY,
    media_type,
    media_type_of,
    read_body,
)
from setpoint.cluster.apiserver.http.request_options import write_options


class _Request(dict[Any, Any]):
    """The parts of a request ``read_body`` uses: its payload stream and ``Content-Length``."""

    def __init__(self, content: StreamReader, content_length: int) -> None:
        super().__init__()
        self.content = content
        self.content_length = content_length


def _stream(loop: asyncio.AbstractEventLoop) -> StreamReader:
    return StreamReader(mock.Mock(_reading_paused=False), 2**16, loop=loop)


async def _read_both_ways(chunks: list[bytes], declared: int) -> tuple[bytes, bytes]:
    loop = asyncio.get_running_loop()
    complete = _stream(loop)
    for chunk in chunks:
        complete.feed_data(chunk)
    complete.feed_eof()
    at_once = await read_body(_Request(complete, declared))  # type: ignore[arg-type]

    arriving = _stream(loop)
    request = _Request(arriving, declared)
    reading = asyncio.ensure_future(read_body(request))  # type: ignore[arg-type]
    for chunk in chunks:
        await asyncio.sleep(0)
        arriving.feed_data(chunk)
    await asyncio.sleep(0)
    arriving.feed_eof()
    as_it_came = await reading
    assert request[REQUEST_BODY_KEY] == as_it_came
    return at_once, as_it_came


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=40), max_size=6),
    st.integers(min_value=0, max_value=8),
)
def test_a_complete_body_is_read_as_one_arriving_is(chunks: list[bytes], missing: int) -> None:
    body = b"".join(chunks)
    at_once, as_it_came = asyncio.run(_read_both_ways(chunks, len(body) + missing))
    assert at_once == as_it_came == body


_AGENTS = st.sampled_from(["", "kubectl/v1.32.0 (linux/amd64) kubernetes/abc", "setpoint/0.1"])


@settings(max_examples=30, deadline=None)
@given(_AGENTS, st.sampled_from(["POST", "PUT", "PATCH"]))
def test_write_options_without_a_query_are_those_of_a_query_without_options(
    agent: str, method: str
) -> None:
    headers = CIMultiDict({"User-Agent": agent} if agent else {})
    bare = make_mocked_request(method, "/api/v1/namespaces/a/configmaps", headers=headers)
    queried = make_mocked_request(method, "/api/v1/namespaces/a/configmaps?pretty=1", headers)

    assert write_options(bare) == write_options(queried)


_CONTENT_TYPES = st.sampled_from(
    ["application/json", "Application/JSON; charset=utf-8", " application/yaml ", ""]
) | st.text(alphabet=st.sampled_from("aJ/;= +x"), max_size=8)


@settings(max_examples=50, deadline=None)
@given(st.lists(_CONTENT_TYPES, max_size=100))
def test_remembered_media_types_are_those_of_each_header(content_types: list[str]) -> None:
    for content_type in content_types:
        headers = CIMultiDict({"Content-Type": content_type})
        request = make_mocked_request("POST", "/api/v1/namespaces/a/configmaps", headers)
        assert media_type(request) == media_type_of(content_type)
