"""The PodSet operator: `setpoint run examples/podset` runs it."""

import setpoint

op = setpoint.Operator("podset-operator")

# Importing the controllers registers their reconcilers on `op`.
from podset_operator import controllers  # noqa: E402,F401
