"""The reconcilers of the sample-controller operator."""

from sample_controller_operator.controllers import foo  # noqa: F401
