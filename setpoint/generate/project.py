"""Everything ``setpoint generate`` writes, as a map of relative path -> file text.

The layout is kubebuilder's ``config/`` (so its users find their way, and ``kubectl
kustomize DIR/default`` renders one installable set), plus a Helm chart and a Dockerfile::

    crd/          one CustomResourceDefinition per resource, from the models
    rbac/         ServiceAccount, the least-privilege (Cluster)Role and binding, leader election
    manager/      the operator's Namespace, Deployment (probes, metrics, hardened) and Service
    default/      kustomization: namespace, name prefix, and the three above
    samples/      one valid object per resource
    prometheus/   a ServiceMonitor for the metrics Service
    chart/        the same as a Helm chart, with values for image, replicas, resources ...
    Dockerfile    multi-stage, slim, non-root, ``setpoint run`` as entry point

Generation is deterministic: the same code gives byte-identical files, so a test (or CI) can
check that regenerating produces no diff.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from setpoint.api.resources.custom_resource import CustomResource
from setpoint.api.resources.definition import crd_manifests
from setpoint.generate.rbac import Rule, leader_election_rules, role_rules
from setpoint.generate.samples import sample_object
from setpoint.manager.operator import Operator, ReconcilerDeclaration

__all__ = ["GenerateOptions", "models_of", "project_files", "rbac_files"]

METRICS_PORT = 8080
PROBE_PORT = 8081


@dataclass(frozen=True)
class GenerateOptions:
    """What the generated manifests need that the code does not say."""

    target: str
    """The ``setpoint run`` TARGET inside the image (a module path such as ``myop.operator``)."""
    image: str = "controller:latest"
    namespace: str | None = None
    """The operator's namespace (default ``<name>-system``)."""
    namespaced: bool = False
    """A Role per watched namespace instead of a ClusterRole."""
    replicas: int = 1


def models_of(
    operators: Sequence[Operator], extra: Sequence[type[CustomResource]] = ()
) -> list[type[CustomResource]]:
    """The CustomResource models the operators reconcile, own or watch, plus ``extra``."""
    found: list[type[CustomResource]] = []
    for operator in operators:
        for declaration in operator.declarations:
            for model in declaration.models.values():
                if (
                    isinstance(model, type)
                    and issubclass(model, CustomResource)
                    and model.__resource__ is not None
                    and model not in found
                ):
                    found.append(model)
    for model in extra:
        if model not in found:
            found.append(model)
    return found


def _dump(*documents: dict[str, Any], header: str = "") -> str:
    body = "---\n".join(
        yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=100)
        for document in documents
    )
    return header + body


def _rule_yaml(rules: Sequence[Rule]) -> list[dict[str, Any]]:
    return [rule.as_manifest() for rule in rules]


def _notes_header(rules: Sequence[Rule]) -> str:
    lines = [f"# {rule.api_group or 'core'}/{','.join(rule.resources)}: {note}"
             for rule in rules for note in rule.notes]  # fmt: skip
    if not lines:
        return ""
    return "# Sensitive access, granted because the code asks for it:\n" + "\n".join(lines) + "\n"


def project_files(
    operators: Sequence[Operator],
    models: Sequence[type[CustomResource]],
    options: GenerateOptions,
) -> dict[str, str]:
    """Every generated file, by path relative to the output directory."""
    if not operators:
        raise ValueError("nothing to generate: TARGET defines no operator")
    name = operators[0].name
    namespace = options.namespace or f"{name}-system"
    declarations: list[ReconcilerDeclaration] = [
        declaration for operator in operators for declaration in operator.declarations
    ]
    files: dict[str, str] = {}

    crds = crd_manifests(models)
    crd_files = []
    for crd in crds:
        spec = crd["spec"]
        path = f"{spec['group']}_{spec['names']['plural']}.yaml"
        crd_files.append(path)
        files[f"crd/{path}"] = _dump(crd)
    files["crd/kustomization.yaml"] = _dump(_kustomization(crd_files))

    rules = role_rules(declarations)
    role_kind = "Role" if options.namespaced else "ClusterRole"
    files.update(rbac_files(rules, role_kind, namespace, header=_notes_header(rules)))

    files["manager/manager.yaml"] = _dump(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "system"}},
        deployment_manifest(name, options),
    )
    files["manager/metrics_service.yaml"] = _dump(_metrics_service(name))
    files["manager/kustomization.yaml"] = _dump(
        _kustomization(["manager.yaml", "metrics_service.yaml"])
    )
    files["default/kustomization.yaml"] = _dump(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "namespace": namespace,
            "namePrefix": f"{name}-",
            "labels": [{"pairs": {"app.kubernetes.io/name": name}}],
            "resources": ["../crd", "../rbac", "../manager"],
        }
    )

    _add_webhooks(files, operators, name, namespace)

    sample_files = []
    for model in sorted(models, key=lambda m: (m.declaration().group, m.declaration().kind)):
        declaration = model.declaration()
        path = f"{declaration.group}_{declaration.version}_{declaration.singular}.yaml"
        sample_files.append(path)
        files[f"samples/{path}"] = _dump(sample_object(model))
    files["samples/kustomization.yaml"] = _dump(_kustomization(sample_files))

    files["prometheus/monitor.yaml"] = _dump(_service_monitor(name))
    files["prometheus/kustomization.yaml"] = _dump(_kustomization(["monitor.yaml"]))
    files["Dockerfile"] = _dockerfile(options)
    from setpoint.generate.chart import chart_files
    from setpoint.generate.webhooks import converted_crds, plural_of, webhook_declarations

    webhooks = webhook_declarations(operators)
    plurals = {(d.api_version, d.kind): plural_of(d) for d in webhooks}
    chart = chart_files(
        name,
        crds,
        rules,
        options,
        webhooks,
        lambda api_version, kind: plurals[(api_version, kind)],
        converted_crds(operators),
    )
    for path, text in chart.items():
        files[f"chart/{path}"] = text
    return dict(sorted(files.items()))


def rbac_files(
    rules: Sequence[Rule], role_kind: str, namespace: str, *, header: str = ""
) -> dict[str, str]:
    """``rbac/``: the ServiceAccount, the (Cluster)Role of ``rules`` (``header`` above it) and
    its binding, the leader-election Role and binding, and their kustomization."""
    binding_kind = "RoleBinding" if role_kind == "Role" else "ClusterRoleBinding"
    return {
        "rbac/service_account.yaml": _dump(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "controller-manager"},
            }
        ),
        "rbac/role.yaml": _dump(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": role_kind,
                "metadata": {"name": "manager-role"},
                "rules": _rule_yaml(rules),
            },
            header=header,
        ),
        "rbac/role_binding.yaml": _dump(
            _binding(binding_kind, "manager-rolebinding", role_kind, "manager-role", namespace)
        ),
        "rbac/leader_election_role.yaml": _dump(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": "leader-election-role"},
                "rules": _rule_yaml(leader_election_rules()),
            }
        ),
        "rbac/leader_election_role_binding.yaml": _dump(
            _binding(
                "RoleBinding",
                "leader-election-rolebinding",
                "Role",
                "leader-election-role",
                namespace,
            )
        ),
        "rbac/kustomization.yaml": _dump(
            _kustomization(
                [
                    "service_account.yaml",
                    "role.yaml",
                    "role_binding.yaml",
                    "leader_election_role.yaml",
                    "leader_election_role_binding.yaml",
                ]
            )
        ),
    }


def _add_webhooks(
    files: dict[str, str], operators: Sequence[Operator], name: str, namespace: str
) -> None:
    """``webhook/``, ``certmanager/`` and their place in ``default/`` when the operators serve
    admission or conversion webhooks (:mod:`setpoint.generate.webhooks`)."""
    from setpoint.generate.webhooks import (
        conversion_patches,
        converted_crds,
        webhook_declarations,
        webhook_files,
    )

    declarations = webhook_declarations(operators)
    converted = converted_crds(operators)
    if not declarations and not converted:
        return
    files.update(webhook_files(declarations, name, namespace, _dump, _kustomization))
    patches = conversion_patches(converted, name, namespace, _dump)
    files.update(patches)
    default = yaml.safe_load(files["default/kustomization.yaml"])
    default["resources"] = [*default["resources"], "../webhook", "../certmanager"]
    default["patches"] = [
        {"path": "manager_webhook_patch.yaml"},
        *({"path": path.removeprefix("default/")} for path in sorted(patches)),
    ]
    files["default/kustomization.yaml"] = _dump(default)


def _kustomization(resources: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    }


def _binding(kind: str, name: str, role_kind: str, role: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [
            {"kind": "ServiceAccount", "name": "controller-manager", "namespace": namespace}
        ],
    }


def container_args(options: GenerateOptions) -> list[str]:
    """The ``setpoint run`` arguments of the manager container."""
    return [
        "run",
        options.target,
        "--leader-elect",
        f"--metrics-bind-address=:{METRICS_PORT}",
        f"--health-probe-bind-address=:{PROBE_PORT}",
        "--log-format=json",
    ]


def security_context() -> dict[str, Any]:
    """The container's hardened securityContext (restricted Pod Security Standard)."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def deployment_manifest(name: str, options: GenerateOptions) -> dict[str, Any]:
    labels = {"control-plane": "controller-manager"}
    probe = {"httpGet": {"port": PROBE_PORT}, "initialDelaySeconds": 5, "periodSeconds": 10}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "controller-manager", "namespace": "system", "labels": labels},
        "spec": {
            "replicas": options.replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": "controller-manager",
                    "terminationGracePeriodSeconds": 30,
                    "securityContext": {"runAsNonRoot": True},
                    "containers": [
                        {
                            "name": "manager",
                            "image": options.image,
                            "command": ["setpoint"],
                            "args": container_args(options),
                            "ports": [
                                {"name": "metrics", "containerPort": METRICS_PORT},
                                {"name": "probes", "containerPort": PROBE_PORT},
                            ],
                            "livenessProbe": {
                                **probe,
                                "httpGet": {"path": "/healthz", "port": PROBE_PORT},
                            },
                            "readinessProbe": {
                                **probe,
                                "httpGet": {"path": "/readyz", "port": PROBE_PORT},
                            },
                            "resources": {
                                "requests": {"cpu": "10m", "memory": "64Mi"},
                                "limits": {"cpu": "500m", "memory": "256Mi"},
                            },
                            "securityContext": security_context(),
                        }
                    ],
                },
            },
        },
    }


def _metrics_service(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "metrics-service",
            "namespace": "system",
            "labels": {"control-plane": "controller-manager"},
        },
        "spec": {
            "selector": {"control-plane": "controller-manager"},
            "ports": [{"name": "metrics", "port": METRICS_PORT, "targetPort": "metrics"}],
        },
    }


def _service_monitor(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {
            "name": f"{name}-metrics-monitor",
            "labels": {"control-plane": "controller-manager"},
        },
        "spec": {
            "endpoints": [{"port": "metrics", "path": "/metrics", "interval": "30s"}],
            "selector": {"matchLabels": {"control-plane": "controller-manager"}},
        },
    }


def _dockerfile(options: GenerateOptions) -> str:
    args = ", ".join(f'"{arg}"' for arg in container_args(options))
    return f"""# Generated by `setpoint generate`. Build from the project root:
#   docker build -f <this file> -t {options.image} .
FROM python:3.12-slim AS build
WORKDIR /src
COPY . .
# wheels/: setpoint's wheel when it comes from no package index (`setpoint init` puts it there).
RUN mkdir -p wheels && python -m venv /venv \\
    && /venv/bin/pip install --no-cache-dir --find-links wheels .

FROM python:3.12-slim
COPY --from=build /venv /venv
ENV PATH=/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE {METRICS_PORT} {PROBE_PORT}
ENTRYPOINT ["setpoint"]
CMD [{args}]
"""
