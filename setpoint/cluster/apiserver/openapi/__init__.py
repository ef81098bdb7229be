"""The OpenAPI documents of the served API: ``/openapi/v3`` (per group-version) and ``/openapi/v2``.

kubectl reads them for three things: ``apply/create/replace/edit -f`` check that a kind's PATCH
operation accepts ``fieldValidation`` and then let the server validate (``--validate=strict``,
the default); ``kubectl apply`` picks the patch type from the PATCH request body types; and
``kubectl explain`` renders a kind's schema, nested fields included.

- :mod:`.component_schemas` turns the upstream definitions shipped by ``kubernetes-validate``
  (JSON Schema, 1.32) into OpenAPI component schemas, and a CRD version's schema into the
  component kube-apiserver publishes for a custom resource.
- :mod:`.paths` writes the path items of a served resource (operations, parameters, request
  body media types, ``x-kubernetes-group-version-kind``).
- :mod:`.documents` assembles one v3 document per group-version and the v2 document, caches
  each by the registry's generation, and names each by the hash of its bytes.
- :mod:`.serving` answers the HTTP requests: the v3 index of ``serverRelativeURL`` with
  ``?hash=``, ``ETag`` / ``If-None-Match``, ``Cache-Control`` as upstream (immutable when the
  hash is current, a redirect to the current hash when it is stale).
"""
