"""``setpoint rbac suggest``: the least RBAC covering a user's requests in an audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from setpoint.cli.main import cli
from setpoint.generate.rbac import Rule
from setpoint.generate.rbac_suggest import missing_rules, suggest

SA = "system:serviceaccount:ops:podset"


def event(
    verb: str,
    resource: str | None,
    *,
    namespace: str = "",
    group: str = "",
    subresource: str = "",
    user: str = SA,
    audit_id: str | None = None,
    uri: str = "/api/v1/pods",
    code: int = 200,
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": audit_id or f"{verb}-{resource}-{namespace}-{subresource}-{user}",
        "stage": "ResponseComplete",
        "requestURI": uri,
        "verb": verb,
        "user": {"username": user, "groups": ["system:serviceaccounts"]},
        "responseStatus": {"metadata": {}, "code": code},
    }
    if resource is not None:
        reference = {"resource": resource, "apiGroup": group, "apiVersion": "v1"}
        if namespace:
            reference["namespace"] = namespace
        if subresource:
            reference["subresource"] = subresource
        document["objectRef"] = reference
    return document


EVENTS = [
    event("list", "podsets", group="app.example.com"),
    event("watch", "podsets", group="app.example.com"),
    event("list", "pods"),
    event("watch", "pods"),
    event("create", "pods", namespace="shop"),
    event("delete", "pods", namespace="shop", code=403),  # denied: still needed
    event("patch", "podsets", namespace="shop", group="app.example.com", subresource="status"),
    event("create", "events", namespace="shop", group="events.k8s.io"),
    event("get", None, uri="/metrics?timeout=32s"),
    # Discovery and version: every authenticated user may (system:discovery), so not suggested.
    event("get", None, uri="/apis/apps/v1?timeout=32s"),
    event("get", None, uri="/version"),
    event("list", "secrets", user="someone-else"),
]


def test_cluster_wide_reads_go_to_a_clusterrole_and_writes_to_a_role_per_namespace() -> None:
    suggestion = suggest(EVENTS, SA)
    assert suggestion.name == "suggested-podset"
    assert suggestion.cluster_rules == [
        Rule("", ("pods",), ("list", "watch")),
        Rule("app.example.com", ("podsets",), ("list", "watch")),
    ]
    assert suggestion.non_resource == {"/metrics": ("get",)}
    assert suggestion.namespaced_rules == {
        "shop": [
            Rule("", ("pods",), ("create", "delete")),
            Rule("app.example.com", ("podsets/status",), ("patch",)),
            Rule("events.k8s.io", ("events",), ("create",)),
        ]
    }


def test_manifests_bind_the_service_account() -> None:
    documents = suggest(EVENTS, SA).manifests()
    assert [d["kind"] for d in documents] == [
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
    ]
    assert documents[0]["rules"][-1] == {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
    assert documents[3]["subjects"] == [
        {"kind": "ServiceAccount", "name": "podset", "namespace": "ops"}
    ]
    assert documents[3]["metadata"] == {"name": "suggested-podset", "namespace": "shop"}


def test_resources_with_the_same_verbs_merge_and_stages_count_once() -> None:
    events = [
        event("get", "configmaps", namespace="a", audit_id="1"),
        {**event("get", "configmaps", namespace="a", audit_id="1"), "stage": "ResponseStarted"},
        event("get", "secrets", namespace="a", audit_id="2"),
    ]
    suggestion = suggest(events, SA, cluster_wide=True)
    assert suggestion.cluster_rules == [Rule("", ("configmaps", "secrets"), ("get",))]
    assert suggestion.namespaced_rules == {}


def test_impersonated_requests_count_for_the_impersonated_user() -> None:
    impersonated = {
        **event("get", "pods", namespace="a", user="admin"),
        "impersonatedUser": {"username": SA},
    }
    suggestion = suggest([impersonated], SA)
    assert suggestion.namespaced_rules == {"a": [Rule("", ("pods",), ("get",))]}
    assert suggest([impersonated], "admin").empty


def test_missing_rules_names_what_a_role_lacks() -> None:
    granted = [
        Rule("", ("pods",), ("get", "list", "watch", "create")),
        Rule("app.example.com", ("podsets",), ("get", "list", "watch")),
        Rule("app.example.com", ("podsets/status",), ("patch",)),
        Rule("events.k8s.io", ("events",), ("create", "patch")),
    ]
    assert missing_rules(granted, suggest(EVENTS, SA)) == [("", "pods", "delete")]


def test_the_command_prints_yaml_and_errors_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text("\n".join(json.dumps(e) for e in EVENTS) + "\n")
    result = CliRunner().invoke(cli, ["rbac", "suggest", "--user", SA, "--audit", str(log)])
    assert result.exit_code == 0, result.output
    assert next(d["kind"] for d in yaml.safe_load_all(result.output)) == "ClusterRole"
    nobody = CliRunner().invoke(cli, ["rbac", "suggest", "--user", "nobody", "--audit", str(log)])
    assert nobody.exit_code == 1
    assert "no requests by 'nobody'" in nobody.output
    log.write_text("{not json\n")
    broken = CliRunner().invoke(cli, ["rbac", "suggest", "--user", SA, "--audit", str(log)])
    assert broken.exit_code == 1
    assert "audit.jsonl:1: not JSON" in broken.output
