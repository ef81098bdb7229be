"""The model and the server agree: pydantic and the generated CRD accept the same objects.

Objects are drawn around every bound of the model (valid and invalid); each is checked by
pydantic and created on the local cluster with the model's generated CRD installed. Both must
accept it, or both refuse it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from setpoint.api.resources import CustomResource, crd_manifest
from setpoint.testing.background_cluster import BackgroundCluster


class Limits(BaseModel):
    cpu: int = Field(ge=1, le=64)
    note: str | None = Field(default=None, max_length=5)


class AgreeSpec(BaseModel):
    name: str = Field(min_length=2, max_length=6, pattern=r"^[a-z]+$")
    replicas: int = Field(default=1, ge=0, le=5)
    mode: Literal["on", "off"] = "on"
    ratio: float = Field(default=1.0, gt=0, le=2)
    tags: list[str] = Field(default=[], max_length=2)
    limits: Limits | None = None


class Agree(CustomResource, group="agree.example.com", version="v1", kind="Agree"):
    spec: AgreeSpec


def _request(cluster: BackgroundCluster, method: str, path: str, body: Any = None) -> int:
    request = urllib.request.Request(
        cluster.url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {cluster.token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@pytest.fixture(scope="module")
def installed(local_cluster: BackgroundCluster) -> BackgroundCluster:
    crd = crd_manifest(Agree)
    status = _request(
        local_cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd
    )
    assert status in (201, 409)
    for _ in range(100):
        if _request(local_cluster, "GET", "/apis/agree.example.com/v1/agrees") == 200:
            break
    local_cluster.create_namespace("agreement")
    return local_cluster


_text = st.one_of(st.text(alphabet="abcXY1-", min_size=0, max_size=8), st.integers(0, 3))
_spec = st.fixed_dictionaries(
    {"name": _text},
    optional={
        "replicas": st.one_of(st.integers(-2, 7), st.just("3")),
        "mode": st.sampled_from(["on", "off", "auto", ""]),
        "ratio": st.sampled_from([0, 0.5, 2, 2.5, -1]),
        "tags": st.lists(st.text(alphabet="ab", max_size=2), max_size=3),
        "limits": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {"cpu": st.integers(0, 65)}, optional={"note": st.text(alphabet="n", max_size=7)}
            ),
        ),
    },
)

_counter = iter(range(1_000_000))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(spec=_spec)
def test_pydantic_and_the_server_accept_the_same_objects(
    installed: BackgroundCluster, spec: dict[str, Any]
) -> None:
    body = {"apiVersion": "agree.example.com/v1", "kind": "Agree",
            "metadata": {"name": f"a{next(_counter)}"}, "spec": spec}  # fmt: skip
    try:
        Agree.model_validate(body, strict=True)
        model_accepts = True
    except ValidationError:
        model_accepts = False
    status = _request(
        installed, "POST", "/apis/agree.example.com/v1/namespaces/agreement/agrees", body
    )
    assert status in (201, 422), status
    assert (status == 201) == model_accepts, (spec, status)
