"""``setpoint demo``: the README's tour — the seed operators converging on a local cluster.

The demo starts a local cluster (``setpoint cluster serve --run-pods``, so a cnat ``At``'s
command really runs), installs the CRDs of every example project under a directory
(``examples/`` by default), starts all their operators in one ``setpoint run`` process, applies
each project's committed samples, and then watches: :mod:`.observation` reads the samples'
state and decides when each has converged, :mod:`.view` draws it (a live terminal view, or one
line per change when the output is not a terminal or with ``--once``). With ``--once`` it exits
0 when everything converged, or 1 naming what did not within ``--timeout``; otherwise it stays
up until Ctrl-C, then stops and removes everything it started (:mod:`.session`).
"""
