"""Integer query parameters parsed as Go's ``strconv.ParseInt(s, 10, 64)`` parses them.

Python's ``int()`` takes what Go refuses ("1_000", " 7", non-ASCII digits) and numbers of any
size, which then fail deep inside as a 500. Here only an optional sign and ASCII digits pass,
within int64, and anything else is the upstream 400.
"""

from __future__ import annotations

import re
from typing import Any, Final

from setpoint.cluster.apiserver import status_errors

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
_DECIMAL = re.compile(r"[+-]?[0-9]+")


def parse_int64(raw: str, name: str) -> int:
    """``raw`` as an int64; 400 ``invalid value for NAME: strconv.ParseInt: ...`` otherwise."""
    if _DECIMAL.fullmatch(raw) is None:
        raise status_errors.bad_request(
            f'invalid value for {name}: strconv.ParseInt: parsing "{raw}": invalid syntax'
        )
    value = int(raw)
    if not INT64_MIN <= value <= INT64_MAX:
        raise status_errors.bad_request(
            f'invalid value for {name}: strconv.ParseInt: parsing "{raw}": value out of range'
        )
    return value


def int64_option(value: Any, name: str) -> int:
    """An integer option from a JSON body (an int) or the query (a string), as an int64."""
    if isinstance(value, str):
        return parse_int64(value, name)
    if isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX:
        return value
    raise status_errors.bad_request(
        f"invalid value for {name}: json: cannot unmarshal {value!r} into Go value of type int64"
    )
