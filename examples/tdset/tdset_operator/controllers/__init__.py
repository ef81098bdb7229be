"""The reconcilers of tdset (each module registers one on the operator)."""

from tdset_operator.controllers import tdset as tdset
