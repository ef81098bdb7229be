"""operator_sdk.util.k8s_status: update the status of a custom resource."""

from __future__ import annotations

DOCUMENTATION = r"""
module: k8s_status
short_description: Update the status of a Kubernetes custom resource
description:
  - Merges C(status) into the resource's status and C(conditions) into its
    C(status.conditions) (by type; C(lastTransitionTime) changes only when a condition's
    status does), then writes the status subresource when something changed.
options:
  api_version: {type: str, required: true, aliases: [apiVersion]}
  kind: {type: str, required: true}
  name: {type: str, required: true}
  namespace: {type: str}
  status: {type: dict, default: {}}
  conditions: {type: list, elements: dict, default: []}
  replace_lists:
    type: bool
    default: false
    description: Replace lists instead of merging conditions.
  force: {type: bool, default: false, description: Replace the whole status.}
  kubeconfig: {type: raw, description: Path of a kubeconfig (default K8S_AUTH_KUBECONFIG).}
  context: {type: str}
"""

EXAMPLES = r"""
- operator_sdk.util.k8s_status:
    api_version: cache.example.com/v1alpha1
    kind: Memcached
    name: "{{ ansible_operator_meta.name }}"
    namespace: "{{ ansible_operator_meta.namespace }}"
    status:
      nodes: "{{ pods | map(attribute='metadata.name') | list }}"
"""

RETURN = r"""
result:
  description: The resource after the update.
  type: dict
  returned: always
"""

import copy  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _merge_conditions(current: list, given: list) -> list:
    merged = [dict(condition) for condition in current if isinstance(condition, dict)]
    for condition in given:
        condition = dict(condition)
        old = next((c for c in merged if c.get("type") == condition.get("type")), None)
        if old is not None and old.get("status") == condition.get("status"):
            condition.setdefault("lastTransitionTime", old.get("lastTransitionTime") or _now())
        else:
            condition.setdefault("lastTransitionTime", _now())
        merged = [c for c in merged if c.get("type") != condition.get("type")]
        merged.append(condition)
    return merged


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "api_version": {"type": "str", "required": True, "aliases": ["apiVersion"]},
            "kind": {"type": "str", "required": True},
            "name": {"type": "str", "required": True},
            "namespace": {"type": "str"},
            "status": {"type": "dict", "default": {}},
            "conditions": {"type": "list", "elements": "dict", "default": []},
            "replace_lists": {"type": "bool", "default": False},
            "force": {"type": "bool", "default": False},
            "kubeconfig": {"type": "raw"},
            "context": {"type": "str"},
        },
        supports_check_mode=True,
    )
    try:
        from kubernetes import config, dynamic
        from kubernetes.client import api_client
        from kubernetes.dynamic.exceptions import DynamicApiError
    except ImportError as error:
        module.fail_json(msg=f"k8s_status needs the kubernetes Python client: {error}")
        return
    params = module.params
    kubeconfig = params["kubeconfig"] or os.environ.get("K8S_AUTH_KUBECONFIG")
    try:
        client = dynamic.DynamicClient(
            api_client.ApiClient(
                configuration=config.new_client_from_config(
                    config_file=kubeconfig, context=params["context"]
                ).configuration
            )
        )
        resource = client.resources.get(api_version=params["api_version"], kind=params["kind"])
        current = resource.get(name=params["name"], namespace=params["namespace"]).to_dict()
    except DynamicApiError as error:
        module.fail_json(msg=f"Failed to get {params['kind']} {params['name']}: {error.summary()}")
        return
    except Exception as error:  # the kubeconfig, the connection
        module.fail_json(msg=f"Failed to get {params['kind']} {params['name']}: {error}")
        return
    old_status = current.get("status") or {}
    if params["force"]:
        new_status = copy.deepcopy(params["status"])
    else:
        new_status = copy.deepcopy(old_status)
        new_status.update(copy.deepcopy(params["status"]))
    given_conditions = params["conditions"] or new_status.pop("conditions", None) or []
    if params["force"] or params["replace_lists"]:
        if given_conditions:
            new_status["conditions"] = _merge_conditions([], given_conditions)
    elif given_conditions or old_status.get("conditions"):
        new_status["conditions"] = _merge_conditions(
            old_status.get("conditions") or [], given_conditions
        )
    if new_status == old_status:
        module.exit_json(changed=False, result=current)
        return
    if module.check_mode:
        module.exit_json(changed=True, result={**current, "status": new_status})
        return
    try:
        body = {"apiVersion": params["api_version"], "kind": params["kind"], "status": new_status}
        if params["force"]:
            body = {**current, "status": new_status}
            written = resource.status.replace(body=body, namespace=params["namespace"])
        else:
            written = resource.status.patch(
                body=body,
                name=params["name"],
                namespace=params["namespace"],
                content_type="application/merge-patch+json",
            )
    except DynamicApiError as error:
        module.fail_json(msg=f"Failed to update the status: {error.summary()}")
        return
    module.exit_json(changed=True, result=written.to_dict())


if __name__ == "__main__":
    main()
