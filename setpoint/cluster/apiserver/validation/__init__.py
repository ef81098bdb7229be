"""Validation of built-in objects, as ``pkg/apis/*/validation`` in kube-apiserver.

``builtin_schemas`` checks an object against the upstream JSON schemas that
``kubernetes-validate`` ships; ``fast_check`` proves most clean objects valid quickly and defers
the rest to the full check; ``builtin_hook`` plugs both into the registry. ``object_meta``
holds the ``ValidateObjectMeta`` rules every object obeys, ``pod_spec`` the pod rules a schema
cannot express. ``builtin_rules`` maps each kind to its own rules, one module per API group
(``apps``, ``batch`` with ``cron_schedule``, ``core``, ``rbac``, ``coordination``), built from
``selectors``, ``pod_template`` and ``go_values`` (bad values printed as Go prints them).
Messages and field paths are upstream's.
"""
