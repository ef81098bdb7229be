"""Operator frameworks side by side: ``python -m bench``.

The harness starts a local cluster (``setpoint cluster serve`` in its own process), fills it with
``Widget`` custom resources, and runs one *contestant* at a time as another process: the same
Widget → child ConfigMap + ``status`` operator written idiomatically with setpoint, with Kopf
(``kopf run``), and as a raw client that sends only the minimal requests (the floor). For each
scenario it measures wall time to convergence, the requests the contestant sent (from the
cluster's own ``apiserver_request_total`` counters, filtered by the contestant's user agent),
the contestant's peak RSS and CPU seconds, and the API server's CPU seconds.

Modules: :mod:`.cluster` (the server process and its counters), :mod:`.widgets` (the CRD, the
objects and the convergence check), :mod:`.contestants` (the operators and how to start them),
:mod:`.sampler` (RSS/CPU of a process), :mod:`.scenarios`, :mod:`.report` (table, JSON,
ratios) and :mod:`.check` (the regression gate against ``bench/results/baseline.json``);
:mod:`.reconciles` counts the reconciles per object of setpoint's default beside its
``ignore_own_writes`` opt-in.
"""
