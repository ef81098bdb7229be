"""The cronjob operator: `setpoint run cronjob_operator.operator` runs it.

Its CronJob controller, its webhooks (defaulting and validation of v1) and the conversion
between v1 (the hub) and v2 are all registered on `op`.
"""

import setpoint

op = setpoint.Operator("cronjob-operator")

# Importing these registers the reconciler and the webhooks on `op`; the two versions are
# named here so that `setpoint generate` writes one CRD with both.
from cronjob_operator import controllers, webhooks  # noqa: E402,F401
from cronjob_operator.api.v1.cronjob import CronJob as CronJobV1  # noqa: E402
from cronjob_operator.api.v2.cronjob import CronJob as CronJobV2  # noqa: E402

op.conversion(CronJobV1, CronJobV2)
