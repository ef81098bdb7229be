"""Lists by prefix with paging (start_after, limit), and counts."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from setpoint.cluster.apiserver.storage import InvalidValueError, Record, Storage
from tests.cluster.storage.objects import configmap, key_of


@pytest.fixture
async def populated(storage: Storage) -> Storage:
    for namespace in ("ns1", "ns2"):
        for name in ("c", "a", "b"):
            storage.create(key_of(name, namespace), configmap(name, namespace))
    storage.create("/core/configmapsx/ns1/z", configmap("z"))
    storage.create("/apps/deployments/ns1/d", {"metadata": {"name": "d"}})
    return storage


def keys(records: Sequence[Record]) -> list[str]:
    return [r.key for r in records]


async def test_list_returns_keys_under_prefix_in_order(populated: Storage) -> None:
    assert keys(populated.list("/core/configmaps/")) == [
        "/core/configmaps/ns1/a",
        "/core/configmaps/ns1/b",
        "/core/configmaps/ns1/c",
        "/core/configmaps/ns2/a",
        "/core/configmaps/ns2/b",
        "/core/configmaps/ns2/c",
    ]
    assert keys(populated.list("/core/configmaps/ns2/")) == [
        "/core/configmaps/ns2/a",
        "/core/configmaps/ns2/b",
        "/core/configmaps/ns2/c",
    ]
    assert populated.list("/core/secrets/") == []


async def test_list_values_are_the_current_records(populated: Storage) -> None:
    updated = populated.update(key_of("b", "ns1"), configmap("b", "ns1", v="2"))
    listed = populated.list("/core/configmaps/ns1/")
    assert listed[1] == updated
    assert listed[0] == populated.get(key_of("a", "ns1"))


async def test_list_pages_with_start_after_and_limit(populated: Storage) -> None:
    prefix = "/core/configmaps/"
    pages: list[str] = []
    start_after: str | None = None
    while True:
        page = populated.list(prefix, start_after=start_after, limit=4)
        pages.extend(keys(page))
        if len(page) < 4:
            break
        start_after = page[-1].key
    assert pages == keys(populated.list(prefix))
    assert len(pages) == 6


async def test_start_after_a_deleted_key_continues_after_it(populated: Storage) -> None:
    populated.delete(key_of("b", "ns1"))
    page = populated.list("/core/configmaps/", start_after=key_of("b", "ns1"), limit=2)
    assert keys(page) == [key_of("c", "ns1"), key_of("a", "ns2")]


async def test_start_after_outside_the_prefix(populated: Storage) -> None:
    assert len(populated.list("/core/configmaps/", start_after="/a")) == 6
    assert populated.list("/core/configmaps/", start_after="/core/configmaps0") == []


async def test_limit_zero_returns_nothing(populated: Storage) -> None:
    assert populated.list("/core/configmaps/", limit=0) == []


async def test_count_by_prefix(populated: Storage) -> None:
    assert populated.count("/core/configmaps/") == 6
    assert populated.count("/core/configmaps/ns1/") == 3
    assert populated.count("/core/") == 7
    assert populated.count("/") == 8
    assert populated.count("/core/secrets/") == 0
    populated.delete(key_of("a", "ns1"))
    assert populated.count("/core/configmaps/ns1/") == 2


async def test_count_after_a_key_matches_the_rest_of_the_list(populated: Storage) -> None:
    prefix = "/core/configmaps/"
    for record in populated.list(prefix):
        rest = populated.list(prefix, start_after=record.key)
        assert populated.count(prefix, start_after=record.key) == len(rest)
    # a start_after that is not stored, or lies outside the prefix, counts like list does
    for start_after in (key_of("bb", "ns1"), "/a", "/core/configmaps0"):
        assert populated.count(prefix, start_after=start_after) == len(
            populated.list(prefix, start_after=start_after)
        )


async def test_prefix_ending_in_the_largest_character(storage: Storage) -> None:
    storage.create("/g/r/\U0010ffff", {"metadata": {}})
    storage.create("/g/r/\U0010ffff/x", {"metadata": {}})
    storage.create("/g/s/a", {"metadata": {}})
    assert keys(storage.list("/g/r/\U0010ffff")) == ["/g/r/\U0010ffff", "/g/r/\U0010ffff/x"]
    assert storage.count("/g/r/\U0010ffff") == 2


async def test_negative_limit_is_rejected(storage: Storage) -> None:
    with pytest.raises(InvalidValueError, match="limit"):
        storage.list("/", limit=-1)
