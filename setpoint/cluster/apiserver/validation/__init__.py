"""Validation of built-in objects, as ``pkg/apis/*/validation`` in kube-apiserver.

``builtin_schemas`` checks an object against the upstream JSON schemas that
``kubernetes-validate`` ships; ``fast_check`` proves most clean objects valid quickly and defers
the rest to the full check; ``builtin_hook`` plugs both into the registry. ``object_meta``
holds the ``ValidateObjectMeta`` rules every object obeys, ``pod_spec`` the pod rules a schema
cannot express. Messages and field paths are upstream's.
"""
