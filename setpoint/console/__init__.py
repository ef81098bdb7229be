"""The web console: a page on 127.0.0.1 that shows a cluster and its operators at work.

``setpoint console`` serves it (``setpoint dev`` and ``setpoint demo`` start it too). It talks
HTTP only: to the API server of any kubeconfig through :class:`setpoint.client.Client`
(discovery, lists, watches, Events, and the local cluster's audit feed at
``/debug/setpoint/audit``), and to operators' debug endpoints (``/debug/setpoint/controllers``,
``/debug/setpoint/trace``) given by URL. It never imports the local cluster, so it works the
same against a real cluster, where it shows what that cluster serves.

The pieces, one concept each:

* :mod:`.access` — the per-run token: required (query string once, then a cookie, as Jupyter
  does) by every page, asset and API call; requests for another host are refused;
* :mod:`.catalog` — every served kind, from discovery;
* :mod:`.summary` — an object's status at a glance (phase, conditions, replicas);
* :mod:`.cluster_reader` — list pages, the object with its owners, children and Events;
* :mod:`.event_stream` — reading and writing ``text/event-stream`` (SSE);
* :mod:`.audit_feed` and :mod:`.operators` — the cluster's writes and the operators' state and
  reconcile traces, with "gone" when an endpoint stops answering;
* :mod:`.timeline` — joins audit and trace records about one object into one ordered story;
* :mod:`.app` and :mod:`.pages` — the aiohttp routes and the server-rendered HTML; the page's
  JavaScript and CSS ship in ``static/`` (vanilla, nothing fetched at run time);
* :mod:`.server` — binds 127.0.0.1 on a free port and prints the URL.
"""

from setpoint.console.server import ConsoleServer, ConsoleSettings

__all__ = ["ConsoleServer", "ConsoleSettings"]
