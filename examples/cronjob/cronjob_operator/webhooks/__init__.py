"""The admission webhooks of cronjob (each module registers its handlers on the operator)."""

from cronjob_operator.webhooks import cronjob as cronjob
