"""The cnat operator: `setpoint run cnat_operator.operator` runs it."""

import setpoint

op = setpoint.Operator("cnat-operator")

# Importing the controllers registers their reconcilers on `op`.
from cnat_operator import controllers  # noqa: E402,F401
