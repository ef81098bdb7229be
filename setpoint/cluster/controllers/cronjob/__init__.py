"""The CronJob controller: CronJob → Jobs on a schedule read from the cluster's clock.

Each sync (``cronjob_controllerv2.go``) first reconciles ``status.active`` with the Jobs the
CronJob owns (a finished Job leaves the list with a ``SawCompletedJob`` event), then asks
the schedule for the most recent unmet time after ``lastScheduleTime``; if one is due (and
within ``startingDeadlineSeconds``), it applies ``concurrencyPolicy``, creates the Job named
``<cronjob>-<minutes since the epoch>``, deletes finished Jobs beyond the history limits, and
requeues itself for the next scheduled time on the clock.

- ``cron_schedule``: the standard 5-field cron syntax and ``@hourly``-style descriptors,
  with robfig/cron's semantics, and the next matching time in a time zone.
- ``schedule_times``: the unmet schedule times, the Job name and the requeue delay.
- ``controller``: the reconcile loop.
"""
