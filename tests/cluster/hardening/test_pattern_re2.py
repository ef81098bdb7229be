"""CRD ``pattern`` runs on RE2 in linear time, with Go's syntax."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from setpoint.cluster.apiserver.storage import MemoryStorage
from tests.cluster.crd_manifests import widget, widget_crd
from tests.cluster.hardening.conftest import served
from tests.cluster.raw_api import RawAPI

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
async def api() -> AsyncIterator[RawAPI]:
    storage = MemoryStorage()
    async with served(storage) as (_, client):
        yield client
    await storage.close()


def crd_with_pattern(pattern: str) -> dict[str, Any]:
    crd = widget_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["name"] = {"type": "string", "pattern": pattern}
    return crd


async def install(api: RawAPI, crd: dict[str, Any]) -> str:
    reply = await api.request("POST", CRDS, crd)
    assert reply.status == 201, reply.body
    return str(crd["spec"]["group"])


@pytest.mark.timeout(60)
async def test_a_catastrophic_pattern_answers_at_once(api: RawAPI) -> None:
    group = await install(api, crd_with_pattern("^(a+)+$"))
    path = f"/apis/{group}/v1/namespaces/default/widgets"
    evil = widget("evil", group)
    evil["spec"]["name"] = "a" * 100 + "!"  # 2^100 steps for a backtracking matcher
    reply = await api.request("POST", path, evil)
    assert reply.status == 422
    assert "should match '^(a+)+$'" in reply.body["message"]
    assert (await api.request("GET", "/healthz")).status == 200


async def test_re2_syntax_is_accepted_and_enforced(api: RawAPI) -> None:
    group = await install(api, crd_with_pattern(r"^[a-z]+\z"))
    path = f"/apis/{group}/v1/namespaces/default/widgets"
    good = widget("good", group)
    good["spec"]["name"] = "abc"
    assert (await api.request("POST", path, good)).status == 201
    bad = widget("bad", group)
    bad["spec"]["name"] = "abc\n"
    assert (await api.request("POST", path, bad)).status == 422


async def test_a_pattern_go_cannot_compile_is_refused_with_gos_words(api: RawAPI) -> None:
    reply = await api.request("POST", CRDS, crd_with_pattern("(?<=a)b"))
    assert reply.status == 422
    assert "error parsing regexp: invalid or unsupported Perl syntax" in reply.body["message"]
