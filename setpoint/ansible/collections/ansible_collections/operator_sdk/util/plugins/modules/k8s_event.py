"""operator_sdk.util.k8s_event: create or update a Kubernetes Event (core/v1)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: k8s_event
short_description: Create Kubernetes Events
description:
  - Creates the Event C(name) in C(namespace), or, when it exists with the same C(reason),
    counts one more occurrence (C(count), C(lastTimestamp)). C(involvedObject) gets the
    object's C(uid) and C(resourceVersion) when it exists. With C(appendTimestamp) each call
    creates a new Event whose name ends with the time. C(state=absent) deletes the Event.
options:
  state: {type: str, choices: [present, absent], default: present}
  name: {type: str, required: true}
  namespace: {type: str, required: true}
  merge_type:
    type: list
    elements: str
    choices: [json, merge, strategic-merge]
    description: Accepted for compatibility; the Event is patched with a merge patch.
  message: {type: str, required: true}
  reason: {type: str, required: true}
  reportingComponent: {type: str}
  type: {type: str, choices: [Normal, Warning]}
  appendTimestamp: {type: bool, default: false}
  source:
    type: dict
    options:
      component: {type: str, required: true}
  involvedObject:
    type: dict
    options:
      apiVersion: {type: str, required: true}
      kind: {type: str, required: true}
      name: {type: str, required: true}
      namespace: {type: str, required: true}
  kubeconfig: {type: raw, description: Path of a kubeconfig (default K8S_AUTH_KUBECONFIG).}
  context: {type: str}
"""

EXAMPLES = r"""
- operator_sdk.util.k8s_event:
    name: "{{ ansible_operator_meta.name }}-scaled"
    namespace: "{{ ansible_operator_meta.namespace }}"
    reason: Scaled
    message: "Memcached scaled to {{ size }}"
    type: Normal
    reportingComponent: memcached-operator
    involvedObject:
      apiVersion: cache.example.com/v1alpha1
      kind: Memcached
      name: "{{ ansible_operator_meta.name }}"
      namespace: "{{ ansible_operator_meta.namespace }}"
"""

RETURN = r"""
result:
  description: The Event as written (or as found, when nothing changed).
  type: dict
  returned: success
"""

import datetime  # noqa: E402
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _timestamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "state": {"type": "str", "default": "present", "choices": ["present", "absent"]},
            "name": {"type": "str", "required": True},
            "namespace": {"type": "str", "required": True},
            "merge_type": {
                "type": "list",
                "elements": "str",
                "choices": ["json", "merge", "strategic-merge"],
            },
            "message": {"type": "str", "required": True},
            "reason": {"type": "str", "required": True},
            "reportingComponent": {"type": "str"},
            "type": {"type": "str", "choices": ["Normal", "Warning"]},
            "appendTimestamp": {"type": "bool", "default": False},
            "source": {
                "type": "dict",
                "options": {"component": {"type": "str", "required": True}},
            },
            "involvedObject": {
                "type": "dict",
                "options": {
                    "apiVersion": {"type": "str", "required": True},
                    "kind": {"type": "str", "required": True},
                    "name": {"type": "str", "required": True},
                    "namespace": {"type": "str", "required": True},
                },
            },
            "kubeconfig": {"type": "raw"},
            "context": {"type": "str"},
        },
        supports_check_mode=True,
    )
    try:
        from kubernetes import config, dynamic
        from kubernetes.client import api_client
        from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError
    except ImportError as error:
        module.fail_json(msg=f"k8s_event needs the kubernetes Python client: {error}")
        return
    params = module.params
    kubeconfig = params["kubeconfig"] or os.environ.get("K8S_AUTH_KUBECONFIG")
    now = _now()
    name = params["name"]
    if params["appendTimestamp"]:
        name = f"{name}.{now.strftime('%Y%m%d%H%M%S%f')}"
    namespace = params["namespace"]
    try:
        client = dynamic.DynamicClient(
            api_client.ApiClient(
                configuration=config.new_client_from_config(
                    config_file=kubeconfig, context=params["context"]
                ).configuration
            )
        )
        events = client.resources.get(api_version="v1", kind="Event")
        try:
            prior = events.get(name=name, namespace=namespace).to_dict()
        except NotFoundError:
            prior = None
        if params["state"] == "absent":
            if prior is None:
                module.exit_json(changed=False)
            elif not module.check_mode:
                events.delete(name=name, namespace=namespace)
            module.exit_json(changed=prior is not None, result=prior or {})
            return
        involved = dict(params["involvedObject"] or {}) or None
        if involved is not None:
            try:
                target = client.resources.get(
                    api_version=involved["apiVersion"], kind=involved["kind"]
                ).get(name=involved["name"], namespace=involved["namespace"])
                involved["uid"] = target.metadata.uid
                involved["resourceVersion"] = target.metadata.resourceVersion
            except (NotFoundError, DynamicApiError, ValueError, LookupError):
                pass  # an Event may name an object that is gone, or of an unknown kind
        again = prior is not None and prior.get("reason") == params["reason"]
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "message": params["message"],
            "reason": params["reason"],
            "type": params["type"],
            "reportingComponent": params["reportingComponent"] or "",
            "source": params["source"] or {},
            "involvedObject": involved or {},
            "count": (int(prior.get("count") or 1) + 1) if again else 1,
            "firstTimestamp": (prior.get("firstTimestamp") if again else None) or _timestamp(now),
            "lastTimestamp": _timestamp(now),
        }
        event = {key: value for key, value in event.items() if value is not None}
        if module.check_mode:
            module.exit_json(changed=True, result=event)
            return
        if prior is None:
            written = events.create(body=event, namespace=namespace)
        else:
            written = events.patch(
                body=event,
                name=name,
                namespace=namespace,
                content_type="application/merge-patch+json",
            )
    except DynamicApiError as error:
        module.fail_json(msg=f"Unable to create event: {error.summary()}")
        return
    except Exception as error:  # the kubeconfig, the connection
        module.fail_json(msg=f"Unable to create event: {error}")
        return
    module.exit_json(changed=True, result=written.to_dict())


if __name__ == "__main__":
    main()
