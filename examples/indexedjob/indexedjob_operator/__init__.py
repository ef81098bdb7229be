"""Metacontroller's IndexedJob example as a Python hook: `setpoint run examples/indexedjob`."""
