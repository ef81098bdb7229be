// setpoint console: the page's client. Vanilla JavaScript, no dependencies, nothing fetched
// from anywhere but the console itself. Each view is a function of the <main> element's
// data-* parameters; live parts use EventSource (the console relays the cluster's watches).
"use strict";

(function () {
  const main = document.getElementById("view");
  const live = document.getElementById("live");
  const SVG = "http://www.w3.org/2000/svg";

  // --- small helpers ---------------------------------------------------------------------

  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function s(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== null && value !== undefined) node.setAttribute(key, String(value));
    }
    for (const child of children.flat()) if (child) node.append(child);
    return node;
  }

  function query(params) {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== null && value !== undefined && value !== "") search.set(key, value);
    }
    return search.toString();
  }

  async function getJSON(path, params) {
    const response = await fetch(path + "?" + query(params || {}), { credentials: "same-origin" });
    if (!response.ok) throw new Error((await response.text()).trim() || "HTTP " + response.status);
    return response.json();
  }

  // A browser allows six connections per host: a stream left open by a page the user left
  // (kept in the back/forward cache) would soon block every request of the next pages.
  const streams = new Set();
  function openStream(url) {
    const stream = new EventSource(url);
    streams.add(stream);
    return stream;
  }
  window.addEventListener("pagehide", () => {
    for (const stream of streams) stream.close();
    streams.clear();
  });

  function setLive(state, text) {
    live.className = "live " + state;
    live.textContent = text;
  }

  function age(timestamp) {
    if (!timestamp) return "";
    const seconds = Math.max(0, (Date.now() - Date.parse(timestamp)) / 1000);
    if (seconds < 120) return Math.floor(seconds) + "s";
    if (seconds < 7200) return Math.floor(seconds / 60) + "m";
    if (seconds < 172800) return Math.floor(seconds / 3600) + "h";
    return Math.floor(seconds / 86400) + "d";
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) return "–";
    if (seconds < 0.001) return (seconds * 1e6).toFixed(0) + " µs";
    if (seconds < 1) return (seconds * 1000).toFixed(1) + " ms";
    return seconds.toFixed(2) + " s";
  }

  function clock(timestamp) {
    if (!timestamp) return "";
    const date = new Date(timestamp);
    return date.toISOString().slice(11, 23);
  }

  function short(value) {
    const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value);
    if (text === undefined) return "";
    return text.length > 120 ? text.slice(0, 117) + "…" : text;
  }

  function objectLink(view, ref) {
    return "/" + view + "?" + query({
      apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.namespace, name: ref.name,
    });
  }

  function forbidden(message) {
    return h("p", { class: "forbidden", role: "alert" }, "Forbidden: ", message);
  }

  function conditionChips(conditions) {
    return h("span", { class: "conditions" }, (conditions || []).map((c) =>
      h("span", {
        class: "chip " + (c.healthy === true ? "good" : c.healthy === false ? "bad" : "unknown"),
        title: (c.reason ? c.reason + ": " : "") + (c.message || ""),
      }, c.type + (c.status === "True" ? "" : "=" + c.status))));
  }

  function phaseBadge(phase) {
    if (!phase) return "";
    const bad = /fail|error|crash/i.test(phase);
    const good = /running|succeeded|done|active|ready|bound|complete/i.test(phase);
    return h("span", { class: "phase " + (bad ? "bad" : good ? "good" : "neutral") }, phase);
  }

  // --- Resources ---------------------------------------------------------------------------

  function resourcesView(params) {
    if (!params.kind) {
      main.replaceChildren(h("section", { class: "intro" },
        h("h1", {}, "Resources"),
        h("p", {}, "Every kind this cluster serves is on the left; choose one to list its " +
          "objects live. An object's page has its YAML, owners, children, Events and timeline.")));
      main.dataset.loaded = "true";
      return;
    }
    const state = { pages: [null], index: 0, rows: new Map(), stream: null, added: 0 };
    const namespaceInput = h("input", {
      type: "search", placeholder: "all namespaces", value: params.namespace || "",
      "aria-label": "namespace",
    });
    const table = h("table", { class: "objects" });
    const status = h("p", { class: "muted status" });
    const pager = h("div", { class: "pager" });
    const heading = h("h1", {}, params.kind, " ", h("small", {}, params.apiversion));
    main.replaceChildren(heading, h("div", { class: "toolbar" },
      h("label", {}, "Namespace ", namespaceInput), status), table, pager);
    namespaceInput.addEventListener("change", () => {
      params.namespace = namespaceInput.value.trim();
      const url = new URL(location.href);
      if (params.namespace) url.searchParams.set("namespace", params.namespace);
      else url.searchParams.delete("namespace");
      history.replaceState(null, "", url);
      state.pages = [null];
      state.index = 0;
      load();
    });

    function rowFor(item) {
      const link = objectLink("object", {
        apiVersion: params.apiversion, kind: params.kind, namespace: item.namespace, name: item.name,
      });
      return h("tr", { "data-name": item.name, "data-namespace": item.namespace || "",
        class: item.deleting ? "deleting" : "" },
        h("td", {}, h("a", { href: link }, item.name)),
        h("td", {}, item.namespace || ""),
        h("td", { title: item.created || "" }, age(item.created)),
        h("td", {}, phaseBadge(item.phase)),
        h("td", {}, item.replicas || ""),
        h("td", {}, conditionChips(item.conditions)),
        h("td", { class: "muted" }, (item.owners || []).map((o) => o.kind + "/" + o.name).join(", ")));
    }

    function header() {
      return h("tr", {}, ["Name", "Namespace", "Age", "Phase", "Ready", "Conditions", "Owners"]
        .map((title) => h("th", {}, title)));
    }

    function paint() {
      const body = [header()];
      for (const item of state.rows.values()) body.push(rowFor(item));
      table.replaceChildren(...body);
      const count = state.rows.size;
      status.textContent = count + " shown" + (state.remaining ? ", " + state.remaining +
        " more on later pages" : "") + (state.added ? "; " + state.added +
        " created since (on later pages)" : "");
    }

    async function load() {
      if (state.stream) state.stream.close();
      table.replaceChildren();
      pager.replaceChildren();
      main.dataset.loaded = "false";
      let answer;
      try {
        answer = await getJSON("/api/list", {
          apiVersion: params.apiversion, kind: params.kind, namespace: params.namespace,
          continue: state.pages[state.index],
        });
      } catch (error) {
        status.replaceChildren(forbidden(error.message));
        return;
      }
      if (answer.forbidden) {
        status.replaceChildren();
        table.replaceWith(table);
        table.replaceChildren(h("tr", {}, h("td", {}, forbidden(answer.forbidden))));
        main.dataset.loaded = "true";
        main.dataset.forbidden = "true";
        return;
      }
      state.rows = new Map(answer.items.map((item) => [item.namespace + "/" + item.name, item]));
      state.remaining = answer.remaining;
      state.added = 0;
      state.more = Boolean(answer.continue);
      if (answer.continue) state.pages[state.index + 1] = answer.continue;
      paint();
      const previous = h("button", { disabled: state.index === 0, onclick: () => {
        state.index -= 1; load(); } }, "← Previous");
      const next = h("button", { disabled: !answer.continue, onclick: () => {
        state.index += 1; load(); } }, "Next →");
      pager.replaceChildren(previous, h("span", {}, "page " + (state.index + 1)), next);
      main.dataset.loaded = "true";
      // When the first page of rows was on screen (ms since navigation): for the bench.
      if (!window.consoleRowsPainted) {
        requestAnimationFrame(() => setTimeout(() => {  // just after that frame's paint
          window.consoleRowsPainted = window.consoleRowsPainted || performance.now();
        }, 0));
      }
      if (answer.kind.watchable) follow(answer.resourceVersion);
    }

    function follow(resourceVersion) {
      const stream = openStream("/api/watch?" + query({
        apiVersion: params.apiversion, kind: params.kind, namespace: params.namespace,
        resourceVersion,
      }));
      state.stream = stream;
      stream.onopen = () => setLive("on", "live");
      stream.onerror = () => setLive("off", "reconnecting…");
      stream.addEventListener("change", (message) => {
        const change = JSON.parse(message.data);
        if (change.type === "RELIST") { stream.close(); load(); return; }
        const item = change.row;
        const key = item.namespace + "/" + item.name;
        if (change.type === "DELETED") state.rows.delete(key);
        else if (state.rows.has(key) || !state.more) state.rows.set(key, item);
        else if (change.type === "ADDED") state.added += 1;
        paint();
        // When each change was painted (wall clock, ms): what bench/console_page_load.py reads.
        const painted = window.consoleChanges || (window.consoleChanges = []);
        painted.push({ name: item.name, type: change.type, at: performance.timeOrigin +
          performance.now() });
        if (painted.length > 100) painted.shift();
      });
    }

    load();
  }

  // --- Object ------------------------------------------------------------------------------

  async function objectView(params) {
    const ref = { apiVersion: params.apiversion, kind: params.kind, namespace: params.namespace,
      name: params.name };
    main.replaceChildren(h("h1", {}, params.kind, " ", params.name,
      params.namespace ? h("small", {}, " in " + params.namespace) : ""));
    let answer;
    try {
      answer = await getJSON("/api/object", ref);
    } catch (error) {
      main.append(forbidden(error.message));
      return;
    }
    if (answer.forbidden) { main.append(forbidden(answer.forbidden)); return; }
    if (answer.notFound) { main.append(h("p", { class: "forbidden" }, answer.notFound)); return; }
    const row = answer.row;
    const owners = h("ol", { class: "owners" }, answer.owners.length ? answer.owners.map((o) =>
      h("li", {}, o.missing ? o.kind + "/" + o.name + " (gone)" :
        h("a", { href: objectLink("object", o) }, o.kind + "/" + o.name),
        o.forbidden ? h("span", { class: "forbidden" }, " forbidden: " + o.forbidden) : "")) :
      h("li", { class: "muted" }, "no owner"));
    const children = h("div", { class: "children" }, h("p", { class: "muted" }, "searching…"));
    const events = h("div", { class: "events" }, h("p", { class: "muted" }, "loading…"));
    main.append(
      h("p", { class: "summary" }, phaseBadge(row.phase), " ", row.replicas ? "ready " +
        row.replicas + " " : "", conditionChips(row.conditions), " ",
        h("a", { class: "button", href: objectLink("timeline", ref) }, "Timeline →")),
      h("section", {}, h("h2", {}, "Owner chain"), owners),
      h("section", {}, h("h2", {}, "Children"), children),
      h("section", {}, h("h2", {}, "Events"), events),
      h("section", {}, h("h2", {}, "YAML"), h("pre", { class: "yaml" }, answer.yaml)));
    main.dataset.loaded = "true";
    getJSON("/api/children", { uid: row.uid, namespace: row.namespace }).then((found) => {
      const list = found.children.map((c) => h("li", {},
        h("a", { href: objectLink("object", c) }, c.kind + "/" + c.name), " ",
        phaseBadge(c.phase), " ", conditionChips(c.conditions)));
      children.replaceChildren(list.length ? h("ul", {}, list) : h("p", { class: "muted" },
        "no children"), found.forbiddenKinds.length ? h("p", { class: "forbidden" },
        "not searched (forbidden): " + found.forbiddenKinds.join(", ")) : "");
    }).catch((error) => children.replaceChildren(forbidden(error.message)));
    getJSON("/api/events", { uid: row.uid, namespace: row.namespace }).then((found) => {
      if (found.forbidden) { events.replaceChildren(forbidden(found.forbidden)); return; }
      events.replaceChildren(found.events.length ? eventTable(found.events) :
        h("p", { class: "muted" }, "no Events"));
    }).catch((error) => events.replaceChildren(forbidden(error.message)));
  }

  function eventTable(events) {
    return h("table", { class: "events" },
      h("tr", {}, ["Last seen", "Type", "Reason", "From", "Count", "Message"]
        .map((t) => h("th", {}, t))),
      events.map((e) => h("tr", { class: e.type === "Warning" ? "warning" : "" },
        h("td", { title: e.lastTime || "" }, age(e.lastTime)), h("td", {}, e.type),
        h("td", {}, e.reason), h("td", {}, e.source || ""), h("td", {}, e.count),
        h("td", {}, e.message))));
  }

  // --- Timeline ----------------------------------------------------------------------------

  const RESULT_CLASS = { success: "good", requeue: "requeue", requeueAfter: "requeue", error: "bad" };

  function entryTime(entry) {
    return Date.parse(entry.time || entry.lastTime || entry.receivedAt);
  }

  function describe(entry) {
    if (entry.source === "audit") {
      const ref = entry.objectRef || {};
      const who = (entry.user || {}).username || "?";
      const what = entry.about === "child" ? "create " + ref.kind + "/" + ref.name :
        entry.verb + (ref.subresource ? " " + ref.subresource : "");
      return what + " by " + who + (entry.fieldManager ? " (" + entry.fieldManager + ")" : "") +
        " → " + entry.responseCode;
    }
    if (entry.source === "watch") return entry.verb + " (seen by the console's watch)";
    if (entry.source === "event") {
      return "Event " + entry.type + " " + entry.reason + ": " + entry.message +
        (entry.count > 1 ? " (×" + entry.count + ")" : "");
    }
    const obj = entry.object || {};
    switch (entry.type) {
      case "watch":
        return "watch " + entry.eventType + " " + obj.kind + "/" + obj.name +
          (entry.ownWrite ? " (own write)" : "");
      case "enqueue": {
        const cause = entry.cause || {};
        const source = cause.source ? " of " + cause.source.kind + "/" + cause.source.name : "";
        return "enqueue " + entry.key + " ← " + cause.kind + (cause.eventType ? " " +
          cause.eventType : "") + source + (cause.handler ? " via " + cause.handler : "") +
          (entry.delaySeconds ? " in " + duration(entry.delaySeconds) : "") +
          (entry.ownWrite ? " (own write)" : "") + (entry.deduplicated ? " (already queued)" : "");
      }
      case "dequeue":
        return "dequeue after " + duration(entry.queueWaitSeconds) + " in the queue" +
          (entry.retries ? " (retry " + entry.retries + ")" : "");
      case "reconcileStart":
        return "reconcile " + entry.reconcileId + " started";
      case "reconcileEnd":
        return "reconcile " + entry.result + " in " + duration(entry.durationSeconds) +
          (entry.requeueAfterSeconds ? ", again after " + duration(entry.requeueAfterSeconds) : "") +
          (entry.error ? ": " + entry.error : "") +
          (entry.backoffSeconds ? " — backoff " + duration(entry.backoffSeconds) : "");
      case "write":
        return (entry.verb === "status" ? "write status of " : entry.verb + " ") + obj.kind +
          "/" + obj.name +
          (entry.fieldManager ? " (" + entry.fieldManager + ")" : "");
      case "event":
        return "Event " + entry.eventType + " " + entry.reason + ": " + entry.message;
      default:
        return entry.type || "?";
    }
  }

  function diffList(diff) {
    if (!diff || !diff.length) return "";
    return h("ul", { class: "diff" }, diff.map((op) => h("li", { class: "op-" + op.op },
      op.op + " " + op.path + (op.from ? " from " + op.from : "") +
      ("value" in op ? ": " + short(op.value) : ""))));
  }

  function timelineChart(entries, available) {
    const width = Math.max(640, available - 4);
    const lanes = [];
    for (const entry of entries) if (!lanes.includes(entry.lane)) lanes.push(entry.lane);
    lanes.sort((a, b) => (a === "API server" ? -1 : b === "API server" ? 1 :
      a === "Events" ? 1 : b === "Events" ? -1 : 0));
    const laneHeight = 34, left = 150, top = 22;
    const times = entries.map(entryTime).filter((t) => !Number.isNaN(t));
    const start = Math.min(...times), end = Math.max(...times, start + 1000);
    const x = (t) => left + ((t - start) / (end - start)) * (width - left - 16);
    const y = (lane) => top + lanes.indexOf(lane) * laneHeight;
    const chart = s("svg", { width, height: top + lanes.length * laneHeight + 8,
      class: "chart", role: "img", "aria-label": "timeline chart" });
    lanes.forEach((lane) => chart.append(
      s("line", { x1: left, x2: width - 8, y1: y(lane) + 14, y2: y(lane) + 14, class: "lane" }),
      s("text", { x: 4, y: y(lane) + 18, class: "lane-name" }, document.createTextNode(lane))));
    chart.append(s("text", { x: left, y: 12, class: "axis" }, document.createTextNode(clock(start))),
      s("text", { x: width - 8, y: 12, class: "axis", "text-anchor": "end" },
        document.createTextNode(clock(end))));
    const starts = new Map();
    for (const entry of entries) {
      if (entry.type === "reconcileStart") starts.set(entry.reconcileId, entry);
    }
    for (const entry of entries) {
      const t = entryTime(entry);
      if (Number.isNaN(t)) continue;
      const title = s("title", {}, document.createTextNode(clock(entry.time) + " " + describe(entry)));
      if (entry.type === "reconcileEnd") {
        const begun = starts.get(entry.reconcileId);
        const from = begun ? x(entryTime(begun)) : x(t - (entry.durationSeconds || 0) * 1000);
        chart.append(s("rect", { x: from, y: y(entry.lane) + 5, height: 18,
          width: Math.max(4, x(t) - from), class: "bar " + (RESULT_CLASS[entry.result] || ""),
          "data-result": entry.result }, title));
      } else if (entry.type === "reconcileStart") {
        continue;
      } else {
        const kind = entry.source === "trace" ? entry.type : entry.source;
        chart.append(s("circle", { cx: x(t), cy: y(entry.lane) + 14, r: 5,
          class: "mark " + kind + (entry.type === "event" && entry.eventType === "Warning" ||
            entry.type === "Warning" ? " warning" : "") }, title));
      }
    }
    return chart;
  }

  function timelineView(params) {
    const ref = { apiVersion: params.apiversion, kind: params.kind, namespace: params.namespace,
      name: params.name };
    const entries = [];
    const sources = h("p", { class: "sources" });
    const chart = h("div", { class: "chart-box" });
    const list = h("ol", { class: "timeline" });
    main.replaceChildren(h("h1", {}, "Timeline of ", params.kind, " ", params.name,
      params.namespace ? h("small", {}, " in " + params.namespace) : ""),
      h("p", {}, h("a", { href: objectLink("object", ref) }, "← the object")),
      sources, chart, list);
    const sourceStates = {};
    let scheduled = false;

    function paintSources() {
      sources.replaceChildren(...Object.entries(sourceStates).map(([name, state]) =>
        h("span", { class: "source " + state.state, title: state.message || "",
          "data-source": name }, (name === "audit" ? "audit feed" : name) + ": " + state.state +
          (state.message ? " (" + state.message + ")" : ""))));
    }

    function paint() {
      scheduled = false;
      // When each live entry was painted (wall clock, ms): what bench/console_page_load.py reads.
      const painted = window.consoleTimelinePainted || (window.consoleTimelinePainted = []);
      const now = performance.timeOrigin + performance.now();
      for (const entry of entries) {
        if (entry.live && !entry.paintedAt) {
          entry.paintedAt = now;
          painted.push({ at: now, source: entry.source, diff: JSON.stringify(entry.diff || []) });
          if (painted.length > 100) painted.shift();
        }
      }
      entries.sort((a, b) => entryTime(a) - entryTime(b) || (a.seq || 0) - (b.seq || 0));
      chart.replaceChildren(entries.length ? timelineChart(entries, chart.clientWidth) :
        h("p", { class: "muted" }, "nothing recorded about this object yet"));
      list.replaceChildren(...entries.map((entry) => h("li", {
        class: "entry " + entry.source + " " + (entry.type || "") +
          (entry.result ? " result-" + entry.result : ""),
        "data-type": entry.type || entry.source, "data-source": entry.source },
        h("time", { datetime: entry.time || "" }, clock(entry.time || entry.lastTime ||
          entry.receivedAt)),
        h("span", { class: "lane-tag" }, entry.lane),
        h("span", { class: "what" }, describe(entry)),
        diffList(entry.diff),
        entry.error ? h("p", { class: "error" }, entry.error) : "")));
      main.dataset.entries = String(entries.length);
    }

    function schedule() {
      if (!scheduled) { scheduled = true; requestAnimationFrame(paint); }
    }

    const stream = openStream("/api/timeline/stream?" + query(ref));
    stream.onopen = () => setLive("on", "live");
    stream.onerror = () => setLive("off", "reconnecting…");
    stream.addEventListener("reset", (message) => {
      const answer = JSON.parse(message.data);
      entries.length = 0;
      const now = new Date().toISOString();
      for (const entry of answer.entries) entries.push({ ...entry, receivedAt: now });
      Object.assign(sourceStates, answer.sources);
      if (answer.missing) sourceStates.object = { state: "missing", message: answer.missing };
      paintSources();
      paint();
      main.dataset.loaded = "true";
    });
    stream.addEventListener("entry", (message) => {
      entries.push({ ...JSON.parse(message.data), receivedAt: new Date().toISOString(),
        live: true });
      schedule();
    });
    stream.addEventListener("source", (message) => {
      const change = JSON.parse(message.data);
      sourceStates[change.source] = { state: change.state, message: change.message };
      paintSources();
    });
  }

  // --- Controllers -------------------------------------------------------------------------

  function depthChart(history) {
    const width = Math.min(720, Math.max(360, main.clientWidth - 16)), height = 120;
    const chart = s("svg", { width, height, class: "depth", role: "img",
      "aria-label": "queue depth over time" });
    if (history.length < 2) return h("div", { class: "depth-box" }, chart);
    const names = Object.keys(history[history.length - 1].depths);
    const maxDepth = Math.max(1, ...history.flatMap((p) => Object.values(p.depths)));
    const t0 = history[0].time, t1 = history[history.length - 1].time;
    const x = (t) => 30 + ((t - t0) / Math.max(1, t1 - t0)) * (width - 40);
    const y = (d) => height - 16 - (d / maxDepth) * (height - 30);
    chart.append(s("text", { x: 2, y: 12, class: "axis" }, document.createTextNode(String(maxDepth))),
      s("text", { x: 2, y: height - 14, class: "axis" }, document.createTextNode("0")));
    names.forEach((name, index) => {
      const points = history.map((p) => x(p.time) + "," + y(p.depths[name] || 0)).join(" ");
      chart.append(s("polyline", { points, class: "series s" + (index % 6) },
        s("title", {}, document.createTextNode(name))));
    });
    const legend = h("p", { class: "legend" }, names.map((name, index) =>
      h("span", { class: "key k" + (index % 6) }, name)));
    return h("div", { class: "depth-box" }, chart, legend);
  }

  function controllerTable(controllers, operatorUrl) {
    return h("table", { class: "controllers" },
      h("tr", {}, ["Controller", "For", "Queue", "Oldest", "Workers", "Rate/s", "p50", "p90",
        "p99", "Reconciles", "Errors", "Requeues"].map((t) => h("th", {}, t))),
      controllers.map((c) => {
        const q = c.queue || {}, r = c.reconciles || {}, l = r.latencySeconds || {};
        return h("tr", { "data-controller": c.name },
          h("td", {}, c.name), h("td", {}, c.forKind), h("td", {}, q.depth),
          h("td", {}, duration(q.oldestAgeSeconds)),
          h("td", {}, (c.workers || {}).busy + "/" + (c.workers || {}).max),
          h("td", {}, (r.perSecond1m || 0).toFixed(2)), h("td", {}, duration(l.p50)),
          h("td", {}, duration(l.p90)), h("td", {}, duration(l.p99)), h("td", {}, r.total),
          h("td", { class: r.errors ? "bad" : "" }, r.errors), h("td", {}, r.requeues));
      }),
      controllers.flatMap((c) => ((c.queue || {}).inBackoff || []).map((b) => {
        // forKind is "<apiVersion>/<Kind>": "v1/Pod", "apps/v1/Deployment".
        const parts = (c.forKind || "").split("/");
        const kind = parts.pop();
        const [namespace, name] = b.key.includes("/") ? b.key.split("/") : ["", b.key];
        const link = c.forKind ? objectLink("timeline", { apiVersion: parts.join("/"), kind,
          namespace, name }) : null;
        return h("tr", { class: "backoff", "data-key": b.key },
          h("td", { colspan: 2 }, "in backoff: ", link ? h("a", { href: link }, b.key) : b.key),
          h("td", { colspan: 3 }, "retries " + b.retries + ", next in " +
            duration(b.nextAttemptInSeconds)),
          h("td", { colspan: 7, class: "error" }, b.lastError || ""));
      })));
  }

  function operatorSection(operator) {
    const snapshot = operator.snapshot || {};
    const info = snapshot.operator || {};
    const election = snapshot.leaderElection || {};
    const trace = snapshot.trace || {};
    const section = h("section", { class: "operator " + operator.state, "data-url": operator.url,
      "data-state": operator.state },
      h("h2", {}, info.name || operator.url, " ",
        h("span", { class: "state " + operator.state }, operator.state), " ",
        h("small", {}, operator.url, operator.state === "gone" ? " since " + clock(operator.since) +
          (operator.reason ? " — " + operator.reason : "") : "")));
    if (!operator.snapshot) return section;
    section.append(
      h("p", {}, "identity ", info.identity || "–", "; leader election: ",
        election.enabled ? (election.leader ? "leader" : "follower (holder " +
          (election.holder || "none") + ")") + " of " + election.lease : "off",
        "; trace: ", trace.enabled ? trace.size + "/" + trace.capacity + " records" : "off"),
      h("h3", {}, "Queue depth"), depthChart(operator.history),
      controllerTable(snapshot.controllers || [], operator.url),
      h("h3", {}, "Informers"),
      h("table", { class: "informers" }, h("tr", {}, ["Kind", "Namespace", "Objects", "Synced"]
        .map((t) => h("th", {}, t))),
      (snapshot.informers || []).map((i) => h("tr", {}, h("td", {}, i.kind),
        h("td", {}, i.namespace || "all"), h("td", {}, i.objects),
        h("td", {}, i.synced ? "yes" : "no")))));
    return section;
  }

  function controllersView() {
    async function poll() {
      try {
        const answer = await getJSON("/api/operators");
        setLive("on", "live");
        main.replaceChildren(h("h1", {}, "Controllers"), ...(answer.operators.length ?
          answer.operators.map(operatorSection) : [h("p", { class: "muted" },
            "No operator endpoints: start the console with --operator URL (the operator's " +
            "metrics address), or use setpoint dev / setpoint demo.")]));
        main.dataset.loaded = "true";
      } catch (error) {
        setLive("off", "console unreachable");
        console.error(error);
      }
      setTimeout(poll, 1000);
    }
    poll();
  }

  // --- Cluster -----------------------------------------------------------------------------

  function clusterView() {
    async function poll() {
      let answer;
      try {
        answer = await getJSON("/api/cluster");
        setLive("on", "live");
      } catch (error) {
        setLive("off", "console unreachable");
        setTimeout(poll, 2000);
        return;
      }
      const nodes = answer.nodes.forbidden ? forbidden(answer.nodes.forbidden) :
        h("table", { class: "nodes" }, h("tr", {}, ["Node", "Age", "Conditions"]
          .map((t) => h("th", {}, t))), answer.nodes.map((n) => h("tr", { "data-name": n.name },
          h("td", {}, n.name), h("td", {}, age(n.created)), h("td", {}, conditionChips(n.conditions)))));
      const phases = answer.phases || {};
      const total = Object.values(phases).reduce((a, b) => a + b, 0) || 1;
      const bar = h("div", { class: "phasebar" }, Object.entries(phases).map(([phase, count]) =>
        h("span", { class: "phase-" + phase.toLowerCase(), style: "flex:" + count,
          title: phase + ": " + count }, phase + " " + count)));
      const pods = answer.pods.forbidden ? forbidden(answer.pods.forbidden) :
        h("table", { class: "pods" }, h("tr", {}, ["Namespace", "Pod", "Phase", "Ready",
          "Restarts", "Node", "Age"].map((t) => h("th", {}, t))), answer.pods.map((p) =>
          h("tr", { "data-name": p.name }, h("td", {}, p.namespace), h("td", {},
            h("a", { href: objectLink("object", { apiVersion: "v1", kind: "Pod",
              namespace: p.namespace, name: p.name }) }, p.name)),
          h("td", {}, phaseBadge(p.phase)), h("td", {}, p.ready), h("td", {}, p.restarts),
          h("td", {}, p.node || ""), h("td", {}, age(p.created)))));
      const events = answer.controllerEvents.forbidden ? forbidden(answer.controllerEvents.forbidden) :
        h("table", { class: "events" }, h("tr", {}, ["Time", "Component", "Type", "Reason",
          "Object", "Message"].map((t) => h("th", {}, t))), answer.controllerEvents.map((e) =>
          h("tr", { class: e.type === "Warning" ? "warning" : "" }, h("td", {}, clock(e.time)),
            h("td", {}, e.component || ""), h("td", {}, e.type), h("td", {}, e.reason),
            h("td", {}, (e.namespace ? e.namespace + "/" : "") + e.object), h("td", {}, e.message))));
      main.replaceChildren(h("h1", {}, "Cluster"), h("h2", {}, "Nodes"), nodes,
        h("h2", {}, "Pods (" + (answer.pods.length || 0) + ")"), total > 0 ? bar : "", pods,
        h("h2", {}, "Controllers' recent Events"), events);
      main.dataset.loaded = "true";
      setTimeout(poll, 2000);
    }
    poll();
  }

  // --- start -------------------------------------------------------------------------------

  const params = { ...main.dataset };
  const views = { resources: resourcesView, object: objectView, timeline: timelineView,
    controllers: controllersView, cluster: clusterView };
  (views[params.view] || resourcesView)(params);
})();
