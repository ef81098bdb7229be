"""The console's HTML: one server-rendered shell per view; ``static/console.js`` fills it.

The shell carries the navigation, the view's parameters (``data-*`` attributes, escaped) and,
for the Resources view, the list of served kinds, so the page is useful before any script runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from itertools import groupby
from urllib.parse import urlencode

from setpoint.console.catalog import ServedKind

__all__ = ["VIEWS", "render"]

#: View name -> the title in the navigation (in order).
VIEWS = {
    "resources": "Resources",
    "object": "Object",
    "timeline": "Timeline",
    "controllers": "Controllers",
    "cluster": "Cluster",
}
#: Views that appear in the navigation (the others are reached from an object).
NAVIGATION = ("resources", "controllers", "cluster")


def _kind_link(kind: ServedKind, selected: tuple[str, str]) -> str:
    query = urlencode({"apiVersion": kind.apiVersion, "kind": kind.kind})
    current = ' aria-current="page"' if (kind.apiVersion, kind.kind) == selected else ""
    return (
        f'<li><a class="kind" href="/resources?{escape(query)}"{current} '
        f'data-kind="{escape(kind.kind)}" title="{escape(kind.apiVersion)}">'
        f"{escape(kind.kind)}</a></li>"
    )


def _sidebar(kinds: list[ServedKind], selected: tuple[str, str]) -> str:
    if not kinds:
        return '<nav class="kinds"><p class="muted">discovery failed or served nothing</p></nav>'
    parts = ['<nav class="kinds" aria-label="kinds">']
    ordered = sorted(kinds, key=lambda k: (k.group or "", k.kind.lower()))
    for group, members in groupby(ordered, key=lambda k: k.group):
        parts.append(f"<h3>{escape(group or 'core')}</h3><ul>")
        parts.extend(_kind_link(kind, selected) for kind in members)
        parts.append("</ul>")
    parts.append("</nav>")
    return "".join(parts)


def render(view: str, query: Mapping[str, str], *, cluster: str, kinds: list[ServedKind]) -> str:
    """The HTML of ``view`` for the page's query parameters."""
    parameters = {k: v for k, v in query.items() if k != "token"}
    data = " ".join(f'data-{escape(k.lower())}="{escape(v)}"' for k, v in parameters.items())
    nav = "".join(
        f'<a href="/{name}"{" aria-current=page" if name == view else ""}>{VIEWS[name]}</a>'
        for name in NAVIGATION
    )
    selected = (parameters.get("apiVersion", ""), parameters.get("kind", ""))
    aside = _sidebar(kinds, selected) if view == "resources" else ""
    title = VIEWS[view]
    if parameters.get("kind") and parameters.get("name"):
        title = f"{parameters['kind']} {parameters['name']} - {title}"
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · setpoint console</title>"
        '<link rel=stylesheet href="/static/console.css">'
        '<script defer src="/static/console.js"></script></head><body>'
        f'<header><a class=brand href="/resources">setpoint console</a><nav class=views>{nav}</nav>'
        f'<span class=cluster title="cluster">{escape(cluster)}</span>'
        '<span id=live class=live title="live updates"></span></header>'
        f'<div class="layout {escape(view)}">{aside}'
        f'<main id=view data-view="{escape(view)}" {data}>'
        '<p class="muted loading">loading…</p></main></div>'
        "<noscript>The console needs JavaScript for its live views.</noscript>"
        "</body></html>"
    )
