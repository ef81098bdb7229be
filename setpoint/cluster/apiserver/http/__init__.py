"""The HTTP front of the API server.

``handler`` routes each request (``/api``, ``/apis``, discovery, ``/version``, health) to the
registry. ``request_body`` reads and decodes bodies under the size limit, ``request_options``
and ``list_options`` parse query parameters exactly as kube-apiserver does (with its messages),
``media_types`` chooses the response encoding from ``Accept``, and ``watch_stream`` writes a
watch as newline-delimited events, one flush each. ``serving_certificate`` makes the
self-signed certificate of the HTTPS listener.
"""
