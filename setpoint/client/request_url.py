"""Request URLs: the server's base URL joined with an API path and its query parameters.

aiohttp turns a URL string into a ``yarl.URL`` by parsing and percent-encoding it, and adds
``params`` by encoding them and building a second URL. Both are cached by yarl, but most request
paths name one object, so nearly every write paid the whole parse again. :class:`RequestUrls`
builds the ``yarl.URL`` from parts instead when the path holds only characters yarl would leave
as they are, and remembers the encoded query strings, which repeat (``fieldManager=...&force=
true``). Anything else (other characters, dot segments, a base URL with a query) goes the way it
always did: the string and the parameters are handed to aiohttp, so the bytes on the wire are
the same either way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from yarl import URL

__all__ = ["RequestUrls"]

# Characters yarl's path quoting keeps unchanged (unreserved, plus "/", ":" and "@").
_PLAIN_PATH: Final = re.compile(r"[A-Za-z0-9\-._~/:@]*")
# Distinct parameter sets whose encoded query is remembered; beyond it the memo starts over
# (list continue tokens and watch resourceVersions make new ones all the time).
_MAX_QUERIES: Final = 256


class RequestUrls:
    """Builds the URLs of one server's requests (see the module docs)."""

    __slots__ = ("_authority", "_prefix", "_queries", "_scheme")

    def __init__(self, server: str) -> None:
        base = URL(server)
        self._scheme: str | None = None
        if base.absolute and not base.raw_query_string and not base.raw_fragment:
            self._scheme = base.scheme
        self._authority = base.raw_authority
        self._prefix = base.raw_path.rstrip("/")
        self._queries: dict[tuple[tuple[str, str], ...], str] = {}

    def url(self, path: str, params: Mapping[str, str] | None) -> URL | None:
        """The URL of ``path`` with ``params``, or None when aiohttp must build it from the
        string ``server + path`` and ``params``."""
        if self._scheme is None or "/." in path or _PLAIN_PATH.fullmatch(path) is None:
            return None
        query = self._query(params) if params else ""
        return URL.build(
            scheme=self._scheme,
            authority=self._authority,
            path=self._prefix + path,
            query_string=query,
            encoded=True,
        )

    def _query(self, params: Mapping[str, str]) -> str:
        key = tuple(params.items())
        query = self._queries.get(key)
        if query is None:
            # yarl's own encoding, as aiohttp applies it to ``params``.
            query = URL.build(query=params).raw_query_string
            if len(self._queries) >= _MAX_QUERIES:
                self._queries.clear()
            self._queries[key] = query
        return query
