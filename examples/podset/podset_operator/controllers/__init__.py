"""The reconcilers of the PodSet operator."""

from podset_operator.controllers import podset  # noqa: F401
