/*
 * app.js - sweep's dashboard (docs/dashboard.md): the list of sweeps, one
 * sweep's page (runs, curves, parallel coordinates, best so far, GPU
 * lanes, failures, report figures) and two sweeps side by side.
 *
 * Data: the JSON API under /api/v1/ once, then the event stream
 * /api/v1/events from the `seq` the API answered with, applied
 * idempotently (a run event carries the whole run; a value that is
 * already on its curve is skipped). Charts are d3 (Debian's libjs-d3):
 * SVG where a test or a person needs to find an element (a curve, a
 * stop mark, a lane's bar), canvas where there are thousands of lines
 * (parallel coordinates).
 *
 * Stable hooks (the contract in docs/dashboard.md): each run's row
 * carries data-run and data-state; each curve data-curve (and
 * data-points); a stopped run's mark data-stopped-at.
 */
(function () {
  "use strict";

  var API = "/api/v1/";
  var STATES = ["pending", "running", "paused", "finished", "failed", "stopped", "canceled"];
  var MAX_CURVES = 30;
  var state = null;   /* the page's model; null on the list */
  var compared = null; /* the compare page's sweeps and curves, for a resize */
  var source = null;  /* the EventSource */
  var color = d3.scale.category10();

  /* ---- small helpers ------------------------------------------------ */

  function $(sel, root) { return (root || document).querySelector(sel); }
  function esc(s) {
    return String(s == null ? "" : s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function num(v) {
    if (v == null || typeof v !== "number" || !isFinite(v)) return "";
    if (Number.isInteger(v)) return String(v);
    var a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(3) : String(+v.toPrecision(5));
  }
  function dur(s) {
    if (s == null || !isFinite(s) || s < 0) return "";
    if (s < 60) return s.toFixed(1) + " s";
    if (s < 3600) return (s / 60).toFixed(1) + " min";
    return (s / 3600).toFixed(2) + " h";
  }
  function when(t) { return t ? new Date(t * 1000).toLocaleString() : ""; }
  function flat(obj, prefix, out) {
    out = out || {};
    Object.keys(obj || {}).forEach(function (k) {
      var v = obj[k], key = prefix ? prefix + "." + k : k;
      if (v && typeof v === "object" && !Array.isArray(v)) flat(v, key, out);
      else out[key] = v;
    });
    return out;
  }
  function short(params) {
    var f = flat(params);
    return Object.keys(f).map(function (k) {
      var v = f[k];
      return k + "=" + (typeof v === "number" ? num(v) : JSON.stringify(v));
    }).join(" ");
  }
  /* A request to the API. A server that does not answer (the sweep's
   * own ends with it) rejects with an error marked .offline, which the
   * page shows as a state, never as an error message. */
  function get(path) {
    return fetch(API + path, { credentials: "same-origin" }).catch(function () {
      var e = new Error("the dashboard's server does not answer");
      e.offline = true;
      throw e;
    }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error(j.error || r.statusText);
        return j;
      });
    });
  }
  function now() { return Date.now() / 1000; }
  function shortWhen(t) {
    return new Date(t * 1000).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  }
  /* The header's mark: kind is on (live), off, or ended; text says it. */
  function setLive(kind, text, title) {
    var el = $("#live");
    el.className = "live " + kind;
    el.title = title || "";
    el.hidden = !text;
    $("#live-text").textContent = text;
  }
  function throttle(fn, ms) {
    var due = null;
    return function () {
      if (due) return;
      due = setTimeout(function () { due = null; fn(); }, ms);
    };
  }
  function closeStream() {
    if (source) source.close();
    source = null;
  }

  /* ---- routing ------------------------------------------------------ */

  function route() {
    var h = location.hash.replace(/^#\/?/, "").split("/");
    closeStream();
    state = null;
    compared = null;
    if (h[0] === "sweep" && h[1]) return sweepPage(decodeURIComponent(h[1]));
    if (h[0] === "compare" && h[1] && h[2])
      return comparePage(decodeURIComponent(h[1]), decodeURIComponent(h[2]));
    return listPage();
  }

  function crumbs(html) { $("#crumbs").innerHTML = html; }
  function fail(err) {
    setLive("off", "");
    $("#app").innerHTML = err.offline
      ? '<p class="muted" id="offline">The dashboard\'s server does not answer. A sweep\'s own server ends with the sweep: ' +
        "<code>sweep ui</code> serves the pages of sweeps that have ended.</p>"
      : '<p class="error">' + esc(err.message || err) + '</p><p><a href="#/">the list of sweeps</a></p>';
  }

  /* ---- the list of sweeps ------------------------------------------- */

  function listPage() {
    crumbs("sweeps");
    setLive("off", "");
    get("sweeps").then(function (j) {
      var rows = j.sweeps || [];
      var html = '<h2>Sweeps <small>' + rows.length + ' in this home</small></h2>' +
        '<div class="toolbar"><button id="cmp" disabled>compare the two checked</button></div>' +
        '<div class="scroll-x"><table id="sweeps"><thead><tr><th></th><th>sweep</th><th>name</th><th>method</th>' +
        '<th>state</th><th>runs</th><th>best</th><th>metric</th><th>created</th></tr></thead><tbody>';
      rows.forEach(function (s) {
        var states = Object.keys(s.states || {}).map(function (k) { return s.states[k] + " " + k; }).join(", ");
        html += '<tr data-sweep="' + esc(s.id) + '" data-state="' + esc(s.state) + '">' +
          '<td><input type="checkbox" value="' + esc(s.id) + '"></td>' +
          '<td><a href="#/sweep/' + esc(s.id) + '">' + esc(s.id) + "</a></td>" +
          "<td>" + esc(s.name) + "</td><td>" + esc(s.method) + "</td>" +
          '<td><span class="state s-' + esc(s.state) + '">' + esc(s.state) + "</span></td>" +
          '<td title="' + esc(states) + '">' + s.runs + "</td>" +
          '<td class="num">' + num(s.best) + "</td><td>" + esc(s.metric) + (s.goal ? " (" + esc(s.goal) + ")" : "") +
          "</td><td>" + when(s.created_at) + "</td></tr>";
      });
      $("#app").innerHTML = html + "</tbody></table></div>" +
        (rows.length ? "" : '<p class="muted">No sweeps yet: <code>sweep run FILE</code> makes one.</p>');
      var boxes = [].slice.call(document.querySelectorAll("#sweeps input"));
      boxes.forEach(function (b) {
        b.onchange = function () {
          var on = boxes.filter(function (x) { return x.checked; });
          $("#cmp").disabled = on.length !== 2;
        };
      });
      $("#cmp").onclick = function () {
        var on = boxes.filter(function (x) { return x.checked; });
        location.hash = "#/compare/" + on[0].value + "/" + on[1].value;
      };
    }).catch(fail);
  }

  /* ---- one sweep: the model ----------------------------------------- */

  function newModel(id) {
    return {
      id: id, sweep: null, report: null, runs: {}, order: [], metric: null,
      maximize: false, sort: { key: "idx", asc: true }, filter: "",
      selected: {}, autoSelect: true, curveMetric: null, xBy: "step",
      series: {}, names: [], gpus: null, notices: [], rowsDirty: true
    };
  }

  function better(m, a, b) { return m.maximize ? a > b : a < b; }

  function upsertRun(m, r) {
    var old = m.runs[r.id];
    if (old && old.step != null && r.step == null) r.step = old.step;
    /* the stream's runs carry no labels: they are the store's, not the engine's */
    if (old && r.tags === undefined) { r.tags = old.tags; r.note = old.note; }
    if (!old) m.order.push(r.id);
    m.runs[r.id] = r;
  }

  /* A value from the stream: the run's value and step, and its curve. */
  function applyValue(m, ev) {
    var r = m.runs[ev.run];
    if (!r) return false;
    if (ev.step != null && (r.step == null || ev.step > r.step)) r.step = ev.step;
    if (ev.name === m.metric && ev.value != null) r.value = ev.value;
    var s = m.series[ev.run];
    if (ev.name === m.curveMetric && s) {
      var last = s[s.length - 1];
      if (!last || ev.step == null || last[0] == null || ev.step > last[0] ||
          (ev.step === last[0] && ev.time > last[2] + 1e-3 && last[1] !== ev.value))
        s.push([ev.step, ev.value, ev.time]);
    }
    return true;
  }

  /* ---- one sweep: the page ------------------------------------------ */

  function sweepPage(id) {
    var m = state = newModel(id);
    crumbs('<a href="#/">sweeps</a> / ' + esc(id));
    setLive("off", "");
    $("#app").innerHTML = '<p class="muted">loading ' + esc(id) + "…</p>";
    Promise.all([get("sweeps/" + encodeURIComponent(id)),
                 get("sweeps/" + encodeURIComponent(id) + "/runs"),
                 get("sweeps/" + encodeURIComponent(id) + "/names")])
      .then(function (res) {
        if (state !== m) return;
        m.sweep = res[0].sweep;
        m.report = res[0].report;
        m.reportAt = now();
        m.metric = m.sweep.metric;
        m.maximize = m.sweep.goal === "maximize";
        m.curveMetric = m.metric || (res[2].names || [])[0] || null;
        m.names = res[2].names || [];
        (res[1].runs || []).forEach(function (r) { upsertRun(m, r); });
        m.seq = Math.min(res[0].seq, res[1].seq);
        m.sort = m.metric ? { key: "value", asc: !m.maximize } : { key: "idx", asc: true };
        m.ended = m.sweep.state !== "running";
        layout(m);
        renderAll(m);
        loadCurves(m);
        loadGpus(m);
        loadFailures(m);
        showState(m);
        if (!m.ended) follow(m);   /* an ended sweep's server pushes nothing */
      }).catch(fail);
  }

  function layout(m) {
    var s = m.sweep;
    $("#app").innerHTML =
      '<h2>Sweep ' + esc(s.id) + (s.name ? " <small>" + esc(s.name) + "</small>" : "") + "</h2>" +
      '<div class="facts" id="facts"></div>' +
      '<div id="sweep-status"></div>' +
      '<div id="notices"></div>' +
      '<h2>Runs <small id="runs-count"></small></h2>' +
      '<div class="toolbar"><input type="search" id="filter" placeholder="filter: state, id, param=value…">' +
      '<span class="muted">click a row to add or remove its curve</span></div>' +
      '<div class="scroll" id="runs-wrap"><table id="runs"><thead></thead><tbody></tbody></table></div>' +
      '<div class="grid">' +
      '<div class="panel"><h2>Learning curves <small id="curve-note"></small></h2>' +
      '<div class="toolbar"><select id="curve-metric"></select>' +
      '<select id="curve-x"><option value="step">x: step</option><option value="time">x: time</option></select>' +
      '<select id="curve-y"><option value="linear">y: linear</option><option value="log">y: log</option></select></div>' +
      '<svg id="curves" width="100%" height="300"></svg><div class="legend" id="curve-legend"></div></div>' +
      '<div class="panel"><h2>Best so far <small>' + esc(m.metric || "no metric") + '</small></h2>' +
      '<svg id="best" width="100%" height="300"></svg></div>' +
      '<div class="panel"><h2>Parameters against the value</h2><div class="pc-wrap" id="pc"></div></div>' +
      '<div class="panel"><h2>GPUs over time <small id="gpu-note"></small></h2><svg id="lanes" width="100%" height="120"></svg></div>' +
      "</div>" +
      '<div class="grid"><div class="panel"><h2>Failed runs <small id="fail-count"></small></h2><div id="failures"></div></div>' +
      '<div class="panel"><h2>Report <small id="report-note">as sweep report computes it</small></h2><div id="report"></div></div></div>';
    $("#filter").oninput = function () { m.filter = this.value; m.rowsDirty = true; renderRows(m); };
    $("#curve-x").onchange = function () { m.xBy = this.value; drawCurves(m); };
    $("#curve-y").onchange = function () { m.yLog = this.value === "log"; drawCurves(m); };
    $("#curve-metric").onchange = function () { m.curveMetric = this.value; m.series = {}; loadCurves(m); };
  }

  function renderAll(m) {
    renderFacts(m);
    m.rowsDirty = true;
    renderRows(m);
    drawBest(m);
    drawParallel(m);
    renderReport(m);
  }

  function counts(m) {
    var c = {};
    m.order.forEach(function (id) { var s = m.runs[id].state; c[s] = (c[s] || 0) + 1; });
    return c;
  }

  function bestRun(m) {
    var best = null;
    m.order.forEach(function (id) {
      var r = m.runs[id];
      if (r.value == null || (r.state !== "finished" && r.state !== "stopped" && r.state !== "running")) return;
      if (!best || better(m, r.value, best.value)) best = r;
    });
    return best;
  }

  function renderFacts(m) {
    var s = m.sweep, c = counts(m), b = bestRun(m);
    var git = s.git_commit ? s.git_commit.slice(0, 12) + (s.git_dirty ? " (dirty)" : "") : "none";
    var facts = [["state", '<span class="state s-' + esc(s.state) + '" id="sweep-state">' + esc(s.state) + "</span>"],
      ["method", esc(s.method)], ["metric", esc(m.metric ? m.metric + " (" + s.goal + ")" : "none")],
      ["parallel", s.parallel], ["backend", esc(s.backend || "local")], ["git", esc(git)],
      ["created", when(s.created_at)]];
    if (m.ended && endedAt(m)) facts.push(["ended", when(endedAt(m))]);
    facts.push(["runs", STATES.filter(function (k) { return c[k]; }).map(function (k) { return c[k] + " " + k; }).join(", ")],
      ["best", b ? num(b.value) + " (" + esc(b.id) + ")" : ""]);
    if (m.report && m.report.budget_spent != null) facts.push(["budget", Math.round(m.report.budget_spent * 100) + " % spent"]);
    $("#facts").innerHTML = facts.map(function (f) { return "<div><span>" + f[0] + "</span>" + f[1] + "</div>"; }).join("");
  }

  /* When the sweep ended: the store's time, else the stream's (the
   * moment it said so), else its last run's end (an interrupted sweep
   * keeps no end time). */
  function endedAt(m) {
    if (m.sweep.ended_at) return m.sweep.ended_at;
    if (m.endedAt) return m.endedAt;
    var t = 0;
    m.order.forEach(function (id) { t = Math.max(t, m.runs[id].ended_at || 0); });
    return t || null;
  }

  /* How each end is said: [verb, what to do next]. */
  var ENDED = {
    finished: ["finished", ""], canceled: ["was canceled", ""],
    interrupted: ["was interrupted", "<code>sweep resume ID</code> continues it"],
    failed: ["failed", "its first runs all failed, or none could start: fix its command, then <code>sweep resume ID</code>"]
  };

  /* The sweep's state, in the header and above the runs: live, ended
   * (and when), or a server that does not answer. What the page shows
   * stays: only this says how current it is. */
  function showState(m) {
    var s = m.sweep, box = $("#sweep-status");
    if (!s || !box) return;
    if (m.ended) {
      var t = endedAt(m), said = ENDED[s.state] || [esc(s.state), ""], next = said[1].replace("ID", esc(s.id));
      setLive("ended", "ended" + (t ? " " + shortWhen(t) : ""), "sweep " + s.id + " " + s.state + (t ? " at " + when(t) : ""));
      $("#live").setAttribute("data-ended-at", t || "");
      box.className = "status ended";
      box.setAttribute("data-status", "ended");
      box.innerHTML = "This sweep " + said[0] + (t ? " at " + esc(when(t)) + (s.created_at ? " (" + dur(t - s.created_at) + " after it was created)" : "") : "") +
        (next ? ": " + next : "") + ". " +
        (m.wasLive ? "Its server closed with it: the page keeps what it last received; <code>sweep ui " + esc(s.id) + "</code> serves it again."
          : "The page shows the store as it was when it loaded.");
      return;
    }
    $("#live").removeAttribute("data-ended-at");
    if (m.offline) {
      setLive("off", "offline", "the sweep's server does not answer");
      box.className = "status offline";
      box.setAttribute("data-status", "offline");
      box.innerHTML = "The sweep's server does not answer (did its <code>sweep run</code> stop?): the page keeps what it last received and tries again.";
      return;
    }
    setLive(m.streaming ? "on" : "off", m.streaming ? "live" : "connecting…", m.streaming ? "updates as the sweep runs" : "");
    box.className = "status";
    box.setAttribute("data-status", m.streaming ? "live" : "connecting");
    box.innerHTML = "";
  }

  /* A request that failed: a server gone is the page's state, anything
   * else is said where the request's answer would have been. */
  function trouble(m, e, el) {
    if (e.offline) {
      if (state === m && !m.offline) { m.offline = true; showState(m); renderReport(m); }
    } else if (el) el.textContent = e.message;
  }

  /* ---- the runs table ----------------------------------------------- */

  var COLS = [
    { key: "id", label: "run" }, { key: "state", label: "state" },
    { key: "params", label: "params" }, { key: "value", label: "value", num: true },
    { key: "step", label: "step", num: true }, { key: "gpu", label: "GPU" },
    { key: "elapsed", label: "elapsed", num: true }, { key: "reason", label: "reason" },
    { key: "labels", label: "tags, note" }
  ];

  /* `sweep tag` and `sweep note`: the tags, then the note's first line. */
  function labelsOf(r) {
    var note = r.note ? String(r.note).split("\n")[0] : "";
    return ((r.tags || []).join(", ") + (r.tags && r.tags.length && note ? " · " : "") + note);
  }

  function elapsed(r) {
    if (!r.started_at) return null;
    return (r.ended_at || (r.state === "running" ? now() : r.started_at)) - r.started_at;
  }
  function gpuOf(r) {
    var d = r.gpus && r.gpus.devices;
    if (!d || !d.length) return "";
    var share = r.gpus.share != null && r.gpus.share < 1 ? " ×" + num(r.gpus.share) : "";
    return d.map(function (x) { return String(x).slice(0, 12); }).join(",") + share;
  }
  function sortValue(m, r, key) {
    if (key === "elapsed") return elapsed(r);
    if (key === "gpu") return gpuOf(r);
    if (key === "params") return short(r.params);
    if (key === "labels") return labelsOf(r) || null;
    if (key === "id") return r.idx;
    return r[key];
  }
  function matches(r, words) {
    if (!words.length) return true;
    var hay = (r.id + " " + r.state + " " + short(r.params) + " " + (r.reason || "") + " " +
               (r.tags || []).join(" ") + " " + (r.note || "")).toLowerCase();
    return words.every(function (w) { return hay.indexOf(w) >= 0; });
  }

  function visibleRuns(m) {
    var words = m.filter.toLowerCase().split(/\s+/).filter(Boolean);
    var key = m.sort.key, asc = m.sort.asc ? 1 : -1;
    var list = m.order.map(function (id) { return m.runs[id]; }).filter(function (r) { return matches(r, words); });
    list.sort(function (a, b) {
      var x = sortValue(m, a, key), y = sortValue(m, b, key);
      if (x == null && y == null) return a.idx - b.idx;
      if (x == null) return 1;   /* no value: always last */
      if (y == null) return -1;
      return (x < y ? -1 : x > y ? 1 : a.idx - b.idx) * asc;
    });
    return list;
  }

  function rowHtml(m, r) {
    return '<tr data-run="' + esc(r.id) + '" data-state="' + esc(r.state) + '"' + (!m.autoSelect && m.selected[r.id] ? ' class="sel"' : "") + ">" +
      "<td>" + esc(r.id) + "</td>" +
      '<td><span class="state s-' + esc(r.state) + '">' + esc(r.state) + "</span></td>" +
      '<td class="params" title="' + esc(short(r.params)) + '">' + esc(short(r.params)) + "</td>" +
      '<td class="num" data-col="value">' + num(r.value) + "</td>" +
      '<td class="num">' + (r.step == null ? "" : r.step) + "</td>" +
      "<td>" + esc(gpuOf(r)) + "</td>" +
      '<td class="num">' + dur(elapsed(r)) + "</td>" +
      '<td class="reason" title="' + esc(r.reason) + '">' + esc(r.reason) + "</td>" +
      '<td class="reason" data-col="labels" title="' + esc(r.note || "") + '">' + esc(labelsOf(r)) + "</td></tr>";
  }

  /* Up to WINDOW_ALL rows are all in the table; past that only the rows
   * in view (and a margin) are, between two spacers, so 10,000 runs cost
   * what 100 do. Rows are ROW_H pixels high (app.css). */
  var WINDOW_ALL = 500, ROW_H = 22, MARGIN = 30;

  function renderRows(m) {
    var t0 = performance.now();
    var thead = $("#runs thead");
    if (!thead) return;
    thead.innerHTML = "<tr>" + COLS.map(function (c) {
      var cls = m.sort.key === c.key ? "sorted" + (m.sort.asc ? " asc" : "") : "";
      return '<th data-key="' + c.key + '" class="' + cls + '">' + c.label + "</th>";
    }).join("") + "</tr>";
    m.list = visibleRuns(m);
    $("#runs-count").textContent = m.list.length === m.order.length ? m.order.length + " runs"
      : m.list.length + " of " + m.order.length + " runs";
    m.rowsDirty = false;
    paintRows(m);
    window.sweepDashboard.lastRender = { rows: m.list.length, ms: performance.now() - t0 };
    [].forEach.call(thead.querySelectorAll("th"), function (th) {
      th.onclick = function () {
        var k = th.getAttribute("data-key");
        m.sort = m.sort.key === k ? { key: k, asc: !m.sort.asc }
          : { key: k, asc: !(k === "value" && m.maximize) };
        renderRows(m);
      };
    });
    var tbody = $("#runs tbody"), wrap = $("#runs-wrap");
    tbody.onclick = function (e) {
      var tr = e.target.closest("tr[data-run]");
      if (!tr) return;
      var id = tr.getAttribute("data-run");
      m.autoSelect = false;
      if (m.selected[id]) delete m.selected[id]; else m.selected[id] = true;
      tr.className = m.selected[id] ? "sel" : "";
      loadCurves(m);
    };
    wrap.onscroll = function () {
      if (m.list.length <= WINDOW_ALL || m.scrollDue) return;
      m.scrollDue = requestAnimationFrame(function () { m.scrollDue = null; paintRows(m); });
    };
  }

  /* The rows of m.list that are in view, or all of them. */
  function paintRows(m) {
    var tbody = $("#runs tbody"), wrap = $("#runs-wrap"), list = m.list;
    var from = 0, to = list.length;
    if (list.length > WINDOW_ALL) {
      from = Math.max(0, Math.floor(wrap.scrollTop / ROW_H) - MARGIN);
      to = Math.min(list.length, from + Math.ceil((wrap.clientHeight || 420) / ROW_H) + 2 * MARGIN);
    }
    var html = from > 0 ? '<tr class="pad" style="height:' + from * ROW_H + 'px"></tr>' : "";
    for (var i = from; i < to; i++) html += rowHtml(m, list[i]);
    if (to < list.length) html += '<tr class="pad" style="height:' + (list.length - to) * ROW_H + 'px"></tr>';
    tbody.innerHTML = html;
  }

  /* A run changed: its row in place when it is there and the order
   * cannot have changed, else the table again (at most every 300 ms). */
  function touchRow(m, id) {
    var tr = document.querySelector('#runs tr[data-run="' + CSS.escape(id) + '"]');
    if (tr && m.sort.key !== "value" && m.sort.key !== "state" && !m.filter) {
      tr.outerHTML = rowHtml(m, m.runs[id]);
      return;
    }
    m.rowsDirty = true;
    m.renderLater();
  }

  /* ---- learning curves ---------------------------------------------- */

  /* The runs whose curves are drawn: those clicked, else the best few
   * and the running ones. */
  function curveRuns(m) {
    if (!m.autoSelect) return Object.keys(m.selected).filter(function (id) { return m.runs[id]; });
    var withValue = m.order.map(function (id) { return m.runs[id]; })
      .filter(function (r) { return r.value != null || r.state === "running"; });
    withValue.sort(function (a, b) {
      if (a.value == null) return 1;
      if (b.value == null) return -1;
      return better(m, a.value, b.value) ? -1 : 1;
    });
    var pick = withValue.slice(0, MAX_CURVES).map(function (r) { return r.id; });
    m.selected = {};
    pick.forEach(function (id) { m.selected[id] = true; });
    return pick;
  }

  function loadCurves(m) {
    var sel = $("#curve-metric");
    if (sel) {
      var names = m.names.slice();
      if (m.curveMetric && names.indexOf(m.curveMetric) < 0) names.unshift(m.curveMetric);
      sel.innerHTML = names.map(function (n) {
        return "<option" + (n === m.curveMetric ? " selected" : "") + ">" + esc(n) + "</option>";
      }).join("");
    }
    if (!m.curveMetric) return;
    var ids = curveRuns(m).filter(function (id) { return !m.series[id]; });
    if (!ids.length) return drawCurves(m);
    get("sweeps/" + encodeURIComponent(m.id) + "/metrics?name=" + encodeURIComponent(m.curveMetric) +
        "&runs=" + ids.join(",")).then(function (j) {
      if (state !== m) return;
      ids.forEach(function (id) { m.series[id] = (j.series || {})[id] || []; });
      drawCurves(m);
    }).catch(function (e) { trouble(m, e, $("#curve-note")); });
  }

  function drawCurves(m) {
    var svg = d3.select("#curves");
    if (svg.empty()) return;
    var node = svg.node(), W = node.clientWidth || 500, H = 300;
    var pad = { l: 56, r: 12, t: 8, b: 28 };
    var ids = Object.keys(m.selected).filter(function (id) { return m.series[id]; });
    var xi = m.xBy === "time" ? 2 : 0;
    var t0 = d3.min(ids, function (id) { var s = m.series[id]; return s.length ? s[0][2] : null; }) || 0;
    function xv(p, i) { return xi === 2 ? p[2] - t0 : (p[0] == null ? i : p[0]); }
    var pts = [];
    ids.forEach(function (id) { m.series[id].forEach(function (p, i) { if (p[1] != null) pts.push([xv(p, i), p[1]]); }); });
    svg.selectAll("*").remove();
    $("#curve-note").textContent = (m.curveMetric || "") + " · " + ids.length + " runs";
    if (!pts.length) {
      svg.append("text").attr("x", 20).attr("y", 40).attr("class", "muted").text("no values yet");
      $("#curve-legend").innerHTML = "";
      return;
    }
    var x = d3.scale.linear().domain(d3.extent(pts, function (p) { return p[0]; })).range([pad.l, W - pad.r]);
    var ext = d3.extent(pts, function (p) { return p[1]; });
    var logOk = m.yLog && ext[0] > 0;   /* a log axis needs values above 0 */
    var y = (logOk ? d3.scale.log() : d3.scale.linear()).domain(ext).nice().range([H - pad.b, pad.t]);
    svg.append("g").attr("class", "axis").attr("transform", "translate(0," + (H - pad.b) + ")")
      .call(d3.svg.axis().scale(x).orient("bottom").ticks(8));
    svg.append("g").attr("class", "axis").attr("transform", "translate(" + pad.l + ",0)")
      .call(d3.svg.axis().scale(y).orient("left").ticks(6));
    svg.append("text").attr("x", W - pad.r).attr("y", H - 2).attr("text-anchor", "end")
      .text(xi === 2 ? "seconds since the first value" : "step");
    var line = d3.svg.line().defined(function (p) { return p[1] != null && (!logOk || p[1] > 0); })
      .x(function (p) { return x(p[2]); }).y(function (p) { return y(p[1]); });
    var legend = "";
    ids.forEach(function (id) {
      var s = m.series[id].map(function (p, i) { return [p[0], p[1], xv(p, i)]; });
      var r = m.runs[id], c = color(id);
      svg.append("path").attr("class", "curve").attr("d", line(s)).style("stroke", c)
        .attr("data-curve", id).attr("data-points", s.length)
        .append("title").text(id + " " + short(r.params));
      if (r.state === "stopped" && s.length) {
        var last = s[s.length - 1];
        svg.append("circle").attr("class", "stopmark").attr("r", 5).attr("cx", x(last[2])).attr("cy", y(last[1]))
          .style("fill", c).attr("data-stopped-at", last[0] == null ? s.length - 1 : last[0]).attr("data-run", id)
          .append("title").text(id + " stopped at " + (last[0] == null ? "its last value" : "step " + last[0]) +
            ": " + (r.reason || "by the stopping rule"));
      }
      legend += '<span data-legend="' + esc(id) + '"><i style="background:' + c + '"></i>' + esc(id) +
        (r.state === "stopped" ? " ✕" : "") + "</span>";
    });
    $("#curve-legend").innerHTML = legend;
  }

  /* ---- best so far -------------------------------------------------- */

  function drawBest(m) {
    var svg = d3.select("#best");
    if (svg.empty()) return;
    var W = svg.node().clientWidth || 500, H = 300, pad = { l: 56, r: 12, t: 8, b: 28 };
    var ended = m.order.map(function (id) { return m.runs[id]; })
      .filter(function (r) { return r.value != null && r.ended_at && (r.state === "finished" || r.state === "stopped"); })
      .sort(function (a, b) { return a.ended_at - b.ended_at; });
    svg.selectAll("*").remove();
    if (!ended.length) {
      svg.append("text").attr("x", 20).attr("y", 40).text("no run has ended with a value yet");
      return;
    }
    var t0 = m.sweep.created_at || ended[0].ended_at, best = null, steps = [];
    ended.forEach(function (r) {
      if (best == null || better(m, r.value, best)) best = r.value;
      steps.push({ t: r.ended_at - t0, v: r.value, b: best, id: r.id });
    });
    var x = d3.scale.linear().domain([0, d3.max(steps, function (s) { return s.t; }) || 1]).range([pad.l, W - pad.r]);
    var y = d3.scale.linear().domain(d3.extent(steps, function (s) { return s.v; })).nice().range([H - pad.b, pad.t]);
    svg.append("g").attr("class", "axis").attr("transform", "translate(0," + (H - pad.b) + ")")
      .call(d3.svg.axis().scale(x).orient("bottom").ticks(6).tickFormat(function (s) { return dur(s); }));
    svg.append("g").attr("class", "axis").attr("transform", "translate(" + pad.l + ",0)")
      .call(d3.svg.axis().scale(y).orient("left").ticks(6));
    svg.selectAll("circle.pt").data(steps).enter().append("circle").attr("class", "pt").attr("r", 2.5)
      .attr("cx", function (s) { return x(s.t); }).attr("cy", function (s) { return y(s.v); })
      .style("fill", "#9aa3ad").append("title").text(function (s) { return s.id + ": " + num(s.v); });
    svg.append("path").attr("class", "curve").attr("id", "best-line").style("stroke", "#2a9d50")
      .attr("d", d3.svg.line().interpolate("step-after").x(function (s) { return x(s.t); })
        .y(function (s) { return y(s.b); })(steps));
  }

  /* ---- parallel coordinates ----------------------------------------- */

  function drawParallel(m) {
    var wrap = $("#pc");
    if (!wrap) return;
    var runs = m.order.map(function (id) { return m.runs[id]; });
    var keys = [], seen = {};
    runs.forEach(function (r) {
      var f = flat(r.params);
      r._flat = f;
      Object.keys(f).forEach(function (k) { if (!seen[k]) { seen[k] = 1; keys.push(k); } });
    });
    keys = keys.filter(function (k) {   /* constants say nothing */
      var vals = {};
      runs.forEach(function (r) { vals[JSON.stringify(r._flat[k])] = 1; });
      return Object.keys(vals).length > 1;
    });
    if (m.metric) keys.push("\u2192 " + m.metric);
    var W = wrap.clientWidth || 500, H = 300, pad = { l: 48, r: 60, t: 18, b: 10 };   /* room for "0.0018" */
    wrap.style.height = H + "px";
    wrap.innerHTML = "";
    if (keys.length < 2) {
      wrap.innerHTML = '<p class="muted">one parameter or none varies</p>';
      return;
    }
    var x = d3.scale.ordinal().domain(keys).rangePoints([pad.l, W - pad.r]);
    var ys = {};
    keys.forEach(function (k, i) {
      var isMetric = m.metric && i === keys.length - 1;
      var vals = runs.map(function (r) { return isMetric ? r.value : r._flat[k]; }).filter(function (v) { return v != null; });
      if (vals.every(function (v) { return typeof v === "number"; }))
        ys[k] = d3.scale.linear().domain(d3.extent(vals)).nice().range([H - pad.b, pad.t]);
      else
        ys[k] = d3.scale.ordinal().domain(vals.map(String).filter(function (v, j, a) { return a.indexOf(v) === j; }).sort())
          .rangePoints([H - pad.b, pad.t]);
      ys[k].isMetric = isMetric;
    });
    var canvas = document.createElement("canvas");
    var dpr = window.devicePixelRatio || 1;
    canvas.width = W * dpr; canvas.height = H * dpr;
    canvas.style.width = W + "px"; canvas.style.height = H + "px";
    wrap.appendChild(canvas);
    var ctx = canvas.getContext("2d");
    ctx.scale(dpr, dpr);
    var values = runs.map(function (r) { return r.value; }).filter(function (v) { return v != null; });
    var shade = d3.scale.linear().domain(d3.extent(values)).range(m.maximize ? ["#d1343b", "#2a9d50"] : ["#2a9d50", "#d1343b"]);
    ctx.globalAlpha = runs.length > 2000 ? 0.15 : 0.6;
    ctx.lineWidth = 1;
    runs.forEach(function (r) {
      ctx.strokeStyle = r.value == null ? "#c0c6cc" : shade(r.value);
      ctx.beginPath();
      var started = false;
      keys.forEach(function (k) {
        var v = ys[k].isMetric ? r.value : r._flat[k];
        if (v == null) { started = false; return; }
        var yy = ys[k](typeof v === "number" && ys[k].ticks ? v : String(v));
        if (yy == null || isNaN(yy)) { started = false; return; }
        if (started) ctx.lineTo(x(k), yy); else ctx.moveTo(x(k), yy);
        started = true;
      });
      ctx.stroke();
    });
    var svg = d3.select(wrap).append("svg").attr("width", W).attr("height", H).attr("id", "pc-axes");
    keys.forEach(function (k) {
      var g = svg.append("g").attr("class", "axis").attr("transform", "translate(" + x(k) + ",0)")
        .call(d3.svg.axis().scale(ys[k]).orient("left").ticks(5));
      g.append("text").attr("y", 10).attr("text-anchor", "middle").style("font-weight", "600").text(k);
    });
  }

  /* ---- GPUs over time ----------------------------------------------- */

  function loadGpus(m) {
    get("sweeps/" + encodeURIComponent(m.id) + "/gpus").then(function (j) {
      if (state !== m) return;
      m.gpus = j;
      drawLanes(m);
    }).catch(function (e) { trouble(m, e, $("#gpu-note")); });
  }

  function drawLanes(m) {
    var svg = d3.select("#lanes");
    if (svg.empty() || !m.gpus) return;
    var atts = (m.gpus.attempts || []).slice();
    /* running runs the stream has told of since */
    m.order.forEach(function (id) {
      var r = m.runs[id];
      if (r.state === "running" && r.started_at && !atts.some(function (a) { return a.run === id && !a.end; }))
        atts.push({ run: id, start: r.started_at, end: null, outcome: "running", devices: r.gpus && r.gpus.devices });
    });
    atts = atts.filter(function (a) { return !(a.outcome === "running" && m.runs[a.run] && m.runs[a.run].state !== "running"); });
    /* a lane per device (per CPU for trials without one); attempts that
     * share a device at once stack in rows of its lane */
    var lanes = [], laneOf = {}, cpu = 0;
    atts.forEach(function (a) {
      a.devs = a.devices && a.devices.length ? a.devices : ["cpu"];
      cpu += a.devs[0] === "cpu";
      a.devs.forEach(function (d) { if (!(d in laneOf)) { laneOf[d] = { rows: [] }; lanes.push(d); } });
    });
    lanes.sort(function (p, q) { return String(p).localeCompare(String(q), undefined, { numeric: true }); });
    var place = [];   /* [attempt, lane, row] */
    atts.slice().sort(function (p, q) { return p.start - q.start; }).forEach(function (a) {
      a.devs.forEach(function (d) {
        var rows = laneOf[d].rows, end = a.end || now(), r = 0;
        while (r < rows.length && rows[r] > a.start + 1e-6) r++;
        rows[r] = end;
        place.push([a, d, r]);
      });
    });
    var nrows = lanes.reduce(function (n, d) { return n + Math.max(1, laneOf[d].rows.length); }, 0);
    var OCC = 36; /* the occupancy band above the lanes */
    var RH = Math.max(4, Math.min(18, Math.floor(480 / nrows))), top = {}, y = 6 + OCC + 6;
    lanes.forEach(function (d) { top[d] = y; y += Math.max(1, laneOf[d].rows.length) * RH + 4; });
    var W = svg.node().clientWidth || 500, pad = { l: 110, r: 12, t: 6, b: 24 };
    var H = y + pad.b;
    svg.attr("height", H).selectAll("*").remove();
    $("#gpu-note").textContent = lanes.length + " lanes · " + atts.length + " attempts" + (cpu && cpu === atts.length ? " (CPU only)" : "");
    if (!atts.length) return;
    var t0 = d3.min(atts, function (a) { return a.start; });
    var t1 = d3.max(atts, function (a) { return a.end || now(); });
    var x = d3.scale.linear().domain([0, Math.max(1e-3, t1 - t0)]).range([pad.l, W - pad.r]);
    svg.append("g").attr("class", "axis").attr("transform", "translate(0," + (H - pad.b) + ")")
      .call(d3.svg.axis().scale(x).orient("bottom").ticks(6).tickFormat(function (s) { return dur(s); }));
    lanes.forEach(function (name) {
      var label = name === "cpu" ? "CPU" : "GPU " + name;
      svg.append("text").attr("x", pad.l - 6).attr("y", top[name] + 13).attr("text-anchor", "end")
        .attr("data-lane", name).text(label.slice(0, 18)).append("title").text(label);
      svg.append("line").attr("x1", pad.l).attr("x2", W - pad.r).attr("y1", top[name] - 2).attr("y2", top[name] - 2)
        .style("stroke", "#e3e7eb");
    });
    var fill = { finished: "#2a9d50", stopped: "#d08a00", failed: "#d1343b", timeout: "#d1343b",
      lost: "#8a939c", canceled: "#8a939c", running: "#2f6fde", "not started": "#8a939c", disk: "#d1343b" };
    place.forEach(function (p) {
      var a = p[0], yy = top[p[1]] + p[2] * RH;
      var x0 = x(a.start - t0), x1 = Math.max(x0 + 1, x((a.end || now()) - t0));
      var g = svg.append("g").attr("class", "lane-bar").attr("data-lane-run", a.run);
      g.append("rect").attr("x", x0).attr("y", yy).attr("width", x1 - x0).attr("height", RH - 2)
        .style("fill", fill[a.outcome] || "#8a939c").style("stroke", "#fff").style("stroke-width", RH >= 8 ? 0.5 : 0);
      if (x1 - x0 > 64 && RH >= 14)
        g.append("text").attr("x", x0 + 3).attr("y", yy + 12).text(a.run);
      g.append("title").text(a.run + " attempt " + a.attempt + ": " + a.outcome + ", " + dur((a.end || now()) - a.start) +
        (a.share != null && a.share < 1 ? ", " + num(a.share) + " of the device" : ""));
    });
    drawUtil(m, svg, x, t0, top, laneOf, RH);
    drawOccupancy(svg, atts, lanes, x, t0, t1, pad, OCC);
  }

  /* How much of the lanes was held over time: each attempt's share of
   * each device it held, over the devices (a CPU lane: its rows). */
  function drawOccupancy(svg, atts, lanes, x, t0, t1, pad, OCC) {
    var cap = lanes.length, edges = [];
    atts.forEach(function (a) {
      var g = a.devs[0] === "cpu" ? 1 : a.devs.length * (a.share != null ? Math.min(1, a.share) : 1);
      edges.push([a.start - t0, g], [(a.end || now()) - t0, -g]);
    });
    if (lanes.length === 1 && lanes[0] === "cpu") {   /* CPU only: the most held at once */
      var held0 = 0;
      cap = 0;
      edges.slice().sort(function (p, q) { return p[0] - q[0] || p[1] - q[1]; })
        .forEach(function (e) { held0 += e[1]; cap = Math.max(cap, held0); });
    }
    edges.sort(function (p, q) { return p[0] - q[0] || p[1] - q[1]; });
    var held = 0, pts = [[0, 0]], area = 0, last = 0;
    edges.forEach(function (e) {
      area += held * (e[0] - last);
      last = e[0];
      held += e[1];
      pts.push([e[0], Math.max(0, held) / Math.max(1, cap)]);
    });
    var y = d3.scale.linear().domain([0, 1]).range([6 + OCC, 6]);
    svg.append("path").attr("d", d3.svg.area().interpolate("step-after")
      .x(function (p) { return x(p[0]); }).y0(6 + OCC).y1(function (p) { return y(p[1]); })(pts))
      .style("fill", "#c9d8f5").style("stroke", "#2f6fde").style("stroke-width", 1)
      .attr("data-occupancy", ((area / Math.max(1e-9, t1 - t0)) / Math.max(1, cap)).toFixed(3));
    svg.append("text").attr("x", pad.l - 6).attr("y", 6 + OCC / 2 + 4).attr("text-anchor", "end")
      .text("occupancy " + Math.round(100 * (area / Math.max(1e-9, t1 - t0)) / Math.max(1, cap)) + " %");
  }

  /* Sampled utilisation: a thin line across each device's lane. */
  function drawUtil(m, svg, x, t0, top, laneOf, RH) {
    var byDev = {};
    (m.gpus.samples || []).forEach(function (s) {
      if (s[2] == null || !(s[0] in laneOf)) return;
      (byDev[s[0]] = byDev[s[0]] || []).push(s);
    });
    Object.keys(byDev).forEach(function (d) {
      var y0 = top[d], h = Math.max(1, laneOf[d].rows.length) * RH - 2;
      svg.append("path").attr("class", "curve").attr("data-util", d).style("stroke", "#111").style("stroke-width", 1)
        .attr("d", d3.svg.line().x(function (s) { return x(s[1] - t0); })
          .y(function (s) { return y0 + h * (1 - s[2] / 100); })(byDev[d]));
    });
  }

  /* ---- failures and the report -------------------------------------- */

  function loadFailures(m) {
    var failed = m.order.map(function (id) { return m.runs[id]; }).filter(function (r) { return r.state === "failed"; });
    $("#fail-count").textContent = failed.length ? failed.length + " failed" : "none";
    var box = $("#failures");
    if (!failed.length) { box.innerHTML = '<p class="muted">No run failed.</p>'; return; }
    box.innerHTML = failed.slice(0, 20).map(function (r) {
      return '<div class="fail-item" data-failed="' + esc(r.id) + '"><b>' + esc(r.id) + "</b> " + esc(r.reason || "") +
        ' <span class="muted">' + esc(short(r.params)) + '</span><pre class="tail">…</pre></div>';
    }).join("") + (failed.length > 20 ? '<p class="muted">and ' + (failed.length - 20) + " more</p>" : "");
    failed.slice(0, 20).forEach(function (r) {
      get("runs/" + encodeURIComponent(r.id)).then(function (j) {
        var el = document.querySelector('[data-failed="' + CSS.escape(r.id) + '"] pre');
        if (el) el.textContent = (j.stderr_tail || "").split("\n").slice(-30).join("\n") || "(stderr.log is empty)";
      }).catch(function (e) {
        var el = document.querySelector('[data-failed="' + CSS.escape(r.id) + '"] pre');
        if (el) el.textContent = e.offline ? "(not read: the server closed; sweep ui " + m.id + " shows it)" : e.message;
        trouble(m, e, null);
      });
    });
  }

  var FIGURES = [["wall_seconds", "wall time", dur], ["gpus", "GPUs", num],
    ["gpu_seconds_busy", "GPU time busy", dur], ["gpu_seconds_idle", "GPU time idle", dur],
    ["gpu_seconds_mig_unused", "of it, MIG slices unused", dur],
    ["occupancy", "occupancy", function (v) { return v == null ? "" : (v * 100).toFixed(1) + " %"; }],
    ["gpu_seconds_saved_by_stopping", "saved by stopping", dur],
    ["gpu_seconds_lost_to_failures", "lost to failures", dur],
    ["time_to_best_seconds", "time to the best", dur], ["best_value", "best value", num],
    ["mean_gpu_utilization", "mean utilisation", function (v) { return v == null ? "" : num(v) + " %"; }],
    ["cost", "cost", function (v) { return v == null ? "" : "$" + v.toFixed(2); }]];

  function figureTable(rep) {
    if (!rep) return "";
    return "<table class=\"report\">" + FIGURES.filter(function (f) {
      return f[0] !== "gpu_seconds_mig_unused" || rep[f[0]] > 0;   /* only where MIG left some */
    }).map(function (f) {
      var v = rep[f[0]];
      return '<tr data-figure="' + f[0] + '"><td>' + f[1] + '</td><td class="num">' + (v == null ? "–" : f[2](v)) + "</td></tr>";
    }).join("") + "</table>";
  }

  /* The report as the server last computed it; once the sweep's server
   * has gone, as of when (a later `sweep ui` has its final figures). */
  function renderReport(m) {
    $("#report").innerHTML = figureTable(m.report);
    $("#report-note").textContent = "as sweep report computes it" +
      (m.wasLive && m.offline && m.reportAt ? ", as of " + new Date(m.reportAt * 1000).toLocaleTimeString() : "");
  }

  function refreshNow() {
    var m = state;
    if (!m || !m.sweep) return;
    get("sweeps/" + encodeURIComponent(m.id)).then(function (j) {
      if (state !== m) return;
      m.report = j.report;
      m.reportAt = now();
      if (!m.ended) {   /* an answer may be older than the stream */
        m.sweep.state = j.sweep.state;
        m.sweep.ended_at = j.sweep.ended_at;
        if (j.sweep.state !== "running") ended(m, null);
      }
      renderReport(m);
      renderFacts(m);
    }).catch(function (e) { trouble(m, e, null); });
  }
  var refreshReport = throttle(refreshNow, 3000);

  /* The sweep ended while the page followed it: said, and what the
   * server still answers fetched once more (it closes soon after). */
  function ended(m, t) {
    m.ended = true;
    m.wasLive = true;
    if (t) m.endedAt = t;
    renderFacts(m);
    showState(m);
  }

  /* ---- the stream --------------------------------------------------- */

  function follow(m) {
    closeStream();
    m.renderLater = throttle(function () {
      if (state !== m) return;
      if (m.rowsDirty) renderRows(m);
      renderFacts(m);
    }, 300);
    var curvesLater = throttle(function () { if (state === m) drawCurves(m); }, 250);
    var chartsLater = throttle(function () {
      if (state !== m) return;
      drawBest(m); drawParallel(m); loadGpus(m);
    }, 1000);
    /* what moves with time alone: running bars, elapsed, the report */
    m.clock = setInterval(function () {
      if (state !== m) return clearInterval(m.clock);
      if (m.sweep.state !== "running" || m.offline) return;
      drawLanes(m);
      refreshReport();
      m.rowsDirty = true;
      m.renderLater();
    }, 5000);
    source = new EventSource(API + "events?since=" + (m.seq || 0));
    source.onopen = function () { m.offline = false; m.streaming = true; showState(m); };
    source.onerror = function () {
      m.streaming = false;
      m.offline = true;
      if (m.ended) closeStream();   /* its server went with it: no retries */
      showState(m);
      renderReport(m);
    };
    source.addEventListener("run", function (e) {
      var ev = JSON.parse(e.data);
      if (ev.sweep !== m.id) return;
      var isNew = !m.runs[ev.run.id];
      upsertRun(m, ev.run);
      if (isNew) { m.rowsDirty = true; m.renderLater(); } else touchRow(m, ev.run.id);
      if (m.autoSelect && (isNew || ev.run.state !== "running")) loadCurves(m);
      else if (m.selected[ev.run.id]) curvesLater();
      if (ev.run.state === "failed") loadFailures(m);
      chartsLater();
      refreshReport();
      m.renderLater();
    });
    source.addEventListener("value", function (e) {
      var ev = JSON.parse(e.data);
      if (ev.sweep !== m.id || !applyValue(m, ev)) return;
      if (m.names.indexOf(ev.name) < 0) { m.names.push(ev.name); }
      touchRow(m, ev.run);
      if (m.selected[ev.run] && ev.name === m.curveMetric) {
        if (m.series[ev.run]) curvesLater(); else loadCurves(m);
      }
    });
    source.addEventListener("sweep", function (e) {
      var ev = JSON.parse(e.data);
      if (ev.sweep !== m.id) return;
      m.sweep.state = ev.state;
      if (ev.state === "running") return;
      ended(m, ev.time);
      refreshNow();
      loadGpus(m);
    });
    source.addEventListener("notice", function (e) {
      var ev = JSON.parse(e.data);
      if (ev.sweep && ev.sweep !== m.id) return;
      m.notices.push(ev.text);
      if (m.notices.length > 50) m.notices.shift();
      $("#notices").innerHTML = m.notices.slice(-6).map(function (t) { return "<div>" + esc(t) + "</div>"; }).join("");
    });
    source.addEventListener("reset", function () { sweepPage(m.id); });
  }

  /* ---- two sweeps side by side -------------------------------------- */

  function comparePage(a, b) {
    crumbs('<a href="#/">sweeps</a> / compare ' + esc(a) + " and " + esc(b));
    setLive("off", "");
    $("#app").innerHTML = '<p class="muted">loading…</p>';
    var page = location.hash;
    function one(id) {
      return Promise.all([get("sweeps/" + encodeURIComponent(id)), get("sweeps/" + encodeURIComponent(id) + "/runs")])
        .then(function (r) { return { sweep: r[0].sweep, report: r[0].report, runs: r[1].runs }; });
    }
    Promise.all([one(a), one(b)]).then(function (two) {
      var html = '<h2>Compare</h2><div class="cols2">';
      two.forEach(function (s, i) {
        var max = s.sweep.goal === "maximize", best = null;
        s.runs.forEach(function (r) {
          if (r.value == null || (r.state !== "finished" && r.state !== "stopped")) return;
          if (!best || (max ? r.value > best.value : r.value < best.value)) best = r;
        });
        s.best = best;
        html += '<div class="panel" data-compare="' + esc(s.sweep.id) + '"><h2><i class="swatch" style="background:' + SIDE[i] + '"></i><a href="#/sweep/' + esc(s.sweep.id) + '">' +
          esc(s.sweep.id) + "</a> <small>" + esc(s.sweep.name || "") + " " + esc(s.sweep.method) + ", " + s.runs.length +
          " runs</small></h2>" + '<div class="facts"><div><span>best</span>' + (best ? num(best.value) + " (" + esc(best.id) + ")" : "–") +
          "</div></div>" + (best ? '<div class="muted params">' + esc(short(best.params)) + "</div>" : "") +
          figureTable(s.report) + "</div>";
      });
      $("#app").innerHTML = html + "</div>" +
        '<div class="panel"><h2>Learning curves <small id="cmp-note"></small></h2>' +
        '<svg id="cmp-curves" width="100%" height="300"></svg><div class="legend" id="cmp-legend"></div></div>';
      Promise.all(two.map(bestSeries)).then(function (series) {
        if (location.hash !== page) return;
        compared = { two: two, series: series };
        compareCurves(two, series);
      }).catch(function (e) { $("#cmp-note").textContent = e.offline ? "the server does not answer" : e.message; });
    }).catch(fail);
  }

  /* The curves of a sweep's 8 best runs, of its metric: {run id: points}. */
  function bestSeries(s) {
    var metric = s.sweep.metric;
    if (!metric) return Promise.resolve({});
    var top = s.runs.filter(function (r) { return r.value != null; }).sort(function (x, y) {
      return s.sweep.goal === "maximize" ? y.value - x.value : x.value - y.value;
    }).slice(0, 8).map(function (r) { return r.id; });
    if (!top.length) return Promise.resolve({});
    return get("sweeps/" + encodeURIComponent(s.sweep.id) + "/metrics?name=" + encodeURIComponent(metric) + "&runs=" + top.join(","))
      .then(function (j) { return j.series || {}; });
  }

  var SIDE = ["#2f6fde", "#d1643b"];

  /* Both sweeps' best curves on one chart: one x and one y scale, so
   * that a lower curve is a lower value whichever sweep drew it. */
  function compareCurves(two, series) {
    var svg = d3.select("#cmp-curves"), W = svg.node().clientWidth || 400, H = 300, pad = { l: 56, r: 12, t: 8, b: 28 };
    var pts = [];
    series.forEach(function (ser) {
      Object.keys(ser).forEach(function (id) { ser[id].forEach(function (p, i) { if (p[1] != null) pts.push([p[0] == null ? i : p[0], p[1]]); }); });
    });
    svg.selectAll("*").remove();
    var metrics = two.map(function (s) { return s.sweep.metric || "no metric"; });
    var same = metrics[0] === metrics[1];
    $("#cmp-note").textContent = same ? metrics[0] + " of each sweep's best runs, by step"
      : metrics[0] + " and " + metrics[1] + " (the sweeps' metrics differ), by step";
    if (!pts.length) {
      svg.append("text").attr("x", 20).attr("y", 40).text("no values yet");
      return;
    }
    var x = d3.scale.linear().domain(d3.extent(pts, function (p) { return p[0]; })).range([pad.l, W - pad.r]);
    var y = d3.scale.linear().domain(d3.extent(pts, function (p) { return p[1]; })).nice().range([H - pad.b, pad.t]);
    svg.attr("data-y-min", y.domain()[0]).attr("data-y-max", y.domain()[1]);
    svg.append("g").attr("class", "axis").attr("data-axis", "x").attr("transform", "translate(0," + (H - pad.b) + ")")
      .call(d3.svg.axis().scale(x).orient("bottom").ticks(Math.max(2, Math.floor(W / 80))));
    svg.append("g").attr("class", "axis").attr("data-axis", "y").attr("transform", "translate(" + pad.l + ",0)")
      .call(d3.svg.axis().scale(y).orient("left").ticks(6));
    svg.append("text").attr("x", W - pad.r).attr("y", H - 2).attr("text-anchor", "end").text("step");
    var line = d3.svg.line().defined(function (p) { return p[1] != null; })
      .x(function (p, i) { return x(p[0] == null ? i : p[0]); }).y(function (p) { return y(p[1]); });
    series.forEach(function (ser, i) {
      var best = two[i].best && two[i].best.id;
      Object.keys(ser).forEach(function (id) {
        svg.append("path").attr("class", "curve").attr("data-curve", id).attr("data-sweep", two[i].sweep.id)
          .style("stroke", SIDE[i]).style("stroke-width", id === best ? 2.4 : 1.2).style("opacity", id === best ? 1 : 0.55)
          .attr("d", line(ser[id])).append("title").text(id + (id === best ? " (its sweep's best)" : ""));
      });
    });
    $("#cmp-legend").innerHTML = two.map(function (s, i) {
      return '<span data-legend="' + esc(s.sweep.id) + '"><i style="background:' + SIDE[i] + '"></i>' + esc(s.sweep.id) +
        (s.sweep.name ? " " + esc(s.sweep.name) : "") + " · " + esc(metrics[i]) + " (" + Object.keys(series[i]).length + " runs; its best drawn thick)</span>";
    }).join("");
  }

  /* For tests and benchmarks: the table rendered again, in ms until
   * the browser has painted it (layout included). */
  function measureRender() {
    return new Promise(function (done) {
      var m = state, t0 = performance.now();
      m.rowsDirty = true;
      renderRows(m);
      requestAnimationFrame(function () {
        setTimeout(function () { done(performance.now() - t0); }, 0);
      });
    });
  }

  window.sweepDashboard = { lastRender: null, measureRender: measureRender, model: function () { return state; } };
  window.addEventListener("hashchange", route);
  window.addEventListener("resize", throttle(function () {
    if (state && state.sweep) { drawCurves(state); drawBest(state); drawParallel(state); drawLanes(state); }
    if (compared) compareCurves(compared.two, compared.series);
  }, 200));
  route();
})();
