"""A Kubernetes-compatible API server, as kube-apiserver 1.32 answers on the wire.

A request travels through the packages in this order:

- ``http/`` receives it: routing, content negotiation, request bodies and query options,
  watch streams, the serving certificate and ``/version``.
- ``registry/`` carries out the operation with kube-apiserver's generic semantics (create,
  get, list, update, patch, delete; selectors; the table of served resources and the
  discovery documents built from it; CRDs turning into served resources).
- ``kinds/`` adds what one kind does differently (a registry "strategy" upstream):
  namespaces, pods, services, events, leases.
- ``validation/`` checks built-in objects as ``pkg/apis/*/validation`` does; ``schema/``
  validates, prunes and defaults against OpenAPI schemas; ``crds/`` holds the rules of
  CustomResourceDefinitions themselves.
- ``printers/`` turns objects into the ``meta.k8s.io`` Tables ``kubectl get`` prints (the
  columns of upstream's printers, and CRDs' printer columns).
- ``storage/`` keeps the objects (in memory or SQLite) with revisions and watch history.

``server.py`` assembles them into one unit that starts and stops; ``status_errors.py`` is the
one way every layer reports an error (a ``Status`` with code, reason and message).
"""
