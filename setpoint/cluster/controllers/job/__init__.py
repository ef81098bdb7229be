"""The Job controller: Job → Pods until enough succeed or too many fail (1.32 behaviour).

Each sync reads the Job's pods and plans one step (``job_accounting``): count finished pods
exactly once through the ``batch.kubernetes.io/job-tracking`` finalizer and
``status.uncountedTerminatedPods``, decide success (``SuccessCriteriaMet`` then ``Complete``)
or failure (``FailureTarget`` then ``Failed``: backoffLimit, activeDeadlineSeconds), and
otherwise create or delete pods to keep ``min(parallelism, remaining completions)`` active,
waiting out the pod-failure backoff (10 s doubling, capped at 10 min). ``ttl_after_finished``
deletes finished Jobs after ``ttlSecondsAfterFinished`` on the cluster clock.
"""
