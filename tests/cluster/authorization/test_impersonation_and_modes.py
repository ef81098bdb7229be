"""Impersonation checks (who may act as whom), AlwaysAllow, and ``serve --authorization``."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict, CIMultiDictProxy

from setpoint.cluster.apiserver.auth.authorization.impersonation import (
    impersonate,
    wants_impersonation,
)
from setpoint.cluster.apiserver.auth.identity import UserInfo
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.raw_api import raw_api
from tests.cluster.serve_process import ServeProcess, connection_of

FRANK = UserInfo("frank", ("devs", "system:authenticated"))  # edit in team-b (conftest.py)
ALICE = UserInfo("alice", ("system:authenticated",))


def headers(*pairs: tuple[str, str]) -> CIMultiDictProxy[str]:
    return CIMultiDictProxy(CIMultiDict(pairs))


@pytest.mark.asyncio(loop_scope="module")
async def test_editors_may_impersonate_service_accounts_of_their_namespace(
    policy_server: APIServer,
) -> None:
    authorizer = policy_server.access.authorizer
    user = impersonate(
        FRANK, headers(("Impersonate-User", "system:serviceaccount:team-b:builder")), authorizer
    )
    assert user == UserInfo(
        "system:serviceaccount:team-b:builder",
        ("system:serviceaccounts", "system:serviceaccounts:team-b", "system:authenticated"),
    )
    with pytest.raises(APIError) as refused:
        impersonate(
            FRANK,
            headers(("Impersonate-User", "system:serviceaccount:team-a:builder")),
            authorizer,
        )
    assert (refused.value.code, refused.value.message) == (
        403,
        'serviceaccounts "builder" is forbidden: User "frank" cannot impersonate resource '
        '"serviceaccounts" in API group "" in the namespace "team-a"',
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_impersonating_users_groups_and_extras_needs_each_permission(
    policy_server: APIServer,
) -> None:
    authorizer = policy_server.access.authorizer
    with pytest.raises(APIError) as user:
        impersonate(ALICE, headers(("Impersonate-User", "bob")), authorizer)
    assert user.value.message == (
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API '
        'group "" at the cluster scope'
    )
    admin = UserInfo("root", ("system:masters",))
    acting = impersonate(
        admin,
        headers(
            ("Impersonate-User", "bob"),
            ("Impersonate-Group", "devs"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Uid", "1234"),
            ("Impersonate-Extra-Scopes", "read"),
            ("Impersonate-Extra-Scopes", "write"),
        ),
        authorizer,
    )
    assert acting == UserInfo(
        "bob", ("devs", "ops", "system:authenticated"), "1234", {"scopes": ("read", "write")}
    )
    with pytest.raises(APIError) as groups_only:
        impersonate(admin, headers(("Impersonate-Group", "devs")), authorizer)
    assert groups_only.value.code == 500
    assert "without impersonating a user" in groups_only.value.message


async def test_always_allow_lets_everyone_through(tmp_path: Path) -> None:
    async with (
        LocalCluster(
            in_memory=True, controllers=False, https_port=None, authorization="AlwaysAllow"
        ) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        reply = await api.request(
            "GET", "/api/v1/namespaces/default/secrets", headers={"Impersonate-User": "anyone"}
        )
        assert reply.status == 200
        # the default roles exist all the same
        admin = await api.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin")
        assert admin.status == 200 and admin.body["rules"]


async def test_rbac_is_the_default(tmp_path: Path) -> None:
    async with (
        LocalCluster(in_memory=True, controllers=False, https_port=None) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        denied = await api.request(
            "GET", "/api/v1/namespaces/default/secrets", headers={"Impersonate-User": "anyone"}
        )
        assert denied.status == 403
        # the admin token stays all-powerful
        assert (await api.request("GET", "/api/v1/namespaces/default/secrets")).status == 200


@pytest.mark.slow
async def test_serve_takes_the_authorization_mode(tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "kubeconfig", "--in-memory", "--authorization", "AlwaysAllow")
    try:
        url, token, context = connection_of(server.wait_for_kubeconfig())
        request_headers = {"Authorization": f"Bearer {token}", "Impersonate-User": "anyone"}
        async with (
            aiohttp.ClientSession(headers=request_headers) as session,
            session.get(url + "/api/v1/nodes", ssl=context) as response,
        ):
            assert response.status == 200
    finally:
        server.close()


async def test_defaults_are_created_once_and_edits_survive_restarts(tmp_path: Path) -> None:
    view = "/apis/rbac.authorization.k8s.io/v1/clusterroles/view"
    binding = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:basic-user"
    async with (
        LocalCluster(data_dir=tmp_path, controllers=False, https_port=None) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        assert (await api.request("DELETE", binding)).status == 200
        role = (await api.request("GET", view)).body
        role["metadata"]["labels"]["edited"] = "yes"
        assert (await api.request("PUT", view, role)).status == 200
    async with (
        LocalCluster(data_dir=tmp_path, controllers=False, https_port=None) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        again = (await api.request("GET", view)).body
        assert again["metadata"]["labels"]["edited"] == "yes"
        assert again["rules"]  # still aggregated
        # a deleted default comes back (upstream's bootstrap reconciles missing defaults)
        assert (await api.request("GET", binding)).status == 200


_HEADER_NAMES = st.lists(
    st.sampled_from(
        [
            "Impersonate-User",
            "impersonate-group",
            "IMPERSONATE-EXTRA-scopes",
            "Impersonate",
            "X-Impersonate-User",
            "\u0130mpersonate-User",  # a dotted capital I lowers to two characters
            "Authorization",
            "User-Agent",
        ]
    )
    | st.text(alphabet=st.sampled_from("imperson-ateIMPERSON\u03a3\u0130x"), max_size=14),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(_HEADER_NAMES)
def test_the_impersonation_test_agrees_with_looking_at_each_name(names: list[str]) -> None:
    expected = any(name.lower().startswith("impersonate-") for name in names)
    assert wants_impersonation(headers(*((name, "v") for name in names))) is expected
