"""``setpoint init --plugin ansible`` and ``create api`` in such a project: Operator SDK's layout.

``init`` writes ``watches.yaml``, ``roles/``, ``playbooks/``, ``requirements.yml``, a ``PROJECT``
file (which names the domain), ``config/`` (``crd``, ``rbac``, ``samples``), a Makefile and a
README. ``create api`` adds a role skeleton, its watch, a CRD that keeps unknown fields in
``spec`` and ``status`` (as Operator SDK's ``create api`` does), a sample and the kind's RBAC
rules. Existing files are never overwritten; ``watches.yaml``, the kustomizations and the Role
are added to.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import yaml

from setpoint.api.resources.custom_resource import default_plural

__all__ = ["create_ansible_api", "init_ansible_project", "is_ansible_project"]

WATCH_MARKER = "# +kubebuilder:scaffold:watch"
LAYOUT = "ansible.sdk.operatorframework.io/v1"

_WATCHES = f"""---
# Each entry maps a kind to the role or playbook that reconciles it (`setpoint create api` adds
# entries). Fields: docs/ansible-operators.md in setpoint.
{WATCH_MARKER}
"""

_REQUIREMENTS = """---
# kubernetes.core: `python -m setpoint.ansible.install_collections` installs it from PyPI.
# operator_sdk.util (k8s_status, requeue_after) comes with setpoint.
collections:
  - name: kubernetes.core
    version: "6.2.0"
"""

_MAKEFILE = """# The operator's tasks; `setpoint` comes from `pip install 'setpoint[ansible]'`.
.PHONY: run install uninstall deps

deps:
\tpython -m setpoint.ansible.install_collections

install:
\tkubectl apply -f config/crd/bases

uninstall:
\tkubectl delete -f config/crd/bases

run:
\tsetpoint run .
"""

_README = """# {name}

An Ansible operator in Operator SDK's layout, run by setpoint.

```sh
pip install 'setpoint[ansible]' && make deps
setpoint create api --group cache --version v1alpha1 --kind Memcached
make install run
```

`watches.yaml` maps each kind to its role (`roles/`) or playbook (`playbooks/`).
"""

# Operator SDK's scaffolded Role grants these for what roles usually manage, plus Events and
# Leases for setpoint itself; `create api` adds each kind's rules.
_BASE_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["secrets", "pods", "pods/exec", "pods/log", "configmaps",
                                      "services"],
     "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
    {"apiGroups": ["apps"], "resources": ["deployments", "daemonsets", "replicasets",
                                          "statefulsets"],
     "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
    {"apiGroups": ["events.k8s.io", ""], "resources": ["events"],
     "verbs": ["create", "patch", "update"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
     "verbs": ["create", "get", "list", "update", "watch"]},
]  # fmt: skip

_ROLE_FILES = {
    "tasks/main.yml": "---\n# tasks file for {kind}\n",
    "defaults/main.yml": "---\n# defaults file for {kind}\n",
    "handlers/main.yml": "---\n# handlers file for {kind}\n",
    "vars/main.yml": "---\n# vars file for {kind}\n",
    "meta/main.yml": (
        "---\ngalaxy_info:\n  role_name: {kind_lower}\n  description: reconciles {kind}\n"
        "  min_ansible_version: '2.16'\ndependencies: []\n"
    ),
    "files/.placeholder": "",
    "templates/.placeholder": "",
    "README.md": "# {kind}\n\nThe role that reconciles {kind} ({api_version}).\n",
}

Echo = Callable[[str], None]


def is_ansible_project(root: Path) -> bool:
    """True for a project made by ``init --plugin ansible`` (its PROJECT file says so)."""
    try:
        project = yaml.safe_load((root / "PROJECT").read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(project, dict) and LAYOUT in (project.get("layout") or [])


def _write(root: Path, path: str, text: str) -> None:
    destination = root / path
    if destination.exists():
        click.echo(f"  kept     {path} (exists)")
        return
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(text)
    click.echo(f"  created  {path}")


def _dump(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False)


def init_ansible_project(root: Path, name: str, domain: str, namespaced: bool) -> None:
    """Write a new Ansible operator project into ``root``."""
    role_kind = "Role" if namespaced else "ClusterRole"
    files = {
        "PROJECT": _dump(
            {"domain": domain, "layout": [LAYOUT], "projectName": name, "resources": []}
        ),
        "watches.yaml": _WATCHES,
        "requirements.yml": _REQUIREMENTS,
        "Makefile": _MAKEFILE,
        "README.md": _README.format(name=name),
        ".gitignore": "__pycache__/\n",
        "roles/.placeholder": "",
        "playbooks/.placeholder": "",
        "config/crd/kustomization.yaml": _dump({"resources": []}),
        "config/samples/kustomization.yaml": _dump({"resources": []}),
        "config/rbac/role.yaml": _dump(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": role_kind,
                "metadata": {"name": "manager-role"},
                "rules": _BASE_RULES,
            }
        ),
    }
    click.echo(f"Creating {root}/ (Ansible operator)")
    for path, text in files.items():
        _write(root, path, text)
    click.echo(
        f"Next: cd {root} && setpoint create api --group GROUP --version v1alpha1 --kind KIND"
    )


def create_ansible_api(
    root: Path, group: str, api_version: str, kind: str, cluster_scoped: bool
) -> None:
    """Add a kind reconciled by a new role to the Ansible project in ``root``."""
    project_path = root / "PROJECT"
    project = yaml.safe_load(project_path.read_text()) or {}
    full_group = f"{group}.{project['domain']}"
    kind_lower = kind.lower()
    plural = default_plural(kind)
    values = {"kind": kind, "kind_lower": kind_lower, "api_version": f"{full_group}/{api_version}"}
    watches_path = root / "watches.yaml"
    watches = watches_path.read_text()
    entry = (
        f"- version: {api_version}\n  group: {full_group}\n  kind: {kind}\n  role: {kind_lower}\n"
    )
    if f"kind: {kind}\n" in watches and f"group: {full_group}\n" in watches:
        raise click.UsageError(f"watches.yaml already has {kind} ({full_group})")
    for path, text in _ROLE_FILES.items():
        _write(root, f"roles/{kind_lower}/{path}", text.format(**values))
    if WATCH_MARKER in watches:
        watches = watches.replace(WATCH_MARKER, entry + WATCH_MARKER)
    else:
        watches = watches.rstrip("\n") + "\n" + entry
    watches_path.write_text(watches)
    click.echo("  updated  watches.yaml")
    crd_file = f"{full_group}_{plural}.yaml"
    _write(root, f"config/crd/bases/{crd_file}", _dump(_crd(full_group, api_version, kind,
                                                           plural, cluster_scoped)))  # fmt: skip
    _add_resource(root / "config/crd/kustomization.yaml", f"bases/{crd_file}")
    sample = f"{full_group}_{api_version}_{kind_lower}.yaml"
    sample_metadata: dict[str, Any] = {"name": f"{kind_lower}-sample"}
    _write(root, f"config/samples/{sample}", _dump({
        "apiVersion": f"{full_group}/{api_version}", "kind": kind, "metadata": sample_metadata,
        "spec": {},
    }))  # fmt: skip
    _add_resource(root / "config/samples/kustomization.yaml", sample)
    role_path = root / "config/rbac/role.yaml"
    role = yaml.safe_load(role_path.read_text())
    role["rules"].append(
        {
            "apiGroups": [full_group],
            "resources": [plural, f"{plural}/status", f"{plural}/finalizers"],
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
        }
    )
    role_path.write_text(_dump(role))
    click.echo("  updated  config/rbac/role.yaml")
    project.setdefault("resources", []).append(
        {"group": group, "domain": project["domain"], "version": api_version, "kind": kind}
    )
    project_path.write_text(_dump(project))
    click.echo(f"{kind} ({full_group}/{api_version}) added: edit roles/{kind_lower}/tasks/main.yml")


def _add_resource(kustomization: Path, resource: str) -> None:
    document = yaml.safe_load(kustomization.read_text()) if kustomization.exists() else {}
    resources = document.setdefault("resources", [])
    if resource not in resources:
        resources.append(resource)
        kustomization.parent.mkdir(parents=True, exist_ok=True)
        kustomization.write_text(_dump(document))


def _crd(group: str, version: str, kind: str, plural: str, cluster_scoped: bool) -> dict[str, Any]:
    open_object = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
            },
            "scope": "Cluster" if cluster_scoped else "Namespaced",
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "description": f"{kind} is the Schema for the {plural} API",
                            "type": "object",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": {
                                    **open_object,
                                    "description": f"Spec defines the desired state of {kind}",
                                },
                                "status": {
                                    **open_object,
                                    "description": f"Status defines the observed state of {kind}",
                                },
                            },
                        }
                    },
                }
            ],
        },
    }
