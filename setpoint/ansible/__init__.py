"""Ansible-based operators compatible with Operator SDK's: watches.yaml, roles and playbooks.

An Operator SDK Ansible operator is a ``watches.yaml`` that maps kinds to Ansible roles or
playbooks. ``setpoint run watches.yaml`` (or the project directory) runs it: one controller per
watch, each reconcile running the role or playbook with ``ansible-runner`` and the CR as extra
variables (:mod:`.parameters`), conditions in the CR's status (:mod:`.status`), and a proxy
between Ansible and the API server (:mod:`.proxy`) that makes the CR the owner of what the run
creates and serves reads from the operator's cache. Dependents are watched as they appear
(:mod:`.operator`), and each run's trigger is logged and recorded (:mod:`.triggers`). The
operator serves Operator SDK's ``ansible_operator_*`` metrics (:mod:`.metrics`) and receives the
``osdk_metric`` module's user-defined ones (:mod:`.user_metrics`); ``setpoint run`` installs what
the project's requirements.yml lists and is missing (:mod:`.requirements`).

The pieces, from the outside in: :func:`load_operator` reads a watches.yaml
(:mod:`.watches`) into an :class:`AnsibleOperator`, an ``Operator`` whose reconcilers are
:class:`AnsibleReconciler` s; each run goes through :func:`run_ansible` (:mod:`.runner`).

Needs the ``ansible`` extra (``pip install 'setpoint[ansible]'``) and the ``kubernetes.core``
collection (``python -m setpoint.ansible.install_collections``). See docs/ansible-operators.md.
"""

from __future__ import annotations

from setpoint.ansible.operator import AnsibleOperator, load_operator
from setpoint.ansible.reconciler import AnsibleReconciler
from setpoint.ansible.runner import run_ansible
from setpoint.ansible.watches import Watch, WatchesError, load_watches

__all__ = [
    "AnsibleOperator",
    "AnsibleReconciler",
    "Watch",
    "WatchesError",
    "load_operator",
    "load_watches",
    "run_ansible",
]
