"""sample-controller's operator: `setpoint run examples/sample-controller` runs it."""

import setpoint

op = setpoint.Operator("sample-controller")

# Importing the controllers registers their reconcilers on `op`.
from sample_controller_operator import controllers  # noqa: E402,F401
