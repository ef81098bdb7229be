"""``setpoint generate metacontroller``: the manifests that run ``setpoint metacontroller run``.

The controller of Metacontroller's kinds is an operator like any other, so it gets the same
layout as ``project_files`` (kubebuilder's ``config/``): ``crd/`` (the three
``metacontroller.k8s.io`` CRDs), ``rbac/`` (ServiceAccount, ClusterRole and binding, leader
election), ``manager/`` (Namespace, Deployment running ``setpoint metacontroller run``, metrics
Service) and ``default/``. Its ClusterRole is computed from the CompositeControllers and
DecoratorControllers it will run, read from their manifests:

- the ``metacontroller.k8s.io`` kinds: read; ``controllerrevisions``: read and write, when a
  CompositeController has a rolling child type;
- each parent (or decorated) resource: read, update and patch, its ``/status`` and
  ``/finalizers``;
- each child (or attachment) resource: read, create, update, patch and delete;
- the Services (and their Endpoints) of ``service`` webhooks, and the Secrets and ConfigMaps
  named by ``caBundle``, ``authorization``, ``basicAuth`` and ``clientTLS`` (also in
  ``endpointConfigs``): ``get`` on those names only;
- Events: create and patch.

The objects a ``customize`` hook names at run time cannot be known here: they are reported in
:attr:`MetacontrollerManifests.notes`, and their read rules are the user's to add.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from setpoint.api.rbac import Permission
from setpoint.composite.crds import GROUP, metacontroller_crds
from setpoint.generate.project import (
    METRICS_PORT,
    PROBE_PORT,
    GenerateOptions,
    _dump,
    _kustomization,
    _metrics_service,
    _notes_header,
    deployment_manifest,
    rbac_files,
)
from setpoint.generate.rbac import role_rules
from setpoint.manager.operator import ReconcilerDeclaration

__all__ = [
    "MetacontrollerManifests",
    "declarations_in",
    "metacontroller_files",
    "metacontroller_permissions",
]

#: The name of the operator (and the prefix of its objects), as `setpoint metacontroller run`.
NAME = "metacontroller"
#: Metacontroller's own namespace.
DEFAULT_NAMESPACE = "metacontroller"
_KINDS = ("CompositeController", "DecoratorController")
_READ = ("get", "list", "watch")
_WRITE = ("create", "update", "patch", "delete")
_CONNECTION_FIELDS = ("caBundle", "authorization", "basicAuth", "clientTLS")


@dataclass
class MetacontrollerManifests:
    """The generated files, and what the user must know about them."""

    files: dict[str, str]
    controllers: list[str]
    notes: list[str] = field(default_factory=list)


def declarations_in(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """The CompositeController and DecoratorController objects in the YAML files ``paths``
    (directories are searched for ``*.yaml``/``*.yml``), in file order; ValueError naming a
    file that is not YAML."""
    found: list[dict[str, Any]] = []
    for path in paths:
        path = Path(path)
        files = (
            sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
            if path.is_dir()
            else [path]
        )
        for file in files:
            try:
                documents = list(yaml.safe_load_all(file.read_text()))
            except (OSError, yaml.YAMLError) as error:
                raise ValueError(f"{file}: {' '.join(str(error).split())}") from None
            for document in documents:
                if (
                    isinstance(document, dict)
                    and document.get("apiVersion") == f"{GROUP}/v1alpha1"
                    and document.get("kind") in _KINDS
                ):
                    found.append(document)
    return found


def _group(api_version: str) -> str:
    return str(api_version).rpartition("/")[0]


def _rule(obj: Mapping[str, Any], where: str) -> tuple[str, str]:
    if not isinstance(obj, Mapping) or not obj.get("apiVersion") or not obj.get("resource"):
        raise ValueError(f"{where}: apiVersion and resource are required")
    return _group(str(obj["apiVersion"])), str(obj["resource"])


def _refs(webhook: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """(resource, name) of the Secrets and ConfigMaps a webhook's settings read."""
    for field_name in _CONNECTION_FIELDS:
        spec = webhook.get(field_name)
        if not isinstance(spec, Mapping):
            continue
        for ref_name, resource in (("secretRef", "secrets"), ("configMapRef", "configmaps")):
            ref = spec.get(ref_name)
            if isinstance(ref, Mapping) and ref.get("name"):
                yield resource, str(ref["name"])


def metacontroller_permissions(
    declarations: Sequence[Mapping[str, Any]],
) -> tuple[list[Permission], list[str]]:
    """The rules running ``declarations`` needs, and notes on what cannot be known here."""
    permissions = [
        Permission(GROUP, "compositecontrollers", _READ),
        Permission(GROUP, "decoratorcontrollers", _READ),
    ]
    named: dict[tuple[str, str], set[str]] = {}
    notes: list[str] = []
    rolling = False

    def parent(group: str, resource: str) -> None:
        permissions.append(Permission(group, resource, (*_READ, "update", "patch")))
        permissions.append(Permission(group, f"{resource}/status", ("get", "update", "patch")))
        permissions.append(Permission(group, f"{resource}/finalizers", ("update",)))

    for declaration in declarations:
        kind, name = declaration["kind"], (declaration.get("metadata") or {}).get("name")
        where = f"{kind} {name}"
        spec = declaration.get("spec") or {}
        if kind == "CompositeController":
            parent(*_rule(spec.get("parentResource") or {}, f"{where}: spec.parentResource"))
            children = spec.get("childResources") or []
            rules_field = "childResources"
        else:
            for index, rule in enumerate(spec.get("resources") or []):
                parent(*_rule(rule, f"{where}: spec.resources[{index}]"))
            children = spec.get("attachments") or []
            rules_field = "attachments"
        for index, child in enumerate(children):
            group, resource = _rule(child, f"{where}: spec.{rules_field}[{index}]")
            permissions.append(Permission(group, resource, (*_READ, *_WRITE)))
            method = ((child.get("updateStrategy") or {}).get("method")) or ""
            rolling = rolling or (kind == "CompositeController" and method.startswith("Rolling"))
        hooks = spec.get("hooks") or {}
        webhooks = [
            (hook or {}).get("webhook") or {} for hook in hooks.values() if isinstance(hook, dict)
        ]
        for webhook in [*webhooks, *(spec.get("endpointConfigs") or [])]:
            if not isinstance(webhook, Mapping):
                continue
            service = webhook.get("service")
            if isinstance(service, Mapping) and service.get("name"):
                for resource in ("services", "endpoints"):
                    named.setdefault(("", resource), set()).add(str(service["name"]))
            for resource, ref_name in _refs(webhook):
                named.setdefault(("", resource), set()).add(ref_name)
        if hooks.get("customize"):
            notes.append(
                f"{where}: its customize hook names related resources at run time; "
                "add read rules (get, list, watch) for them to rbac/role.yaml"
            )
    if rolling:
        permissions.append(Permission(GROUP, "controllerrevisions", (*_READ, *_WRITE)))
    for (group, resource), names in sorted(named.items()):
        permissions.append(
            Permission(
                group,
                resource,
                ("get",),
                resource_names=tuple(sorted(names)),
                reason="read by a webhook's connection settings" if resource == "secrets" else "",
            )
        )
    return permissions, notes


def metacontroller_files(
    declarations: Sequence[Mapping[str, Any]], options: GenerateOptions
) -> MetacontrollerManifests:
    """Every file, by path relative to the output directory (see the module docs)."""
    if options.namespaced:
        raise ValueError(
            "--namespaced: CompositeControllers and DecoratorControllers are cluster-scoped; "
            "`setpoint metacontroller run` needs a ClusterRole"
        )
    namespace = options.namespace or DEFAULT_NAMESPACE
    permissions, notes = metacontroller_permissions(declarations)
    rules = role_rules(
        [
            ReconcilerDeclaration(
                name=NAME,
                for_=(f"{GROUP}/v1alpha1", "CompositeController"),
                owns=(),
                watches=(),
                permissions=tuple(permissions),
                models={},
                need_leader_election=True,
                infer_permissions=False,
            )
        ]
    )
    files: dict[str, str] = {}
    crd_paths = []
    for crd in metacontroller_crds():
        path = f"{GROUP}_{crd['spec']['names']['plural']}.yaml"
        crd_paths.append(path)
        files[f"crd/{path}"] = _dump(crd)
    files["crd/kustomization.yaml"] = _dump(_kustomization(crd_paths))
    header = _notes_header(rules) + "".join(f"# {note}\n" for note in notes)
    files.update(rbac_files(rules, "ClusterRole", namespace, header=header))
    deployment = deployment_manifest(NAME, options)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    container["args"] = [
        "metacontroller",
        "run",
        "--leader-elect",
        f"--metrics-bind-address=:{METRICS_PORT}",
        f"--health-probe-bind-address=:{PROBE_PORT}",
        "--log-format=json",
    ]
    files["manager/manager.yaml"] = _dump(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "system"}}, deployment
    )
    files["manager/metrics_service.yaml"] = _dump(_metrics_service(NAME))
    files["manager/kustomization.yaml"] = _dump(
        _kustomization(["manager.yaml", "metrics_service.yaml"])
    )
    files["default/kustomization.yaml"] = _dump(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "namespace": namespace,
            "namePrefix": f"{NAME}-",
            "labels": [{"pairs": {"app.kubernetes.io/name": NAME}}],
            "resources": ["../crd", "../rbac", "../manager"],
        }
    )
    controllers = [f"{d['kind']} {(d.get('metadata') or {}).get('name')}" for d in declarations]
    return MetacontrollerManifests(dict(sorted(files.items())), controllers, notes)
