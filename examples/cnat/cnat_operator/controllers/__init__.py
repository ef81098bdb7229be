"""The reconcilers of cnat (each module registers one on the operator)."""

from cnat_operator.controllers import at as at
