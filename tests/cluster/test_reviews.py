"""SelfSubjectReview and SelfSubjectAccessReview: answered from the caller's identity.

What other users may do is in tests/cluster/authorization/."""

from __future__ import annotations

from tests.cluster.raw_api import RawAPI

SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


async def test_whoami_is_the_admin(api: RawAPI) -> None:
    reply = await api.request(
        "POST", SSR, {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    )
    assert reply.status == 201
    assert reply.body["status"]["userInfo"] == {
        "username": "setpoint-admin",
        "groups": ["system:masters", "system:authenticated"],
    }


async def test_the_admin_may_do_anything(api: RawAPI) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}},
    }
    reply = await api.request("POST", SSAR, review)
    assert reply.status == 201
    assert reply.body["status"] == {"allowed": True}
    assert reply.body["spec"] == review["spec"]
    # nothing is stored: reviews cannot be listed
    assert (await api.request("GET", SSAR)).status == 405


async def test_a_review_needs_exactly_one_kind_of_attributes(api: RawAPI) -> None:
    neither = await api.request("POST", SSAR, {"kind": "SelfSubjectAccessReview", "spec": {}})
    assert (neither.status, neither.body["reason"]) == (422, "Invalid")
    assert neither.body["message"] == (
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
        'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be '
        "specified"
    )
    both = await api.request(
        "POST",
        SSAR,
        {"spec": {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x"}}},
    )
    assert both.status == 422
    assert "cannot be specified in combination with resourceAttributes" in both.body["message"]


async def test_rules_review_lists_everything_for_the_admin(api: RawAPI) -> None:
    reply = await api.request(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        {"kind": "SelfSubjectRulesReview", "spec": {"namespace": "default"}},
    )
    assert reply.status == 201
    status = reply.body["status"]
    assert status["resourceRules"][0] == {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
    assert status["nonResourceRules"][0] == {"verbs": ["*"], "nonResourceURLs": ["*"]}
    assert status["incomplete"] is False
