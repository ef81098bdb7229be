"""A Kubernetes-compatible API server, as kube-apiserver 1.32 answers on the wire.

A request travels through the packages in this order:

- ``http/`` receives it: routing, content negotiation, request bodies (JSON, YAML and, in
  ``http/protobuf/``, the protobuf bodies client-go sends) and query options, watch streams,
  the serving certificate and ``/version``.
- ``auth/`` says who the caller is and answers the review APIs (``kubectl auth whoami``,
  ``kubectl auth can-i``).
- ``openapi/`` publishes ``/openapi/v3`` and ``/openapi/v2`` from the upstream schemas and the
  CRDs (what ``kubectl`` validation and ``kubectl explain`` read).
- ``registry/`` carries out the operation with kube-apiserver's generic semantics (create,
  get, list, update, patch, delete; selectors; the table of served resources and the
  discovery documents built from it; CRDs turning into served resources).
- ``patch/`` turns a PATCH body into the new object (JSON, merge and strategic merge patches,
  server-side apply) and keeps ``metadata.managedFields`` on every write.
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
