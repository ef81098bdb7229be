"""The tdset operator: `setpoint run tdset_operator.operator` runs it."""

import setpoint

op = setpoint.Operator("tdset-operator")

# Importing the controllers registers their reconcilers on `op`.
from tdset_operator import controllers  # noqa: E402,F401
