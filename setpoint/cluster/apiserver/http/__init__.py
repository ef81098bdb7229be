"""The HTTP front of the API server.

``handler`` routes each request (``/api``, ``/apis``, discovery, ``/version``, health) to the
registry. ``request_body`` reads and decodes bodies under the size limit (``protobuf/`` decodes
the protobuf ones; ``duplicate_fields`` finds repeated keys for ``fieldValidation``),
``request_options``
and ``list_options`` parse query parameters exactly as kube-apiserver does (with its messages),
``media_types`` chooses the response encoding from ``Accept``, and ``watch_stream`` writes a
watch as newline-delimited events, one flush each. ``serving_certificate`` makes the
certificates of the HTTPS listener (issued by the cluster's certificate authority).
"""
