"""operator_sdk.util.requeue_after: run the reconcile again after ``time`` (a Go duration)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: requeue_after
short_description: Ask the Ansible operator to run the reconcile again after a delay
description:
  - The operator reads this task's result and requeues the custom resource after C(time).
options:
  time:
    description: A duration such as C(30s), C(5m) or C(1h30m).
    type: str
    required: true
"""

EXAMPLES = r"""
- operator_sdk.util.requeue_after:
    time: 30s
"""

RETURN = r"""
period:
  description: The delay, as given.
  type: str
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402


def main() -> None:
    module = AnsibleModule(
        argument_spec={"time": {"type": "str", "required": True}}, supports_check_mode=True
    )
    module.exit_json(changed=False, period=module.params["time"])


if __name__ == "__main__":
    main()
