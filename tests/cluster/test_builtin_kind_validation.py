# ruff: noqa: E501
"""Built-in kinds are validated as kube-apiserver 1.32 validates them (``pkg/apis/*/validation``):
422 Invalid with upstream's field paths, cause types and messages, on create and on update."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.cluster.raw_api import RawAPI

MERGE = "application/merge-patch+json"
TEMPLATE_LABELS_MISMATCH = (
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
    "`selector` does not match template `labels`"
)
NON_NEGATIVE = "Invalid value: -1: must be greater than or equal to 0"


def pod_template(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec},
    }


def deployment(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": pod_template(),
        },
    }
    body["spec"].update(spec)
    body["spec"] = {k: v for k, v in body["spec"].items() if v is not None}
    return body


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    body = deployment(**spec)
    body["kind"] = kind
    if kind == "DaemonSet":
        body["spec"].pop("replicas", None)
    if kind == "StatefulSet":
        body["spec"].setdefault("serviceName", "web")
    return body


def job(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "perl"}]}
            }
        },
    }
    body["spec"].update(spec)
    return body


def cron_job(name: str = "nightly", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": job()["spec"]}},
    }
    body["spec"].update(spec)
    return body


def service(*ports: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": list(ports), **spec},
    }


PATHS = {
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "ReplicaSet": "/apis/apps/v1/namespaces/{ns}/replicasets",
    "StatefulSet": "/apis/apps/v1/namespaces/{ns}/statefulsets",
    "DaemonSet": "/apis/apps/v1/namespaces/{ns}/daemonsets",
    "Job": "/apis/batch/v1/namespaces/{ns}/jobs",
    "CronJob": "/apis/batch/v1/namespaces/{ns}/cronjobs",
    "Service": "/api/v1/namespaces/{ns}/services",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "Lease": "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
}

CREATE_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("replicas", deployment(replicas=-1), f"spec.replicas: {NON_NEGATIVE}"),
    (
        "selector mismatch",
        deployment(selector={"matchLabels": {"app": "api"}}),
        TEMPLATE_LABELS_MISMATCH,
    ),
    (
        "no selector",
        deployment(selector=None),
        f"[spec.selector: Required value, {TEMPLATE_LABELS_MISMATCH}]",
    ),
    (
        "empty selector",
        deployment(selector={}),
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
        "deployment",
    ),
    (
        "In without values",
        deployment(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
        "[spec.selector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn', spec.selector: Invalid value: v1.LabelSelector{"
        "MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{"
        'v1.LabelSelectorRequirement{Key:"app", Operator:"In", Values:[]string(nil)}}}: '
        "invalid label selector]",
    ),
    (
        "Recreate with rollingUpdate",
        deployment(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
        "'Recreate'",
    ),
    (
        "both zero",
        deployment(strategy={"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}),
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, "
        'IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
    ),
    (
        "bad percent",
        deployment(strategy={"rollingUpdate": {"maxUnavailable": "half"}}),
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, "
        "IntVal:0, StrVal:\"half\"}: a valid percent string must be a numeric string followed "
        "by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ),
    (
        "over 100%",
        deployment(strategy={"rollingUpdate": {"maxUnavailable": "150%"}}),
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, "
        'IntVal:0, StrVal:"150%"}: must not be greater than 100%',
    ),
    (
        "progress deadline",
        deployment(minReadySeconds=30, progressDeadlineSeconds=30),
        "spec.progressDeadlineSeconds: Invalid value: 30: must be greater than minReadySeconds",
    ),
    (
        "revision history",
        deployment(revisionHistoryLimit=-1),
        f"spec.revisionHistoryLimit: {NON_NEGATIVE}",
    ),
    (
        "template restart policy",
        deployment(template=pod_template(restartPolicy="Never")),
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
        '"Always"',
    ),
    (
        "template active deadline",
        deployment(template=pod_template(activeDeadlineSeconds=5)),
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "ReplicaSet is not Supported",
    ),
    (
        "template container name",
        deployment(template=pod_template(containers=[{"name": "App", "image": "x"}])),
        'spec.template.spec.containers[0].name: Invalid value: "App": a lowercase RFC 1123 '
        "label must consist of lower case alphanumeric characters or '-', and must start and "
        "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    (
        "template container ports",
        deployment(
            template=pod_template(
                containers=[
                    {
                        "name": "app",
                        "image": "x",
                        "ports": [
                            {"name": "http", "containerPort": 70000},
                            {"name": "http", "containerPort": 81, "hostPort": -1},
                            {"name": "Bad--", "containerPort": 82, "protocol": "ICMP"},
                        ],
                    }
                ]
            )
        ),
        "[spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be "
        "between 1 and 65535, inclusive, spec.template.spec.containers[0].ports[1].name: "
        'Duplicate value: "http", spec.template.spec.containers[0].ports[1].hostPort: Invalid '
        "value: -1: must be between 1 and 65535, inclusive, "
        'spec.template.spec.containers[0].ports[2].name: Invalid value: "Bad--": must contain '
        "only alpha-numeric characters (a-z, 0-9), and hyphens (-), "
        'spec.template.spec.containers[0].ports[2].name: Invalid value: "Bad--": must not '
        "contain consecutive hyphens, spec.template.spec.containers[0].ports[2].name: Invalid "
        'value: "Bad--": must not begin or end with a hyphen, '
        'spec.template.spec.containers[0].ports[2].protocol: Unsupported value: "ICMP": '
        'supported values: "SCTP", "TCP", "UDP"]',
    ),
    ("replica set replicas", workload("ReplicaSet", replicas=-1), f"spec.replicas: {NON_NEGATIVE}"),
    (
        "replica set selector",
        workload("ReplicaSet", selector={"matchLabels": {"app": "api"}}),
        TEMPLATE_LABELS_MISMATCH,
    ),
    (
        "stateful set policy",
        workload("StatefulSet", podManagementPolicy="Sometimes"),
        'spec.podManagementPolicy: Invalid value: "Sometimes": must be \'OrderedReady\' or '
        "'Parallel'",
    ),
    (
        "stateful set selector",
        workload("StatefulSet", selector={"matchLabels": {"app": "api"}}),
        TEMPLATE_LABELS_MISMATCH,
    ),
    (
        "daemon set selector",
        workload("DaemonSet", selector={"matchLabels": {"app": "api"}}),
        TEMPLATE_LABELS_MISMATCH,
    ),
    (
        "daemon set surge and unavailable",
        workload("DaemonSet", updateStrategy={"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}),
        "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, "
        'IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
    ),
    (
        "job restart policy",
        job(template={"spec": {"containers": [{"name": "c", "image": "perl"}]}}),
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ),
    (
        "job counts",
        job(parallelism=-1, completions=-1, backoffLimit=-1),
        f"[spec.parallelism: {NON_NEGATIVE}, spec.completions: {NON_NEGATIVE}, "
        f"spec.backoffLimit: {NON_NEGATIVE}]",
    ),
    (
        "job completion mode",
        job(completionMode="Sometimes"),
        'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", '
        '"Indexed"',
    ),
    (
        "job manual selector",
        job(manualSelector=True, selector={"matchLabels": {"a": "b"}}),
        "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does "
        "not match template `labels`",
    ),
    (
        "cron schedule",
        cron_job(schedule="61 * * * *"),
        'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
    ),
    (
        "cron schedule fields",
        cron_job(schedule="every hour"),
        'spec.schedule: Invalid value: "every hour": expected exactly 5 fields, found 2: '
        "[every hour]",
    ),
    (
        "cron schedule value",
        cron_job(schedule="x * * * *"),
        'spec.schedule: Invalid value: "x * * * *": failed to parse int from x: strconv.Atoi: '
        'parsing "x": invalid syntax',
    ),
    (
        "cron TZ",
        cron_job(schedule="CRON_TZ=UTC 0 3 * * *"),
        'spec.schedule: Invalid value: "CRON_TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in '
        "schedule, use timeZone field instead",
    ),
    (
        "cron concurrency",
        cron_job(concurrencyPolicy="Sometimes"),
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", '
        '"Forbid", "Replace"',
    ),
    (
        "cron time zone",
        cron_job(timeZone="Mars/Olympus"),
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
    ),
    (
        "cron name",
        cron_job(name="n" * 53),
        f'metadata.name: Invalid value: "{"n" * 53}": must be no more than 52 characters',
    ),
    (
        "cron job template selector",
        cron_job(jobTemplate={"spec": {**job()["spec"], "selector": {"matchLabels": {"a": "b"}}}}),
        "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:"
        'map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
        "`selector` will be auto-generated",
    ),
    ("service without ports", service(), "spec.ports: Required value"),
    (
        "service ports",
        service({"port": 70000}, {"name": "web", "port": 80, "protocol": "ICMP"}),
        "[spec.ports[0].name: Required value, spec.ports[0].port: Invalid value: 70000: must be "
        "between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must "
        "be between 1 and 65535, inclusive, spec.ports[1].protocol: Unsupported value: "
        '"ICMP": supported values: "SCTP", "TCP", "UDP"]',
    ),
    (
        "service duplicate names",
        service({"name": "web", "port": 80}, {"name": "web", "port": 81}),
        'spec.ports[1].name: Duplicate value: "web"',
    ),
    (
        "service duplicate ports",
        service({"name": "a", "port": 80}, {"name": "b", "port": 80}),
        'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", '
        "AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, "
        'StrVal:""}, NodePort:0}',
    ),
    (
        "service type",
        service({"port": 80}, type="Internal"),
        'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", '
        '"ExternalName", "LoadBalancer", "NodePort"',
    ),
    (
        "service node port on ClusterIP",
        service({"port": 80, "nodePort": 30080}),
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
    ),
    (
        "config map keys",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a b": "1", "..x": "2"}},
        "[data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric "
        "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
        "used for validation is '[-._a-zA-Z0-9]+'), data[..x]: Invalid value: \"..x\": must not "
        "start with '..']",
    ),
    (
        "config map size",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x" * (1024 * 1024 + 1)}},
        "[]: Too long: may not be more than 1048576 bytes",
    ),
    (
        "tls secret",
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "kubernetes.io/tls", "data": {"tls.crt": ""}},
        "data[tls.key]: Required value",
    ),
    (
        "role rules",
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"}, "rules": [{"verbs": [], "resources": ["pods"]}]},
        "[rules[0].verbs: Required value: verbs must contain at least one value, "
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group]",
    ),
    (
        "role binding",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "rb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Policy", "name": "r"},
            "subjects": [{"kind": "Robot", "name": "r2"}],
        },
        '[roleRef.kind: Unsupported value: "Policy": supported values: "Role", "ClusterRole", '
        'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", '
        '"User", "Group"]',
    ),
    (
        "lease",
        {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}},
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
    ),
]  # fmt: skip


def _kind_qualified(kind: str) -> str:
    group = {
        "Deployment": "apps", "ReplicaSet": "apps", "StatefulSet": "apps", "DaemonSet": "apps",
        "Job": "batch", "CronJob": "batch", "Role": "rbac.authorization.k8s.io",
        "RoleBinding": "rbac.authorization.k8s.io", "Lease": "coordination.k8s.io",
    }.get(kind, "")  # fmt: skip
    return f"{kind}.{group}" if group else kind


@pytest.mark.parametrize(
    ("case", "body", "message"), CREATE_CASES, ids=[c[0] for c in CREATE_CASES]
)
async def test_invalid_creates_are_rejected_as_upstream_does(
    api: RawAPI, namespace: str, case: str, body: dict[str, Any], message: str
) -> None:
    path = PATHS[body["kind"]].format(ns=namespace)
    reply = await api.request("POST", path, body)
    assert reply.status == 422, reply.body
    name = body["metadata"]["name"]
    assert reply.body["reason"] == "Invalid"
    assert (
        reply.body["message"] == f'{_kind_qualified(body["kind"])} "{name}" is invalid: {message}'
    )
    fields = [cause["field"] for cause in reply.body["details"]["causes"]]
    assert fields and all(message.count(field) for field in fields)


async def _created(api: RawAPI, namespace: str, body: dict[str, Any]) -> str:
    path = PATHS[body["kind"]].format(ns=namespace)
    reply = await api.request("POST", path, body)
    assert reply.status == 201, reply.body
    return f"{path}/{body['metadata']['name']}"


async def _patch_error(api: RawAPI, path: str, patch: dict[str, Any]) -> str:
    reply = await api.request("PATCH", path, patch, content_type=MERGE)
    assert reply.status == 422, reply.body
    message: str = reply.body["message"]
    return message


async def test_selectors_cannot_change(api: RawAPI, namespace: str) -> None:
    moved = {
        "spec": {
            "selector": {"matchLabels": {"app": "web", "tier": "x"}},
            "template": {"metadata": {"labels": {"app": "web", "tier": "x"}}},
        }
    }
    for kind in ("Deployment", "ReplicaSet", "DaemonSet"):
        path = await _created(api, namespace, workload(kind))
        assert await _patch_error(api, path, moved) == (
            f'{_kind_qualified(kind)} "web" is invalid: spec.selector: Invalid value: '
            'v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"}, '
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
        )
        scaled = await api.request(
            "PATCH", path, {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE
        )
        assert scaled.status == 200, scaled.body


async def test_stateful_set_fields_other_than_the_allowed_cannot_change(
    api: RawAPI, namespace: str
) -> None:
    path = await _created(api, namespace, workload("StatefulSet"))
    assert await _patch_error(api, path, {"spec": {"serviceName": "other"}}) == (
        'StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for '
        "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    scaled = await api.request("PATCH", path, {"spec": {"replicas": 3}}, content_type=MERGE)
    assert scaled.status == 200, scaled.body


async def test_job_template_and_completions_cannot_change(api: RawAPI, namespace: str) -> None:
    path = await _created(api, namespace, job())
    changed = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "perl:2"}]}}}}
    assert await _patch_error(api, path, changed) == (
        'Job.batch "pi" is invalid: spec.template: Invalid value: core.PodTemplateSpec{...}: '
        "field is immutable"
    )
    assert await _patch_error(api, path, {"spec": {"completions": 3}}) == (
        'Job.batch "pi" is invalid: spec.completions: Invalid value: 3: field is immutable'
    )
    suspended = await api.request("PATCH", path, {"spec": {"suspend": True}}, content_type=MERGE)
    assert suspended.status == 200, suspended.body


async def test_secret_type_and_immutable_data(api: RawAPI, namespace: str) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "eA=="}, "immutable": True}  # fmt: skip
    path = await _created(api, namespace, secret)
    message = await _patch_error(api, path, {"type": "kubernetes.io/tls", "data": {"a": "eQ=="}})
    assert message == (
        'Secret "s" is invalid: [type: Invalid value: "kubernetes.io/tls": field is immutable, '
        "data: Forbidden: field is immutable when `immutable` is set, data[tls.crt]: Required "
        "value, data[tls.key]: Required value]"
    )


async def test_config_map_data_is_frozen_once_immutable(api: RawAPI, namespace: str) -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True}  # fmt: skip
    path = await _created(api, namespace, config_map)
    assert await _patch_error(api, path, {"data": {"a": "2"}}) == (
        'ConfigMap "c" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    )


async def test_role_ref_cannot_change_and_subjects_get_their_group(
    api: RawAPI, namespace: str
) -> None:
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "readers"},
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "bot"}],
    }
    path = await _created(api, namespace, binding)
    stored = (await api.request("GET", path)).body
    assert stored["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert stored["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
    assert "apiGroup" not in stored["subjects"][1]
    moved = {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"}
    }
    assert await _patch_error(api, path, moved) == (
        'RoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef: Invalid value: '
        'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: '
        "cannot change roleRef"
    )


def test_the_official_client_sees_the_422(api_client: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    body = copy.deepcopy(deployment(replicas=-1))
    with pytest.raises(ApiException) as raised:
        apps.create_namespaced_deployment(namespace, body)
    assert raised.value.status == 422
    status = json.loads(raised.value.body)
    assert status["details"] == {
        "name": "web",
        "group": "apps",
        "kind": "Deployment",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: -1: must be greater than or equal to 0",
                "field": "spec.replicas",
            }
        ],
    }
    created = apps.create_namespaced_deployment(namespace, deployment())
    assert created.spec.replicas == 1


async def test_secret_string_data_is_merged_into_data(api: RawAPI, namespace: str) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds"},
        "data": {"user": "YWRtaW4=", "token": "b2xk"},
        "stringData": {"token": "new", "note": "héllo"},
    }
    path = await _created(api, namespace, secret)
    stored = (await api.request("GET", path)).body
    assert "stringData" not in stored
    assert stored["data"] == {"user": "YWRtaW4=", "token": "bmV3", "note": "aMOpbGxv"}
    bad = {**secret, "metadata": {"name": "bad"}, "stringData": {"a b": "x"}}
    reply = await api.request("POST", PATHS["Secret"].format(ns=namespace), bad)
    assert reply.status == 422
    assert reply.body["details"]["causes"][0]["field"] == "data[a b]"


async def test_workload_status_writes_are_checked(
    api_only: RawAPI, api_only_namespace: str
) -> None:
    # Statuses written by hand: on a cluster without the controllers, which would rewrite them.
    api, namespace = api_only, api_only_namespace
    path = await _created(api, namespace, deployment(replicas=3))
    good = {
        "status": {"replicas": 3, "readyReplicas": 2, "availableReplicas": 2, "collisionCount": 2}
    }
    reply = await api.request("PATCH", f"{path}/status", good, content_type=MERGE)
    assert reply.status == 200, reply.body
    bad = {
        "status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 3, "collisionCount": 1}
    }
    reply = await api.request("PATCH", f"{path}/status", bad, content_type=MERGE)
    assert reply.status == 422
    assert reply.body["message"] == (
        'Deployment.apps "web" is invalid: [status.readyReplicas: Invalid value: 2: cannot be '
        "greater than status.replicas, status.availableReplicas: Invalid value: 3: cannot be "
        "greater than status.replicas, status.availableReplicas: Invalid value: 3: cannot be "
        "greater than readyReplicas, status.collisionCount: Invalid value: 1: cannot be "
        "decremented]"
    )
    stateful = await _created(api, namespace, workload("StatefulSet"))
    reply = await api.request(
        "PATCH", f"{stateful}/status", {"status": {"replicas": -1}}, content_type=MERGE
    )
    assert reply.status == 422
    # 0 > -1: upstream reports every other count as over status.replicas too.
    over = "Invalid value: 0: cannot be greater than status.replicas"
    assert reply.body["message"] == (
        f'StatefulSet.apps "web" is invalid: [status.replicas: {NON_NEGATIVE}, '
        f"status.readyReplicas: {over}, status.currentReplicas: {over}, "
        f"status.updatedReplicas: {over}, status.availableReplicas: {over}]"
    )
