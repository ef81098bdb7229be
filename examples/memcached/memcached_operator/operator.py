"""The memcached-operator: `setpoint run examples/memcached` runs it."""

import setpoint

op = setpoint.Operator("memcached-operator")

# Importing the controllers registers their reconcilers on `op`.
from memcached_operator import controllers  # noqa: E402,F401
