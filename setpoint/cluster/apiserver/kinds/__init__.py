"""Per-kind rules, each a ``KindBehaviour`` (``registry/kind_behaviour.py``).

Upstream calls these a registry's *strategy*: what a kind adds to the generic semantics.
``namespaces`` (defaults, admission of content, deletion), ``pods`` (initial status, graceful
deletion), ``services`` (cluster IP allocation), ``events`` (both Event APIs) and ``leases``
(MicroTime fields).
"""
