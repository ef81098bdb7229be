"""SPDY/3.1, the streaming protocol kubectl speaks for port-forward (and, before 1.30, exec).

``frames`` reads and writes frames and header blocks; ``session`` is the server's side of one
connection (the streams the client opens); ``transports`` runs a session over a raw upgraded
HTTP connection or over a WebSocket that tunnels the same bytes (kubectl 1.31+'s
``SPDY/3.1+portforward.k8s.io``); ``port_forward`` is the ``portforward.k8s.io`` protocol on
top, as the kubelet serves it.
"""
