"""operator_sdk.util.osdk_metric: create or update a user-defined Prometheus metric."""

from __future__ import annotations

DOCUMENTATION = r"""
module: osdk_metric
short_description: Create or update a Prometheus metric of the Ansible operator
description:
  - Sends the metric to the operator, which creates it the first time its name is seen and
    serves it on its metrics endpoint. Give exactly one of C(counter), C(gauge), C(histogram)
    or C(summary).
options:
  name: {type: str, required: true, description: The metric's name.}
  description: {type: str, required: true, description: Its help text.}
  address:
    type: str
    description:
      - Where the operator receives metrics. Default C(SETPOINT_ANSIBLE_METRICS_URL), which
        setpoint sets for every run, else C(http://localhost:5050/metrics).
  counter:
    type: dict
    options:
      increment: {type: bool}
      add: {type: float}
  gauge:
    type: dict
    options:
      set: {type: float}
      increment: {type: bool}
      decrement: {type: bool}
      add: {type: float}
      subtract: {type: float}
      set_to_current_time: {type: bool}
  histogram:
    type: dict
    options:
      observe: {type: float}
  summary:
    type: dict
    options:
      observe: {type: float}
"""

EXAMPLES = r"""
- operator_sdk.util.osdk_metric:
    name: memcached_reconciles
    description: Reconciles of Memcached resources
    counter:
      increment: true
"""

RETURN = r"""
"""

import json  # noqa: E402
import os  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

_DEFAULT_ADDRESS = "http://localhost:5050/metrics"
_KINDS = ("counter", "gauge", "histogram", "summary")


def main() -> None:
    number = {"type": "float", "required": False}
    flag = {"type": "bool", "required": False}
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str", "required": True},
            "description": {"type": "str", "required": True},
            "address": {"type": "str", "required": False},
            "counter": {"type": "dict", "options": {"increment": flag, "add": number}},
            "gauge": {
                "type": "dict",
                "options": {
                    "set": number,
                    "increment": flag,
                    "decrement": flag,
                    "add": number,
                    "subtract": number,
                    "set_to_current_time": flag,
                },
            },
            "histogram": {"type": "dict", "options": {"observe": number}},
            "summary": {"type": "dict", "options": {"observe": number}},
        }
    )
    params = module.params
    payload = {"name": params["name"], "description": params["description"]}
    for kind in _KINDS:
        if params.get(kind) is not None:
            payload[kind] = {k: v for k, v in params[kind].items() if v is not None}
    address = (
        params["address"] or os.environ.get("SETPOINT_ANSIBLE_METRICS_URL") or _DEFAULT_ADDRESS
    )
    request = urllib.request.Request(
        address,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
    except urllib.error.HTTPError as error:
        module.fail_json(msg=error.read().decode(errors="replace").strip(), status_code=error.code)
        return
    except OSError as error:
        module.fail_json(msg=f"cannot reach the operator's metrics receiver at {address}: {error}")
        return
    module.exit_json(changed=True)


if __name__ == "__main__":
    main()
