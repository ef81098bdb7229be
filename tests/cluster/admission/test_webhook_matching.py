"""Which writes reach which webhook, and how their answers combine: rules (subresources,
wildcards, scope), selectors, matchConditions, reinvocation, dry run, review versions,
clientConfig.service, and answers the server must refuse."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.admission.test_webhook_admission import configmap, register, webhook
from tests.cluster.admission.webhook_server import WebhookServer, deny, patch, webhook_server
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import RawAPI

VALIDATING = "ValidatingWebhookConfiguration"
MUTATING = "MutatingWebhookConfiguration"


def rule(resources: list[str], scope: str = "*", groups: tuple[str, ...] = ("",)) -> dict[str, Any]:
    return {
        "operations": ["*"],
        "apiGroups": list(groups),
        "apiVersions": ["*"],
        "resources": resources,
        "scope": scope,
    }


async def test_rules_match_subresources_wildcards_and_scope(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    def hook(path: str, *rules: dict[str, Any]) -> dict[str, Any]:
        entry = webhook(f"{path.strip('/')}.example.com", hooks.client_config(path))
        entry["rules"] = list(rules)
        return entry

    await register(
        api,
        VALIDATING,
        hook("/services-only", rule(["services"])),
        hook("/services-status", rule(["services/status"])),
        hook("/services-all", rule(["services/*"])),
        hook("/star", rule(["*"])),
        hook("/star-star", rule(["*/*"])),
        hook("/namespaced", rule(["*"], scope="Namespaced")),
        hook("/cluster", rule(["*"], scope="Cluster")),
    )
    services = f"/api/v1/namespaces/{namespace}/services"
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80}]},
    }
    created = await api.request("POST", services, body)
    assert created.status == 201, created.body
    status = {**created.body, "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.9"}]}}}
    assert (await api.request("PUT", f"{services}/s/status", status)).status == 200
    namespace_body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": namespace + "-x"},
    }
    assert (await api.request("POST", "/api/v1/namespaces", namespace_body)).status == 201

    def seen(path: str) -> list[tuple[str, str, str]]:
        return [
            (r["operation"], r["resource"]["resource"], r.get("subResource", ""))
            for r in hooks.requests(path)
        ]

    create, update_status = ("CREATE", "services", ""), ("UPDATE", "services", "status")
    namespace_create = ("CREATE", "namespaces", "")
    assert seen("/services-only") == [create]
    assert seen("/services-status") == [update_status]
    assert seen("/services-all") == [create, update_status]
    assert seen("/star") == [create, namespace_create]
    assert seen("/star-star") == [create, update_status, namespace_create]
    assert seen("/namespaced") == [create]
    assert seen("/cluster") == [namespace_create]
    [status_review] = hooks.requests("/services-status")
    assert status_review["requestSubResource"] == "status"
    assert status_review["object"]["status"]["loadBalancer"]["ingress"] == [{"ip": "10.0.0.9"}]
    [namespace_review] = hooks.requests("/cluster")
    assert namespace_review["namespace"] == namespace + "-x"
    await api.request("DELETE", f"/api/v1/namespaces/{namespace}-x")


async def test_object_and_namespace_selectors(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    await api.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}",
        {"metadata": {"labels": {"team": "a"}}},
        content_type="application/merge-patch+json",
    )
    await register(
        api,
        VALIDATING,
        webhook(
            "objects.example.com",
            hooks.client_config("/objects"),
            objectSelector={"matchLabels": {"checked": "yes"}},
        ),
        webhook(
            "team-a.example.com",
            hooks.client_config("/team-a"),
            namespaceSelector={
                "matchExpressions": [{"key": "team", "operator": "In", "values": ["a"]}]
            },
        ),
        webhook(
            "team-b.example.com",
            hooks.client_config("/team-b"),
            namespaceSelector={"matchLabels": {"team": "b"}},
        ),
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    assert (await api.request("POST", path, configmap("plain"))).status == 201
    assert (await api.request("POST", path, configmap("checked", checked="yes"))).status == 201
    assert [r["name"] for r in hooks.requests("/objects")] == ["checked"]
    assert [r["name"] for r in hooks.requests("/team-a")] == ["plain", "checked"]
    assert hooks.requests("/team-b") == []


async def test_match_conditions_select_requests_and_their_errors_follow_the_failure_policy(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    await register(
        api,
        VALIDATING,
        webhook(
            "conditions.example.com",
            hooks.client_config("/conditions"),
            matchConditions=[
                {"name": "prefixed", "expression": "object.metadata.name.startsWith('check-')"},
                {"name": "by-admin", "expression": "request.userInfo.username == 'setpoint-admin'"},
            ],
        ),
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    assert (await api.request("POST", path, configmap("skip-me"))).status == 201
    assert (await api.request("POST", path, configmap("check-me"))).status == 201
    assert [r["name"] for r in hooks.requests("/conditions")] == ["check-me"]

    broken = webhook(
        "broken.example.com",
        hooks.client_config("/broken"),
        matchConditions=[{"name": "missing", "expression": "object.spec.replicas > 1"}],
    )
    await register(api, VALIDATING, broken, name="broken")
    refused = await api.request("POST", path, configmap("c2"))
    assert refused.status == 403, refused.body
    assert refused.body["message"].startswith('configmaps "c2" is forbidden: missing: ')
    await api.request(
        "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/broken"
    )
    await register(api, VALIDATING, {**broken, "failurePolicy": "Ignore"}, name="broken")
    assert (await api.request("POST", path, configmap("c2"))).status == 201
    assert hooks.requests("/broken") == []


async def test_a_compile_error_in_a_match_condition_is_refused(
    api: RawAPI, hooks: WebhookServer
) -> None:
    bad = webhook(
        "bad.example.com",
        hooks.client_config("/bad"),
        matchConditions=[{"name": "syntax", "expression": "object.metadata.name =="}],
    )
    reply = await api.request(
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": VALIDATING,
            "metadata": {"name": "bad"},
            "webhooks": [bad],
        },
    )
    assert reply.status == 422
    [cause] = reply.body["details"]["causes"]
    assert cause["field"] == "webhooks[0].matchConditions[0].expression"
    assert "compilation failed" in cause["message"]


async def test_if_needed_webhooks_are_called_again_after_a_later_change(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    hooks.responders["/first"] = lambda request: {"allowed": True}
    hooks.responders["/second"] = patch(
        {"op": "add", "path": "/metadata/labels/second", "value": "yes"}
    )
    hooks.responders["/never"] = lambda request: {"allowed": True}
    await register(
        api,
        MUTATING,
        webhook("first.example.com", hooks.client_config("/first"), reinvocationPolicy="IfNeeded"),
        webhook("never.example.com", hooks.client_config("/never")),
        name="a",
    )
    await register(
        api, MUTATING, webhook("second.example.com", hooks.client_config("/second")), name="b"
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = await api.request("POST", path, configmap("r"))
    assert created.status == 201, created.body
    assert created.body["metadata"]["labels"] == {"second": "yes"}
    first, again = hooks.requests("/first")
    assert "second" not in (first["object"]["metadata"].get("labels") or {})
    assert again["object"]["metadata"]["labels"] == {"second": "yes"}
    assert len(hooks.requests("/never")) == 1
    assert len(hooks.requests("/second")) == 1


async def test_a_dry_run_write_tells_the_webhook_and_stores_nothing(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    hooks.responders["/m"] = patch({"op": "add", "path": "/data/b", "value": "2"})
    await register(
        api,
        MUTATING,
        webhook("m.example.com", hooks.client_config("/m"), sideEffects="NoneOnDryRun"),
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    reply = await api.request("POST", f"{path}?dryRun=All", configmap("d"))
    assert reply.status == 201, reply.body
    assert reply.body["data"] == {"a": "1", "b": "2"}
    [request] = hooks.requests("/m")
    assert request["dryRun"] is True
    assert request["options"]["dryRun"] == ["All"]
    assert (await api.request("GET", f"{path}/d")).status == 404


async def test_a_v1beta1_only_webhook_gets_a_v1beta1_review(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    entry = webhook("old.example.com", hooks.client_config("/old"))
    entry["admissionReviewVersions"] = ["v1beta1"]
    hooks.responders["/old"] = deny("old says no", code=400)
    await register(api, VALIDATING, entry)
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    reply = await api.request("POST", path, configmap("o"))
    assert reply.status == 400
    assert (
        reply.body["message"]
        == 'admission webhook "old.example.com" denied the request: old says no'
    )
    assert hooks.received["/old"][0]["apiVersion"] == "admission.k8s.io/v1beta1"


async def test_answers_the_server_cannot_trust_fail_the_call(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    hooks.responders["/uid"] = lambda request: {"uid": "other", "allowed": True}
    hooks.responders["/no-type"] = lambda request: {
        "allowed": True,
        "patch": base64.b64encode(b"[]").decode(),
    }
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    await register(api, VALIDATING, webhook("uid.example.com", hooks.client_config("/uid")))
    reply = await api.request("POST", path, configmap("x"))
    assert reply.status == 500
    assert reply.body["message"] == (
        'Internal error occurred: failed calling webhook "uid.example.com": received invalid '
        'webhook response: expected response.uid="'
        + hooks.requests("/uid")[0]["uid"]
        + '", got "other"'
    )
    await register(api, MUTATING, webhook("no-type.example.com", hooks.client_config("/no-type")))
    await api.request(
        "DELETE",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
        "test-validatingwebhookconfiguration",
    )
    reply = await api.request("POST", path, configmap("y"))
    assert reply.status == 500
    assert reply.body["message"].endswith(
        "received invalid webhook response: webhook returned response.patch but not "
        "response.patchType"
    )


async def test_a_webhook_with_an_unknown_certificate_authority_fails_the_call(
    api: RawAPI, hooks: WebhookServer, namespace: str
) -> None:
    async with webhook_server() as other:
        config = {"url": hooks.url("/x"), "caBundle": other.ca_bundle}
        await register(api, VALIDATING, webhook("ca.example.com", config))
        reply = await api.request(
            "POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap("t")
        )
    assert reply.status == 500
    assert (
        f'Post "{hooks.url("/x")}?timeout=10s": tls: failed to verify certificate: x509: '
        "certificate signed by unknown authority"
    ) in reply.body["message"]
    assert hooks.requests("/x") == []


async def test_a_webhook_behind_a_service_is_called_at_its_endpoints_with_the_service_name(
    api: RawAPI, namespace: str
) -> None:
    host = f"hooks.{namespace}.svc"
    async with webhook_server(dns_names=(host,)) as server:
        server.responders["/v"] = deny("denied via the service")
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "hooks"},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": server.port}]},
        }
        endpoints = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "hooks"},
            "subsets": [
                {
                    "addresses": [{"ip": "127.0.0.1"}],
                    "ports": [{"name": "https", "port": server.port}],
                }
            ],
        }
        base = f"/api/v1/namespaces/{namespace}"
        assert (await api.request("POST", f"{base}/services", service)).status == 201
        assert (await api.request("POST", f"{base}/endpoints", endpoints)).status == 201
        client_config = {
            "service": {"namespace": namespace, "name": "hooks", "path": "/v"},
            "caBundle": server.ca_bundle,
        }
        await register(api, VALIDATING, webhook("svc.example.com", client_config))
        reply = await api.request("POST", f"{base}/configmaps", configmap("via"))
        assert reply.status == 403, reply.body
        assert reply.body["message"].endswith("denied the request: denied via the service")
        await api.request("DELETE", f"{base}/endpoints/hooks")
        reply = await api.request("POST", f"{base}/configmaps", configmap("via"))
    assert reply.status == 500
    assert reply.body["message"] == (
        'Internal error occurred: failed calling webhook "svc.example.com": failed to call '
        f'webhook: Post "https://{host}:443/v?timeout=10s": no endpoints available for service '
        '"hooks"'
    )


async def test_kubectl_prints_the_denial_and_the_warnings(
    api: RawAPI,
    hooks: WebhookServer,
    namespace: str,
    admission_cluster: BackgroundCluster,
    tmp_path: Path,
) -> None:
    hooks.responders["/deny"] = lambda request: (
        {"allowed": True, "warnings": ["data.a is deprecated"]}
        if request["name"] == "ok"
        else {"allowed": False, "status": {"code": 403, "message": "names must be 'ok'"}}
    )
    await register(api, VALIDATING, webhook("names.example.com", hooks.client_config("/deny")))
    kubectl = Kubectl(admission_cluster.kubeconfig_path, tmp_path / "cache")
    manifest = tmp_path / "cm.yaml"
    for name in ("ok", "nope"):
        manifest.write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: "
            f"{namespace}\ndata:\n  a: '1'\n"
        )
        result = await asyncio.to_thread(kubectl.run, "apply", "-f", str(manifest), check=False)
        if name == "ok":
            assert result.returncode == 0, result.stderr
            assert "Warning: data.a is deprecated" in result.stderr
        else:
            assert result.returncode == 1
            assert (
                "admission webhook \"names.example.com\" denied the request: names must be 'ok'"
                in result.stderr
            )
            # The webhook gave no reason: kubectl prints none, as against kube-apiserver.
            assert "Error from server: error when creating" in result.stderr
