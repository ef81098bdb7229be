"""The ``setpoint`` command line."""
