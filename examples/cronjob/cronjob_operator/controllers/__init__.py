"""The reconcilers of cronjob (each module registers one on the operator)."""

from cronjob_operator.controllers import cronjob as cronjob
