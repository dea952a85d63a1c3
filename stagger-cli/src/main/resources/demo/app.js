"use strict";
// The demo page: plain JS, no build step. Every number shown comes from /api/*.

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";

function formData(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    out[el.name] = el.type === "checkbox" ? el.checked : el.value;
  }
  return out;
}

async function api(name, body) {
  const res = await fetch("/api/" + name, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {})
  });
  const json = await res.json();
  if (!res.ok) throw new Error(json.error || ("HTTP " + res.status));
  return json;
}

function status(id, text, isError) {
  const el = $(id);
  el.textContent = text;
  el.classList.toggle("error", !!isError);
}

function svg(tag, attrs, parent) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function div(cls, parent, text) {
  const el = document.createElement("div");
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = text;
  if (parent) parent.appendChild(el);
  return el;
}

/**
 * A data table. columns: [key, label] pairs; rows: arrays of cell values; rowData(i): optional data-*
 * attributes of row i. Each cell carries data-col and data-label (the label shown before it on phones).
 */
function table(id, columns, rows, rowData) {
  const t = $(id);
  t.innerHTML = "";
  const head = t.createTHead().insertRow();
  for (const [, label] of columns) { const th = document.createElement("th"); th.textContent = label; head.appendChild(th); }
  const body = t.createTBody();
  rows.forEach((r, i) => {
    const row = body.insertRow();
    if (rowData) Object.assign(row.dataset, rowData(i));
    r.forEach((c, j) => {
      const td = row.insertCell();
      td.textContent = c;
      td.dataset.col = columns[j][0];
      td.dataset.label = columns[j][1];
    });
  });
}

const ms = (x) => (Math.round(x * 10) / 10).toLocaleString() + " ms";
const pct = (x) => Math.round(x * 100) + " %";
const reasonsText = (reasons) => Object.entries(reasons).map(([k, v]) => `${k} ${v}`).join(", ");

// ---- 1. Send a request ----
function waitLabel(w) {
  const head = `wait before attempt ${w.beforeAttempt}: slept ${ms(w.delayMs)}`;
  if (w.hintMs > 0) {
    return `${head}. Retry-After set the minimum (${ms(w.hintMs)}); jitter added ${ms(Math.max(0, w.delayMs - w.hintMs))} on top`;
  }
  if (w.rawMs < 0) return `${head} (decorrelated jitter: each wait is drawn between the base and 3× the last one)`;
  const diff = w.delayMs - w.rawMs;
  return `${head} of a ${ms(w.rawMs)} backoff (jitter ${diff <= 0 ? "removed " + ms(-diff) : "added " + ms(diff)})`;
}

function drawTimeline(result) {
  const host = $("timeline");
  host.innerHTML = "";
  const planned = (w) => Math.max(Math.max(w.rawMs, 0) + w.hintMs, w.delayMs);
  const total = Math.max(result.totalMs, ...result.waits.map((w) => w.startMs + planned(w)), 1);
  const at = (t) => (100 * Math.min(t, total) / total) + "%";
  const span = (from, to) => (100 * Math.max(0, Math.min(to, total) - from) / total) + "%";
  const events = [];
  for (const a of result.attempts) events.push({ at: a.startMs, a });
  for (const w of result.waits) events.push({ at: w.startMs, w });
  events.sort((p, q) => p.at - q.at);
  for (const e of events) {
    const row = div("tl-row", host);
    if (e.a) {
      const a = e.a;
      div("tl-label attempt-label", row, `attempt ${a.attempt}: ${a.outcome} after ${ms(a.endMs - a.startMs)}`);
      const bar = div("attempt-bar " + (a.ok ? "ok" : "bad"), div("tl-track", row));
      Object.assign(bar.style, { left: at(a.startMs), width: span(a.startMs, a.endMs) });
      bar.dataset.outcome = a.outcome;
      bar.title = a.outcome;
    } else {
      const w = e.w;
      div("tl-label wait-label", row, waitLabel(w));
      const track = div("tl-track", row);
      Object.assign(div("wait-plan", track).style, { left: at(w.startMs), width: span(w.startMs, w.startMs + planned(w)) });
      Object.assign(div("wait-bar", track).style, { left: at(w.startMs), width: span(w.startMs, w.startMs + w.delayMs) });
    }
  }
  const axis = div("tl-axis", host);
  for (const t of [0, total / 2, total]) div("", axis, ms(t));
}

$("send-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const button = $("send-button");
  button.disabled = true;
  delete $("send-status").dataset.reason;
  status("send-status", "Sending… (the waits are real)");
  try {
    const r = await api("send", formData(ev.target));
    drawTimeline(r);
    status("send-status", `${r.reason}: ${r.answer} after ${r.attempts.length} attempt(s) in ${ms(r.totalMs)}`);
    $("send-status").dataset.reason = r.reason;
    $("send-status").dataset.attempts = r.attempts.length;
    table("send-table", [["n", "#"], ["outcome", "outcome"], ["start", "started"], ["took", "took"], ["waited", "then waited"],
      ["raw", "backoff before jitter"], ["hint", "Retry-After"]],
      r.attempts.map((a) => {
        const w = r.waits.find((x) => x.beforeAttempt === a.attempt + 1);
        return [a.attempt, a.outcome, ms(a.startMs), ms(a.endMs - a.startMs),
          w ? ms(w.delayMs) : "—", w && w.rawMs >= 0 ? ms(w.rawMs) : "—", w && w.hintMs > 0 ? ms(w.hintMs) : "—"];
      }));
  } catch (e) {
    status("send-status", e.message, true);
  } finally {
    button.disabled = false;
  }
});

// ---- 2. Thundering herd ----
// One colour per strategy, in every chart.
const STRATEGY_COLOURS = {
  "none": "#c62828", "exponential": "#ef6c00", "full-jitter": "#1a4fb5", "equal-jitter": "#2e7d32",
  "decorrelated-jitter": "#6a1b9a", "full-jitter+budget": "#00838f"
};
const OTHER_COLOURS = ["#5d4037", "#ad1457", "#455a64", "#827717"];
function colourOf(strategy) {
  if (!STRATEGY_COLOURS[strategy]) STRATEGY_COLOURS[strategy] = OTHER_COLOURS[Object.keys(STRATEGY_COLOURS).length % OTHER_COLOURS.length];
  return STRATEGY_COLOURS[strategy];
}

/** 3 to 6 round tick values from 0 to at least max. */
function ticks(max) {
  const raw = Math.max(max, 1) / 4;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const out = [];
  for (let v = 0; v <= max + step * 0.999 && out.length < 7; v += step) out.push(v);
  return out;
}
const compact = (v) => v >= 10000 ? (v / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 }) + "k" : Math.round(v).toLocaleString();

/**
 * A chart in {@code wrap} (a cell of the chart grid): its title as HTML, which wraps, and an SVG as wide
 * as the cell, so that its text is drawn at its real size.
 */
function chartSvg(wrap, title, height) {
  div("chart-title", wrap, title);
  const W = Math.max(200, Math.floor(wrap.clientWidth || 480));
  const s = svg("svg", { width: W, height, viewBox: `0 0 ${W} ${height}`, role: "img", "aria-label": title, class: "herd-chart",
    "font-family": "system-ui, sans-serif" }, wrap);
  return { s, W };
}

/** Horizontal bars, one per strategy: the strategy's name above its bar, the value after it, a value axis below. */
function barChart(wrap, title, rows, valueOf, axisTitle, format) {
  const rowH = 38, top = 8, axisH = 44;
  const H = top + rows.length * rowH + axisH;
  const { s, W } = chartSvg(wrap, title, H);
  const L = 10, R = W - 70;
  const tv = ticks(Math.max(...rows.map(valueOf), 1));
  const max = tv[tv.length - 1];
  const x = (v) => L + (v / max) * (R - L);
  const axisY = top + rows.length * rowH + 4;
  for (const v of tv) {
    svg("line", { x1: x(v), y1: top, x2: x(v), y2: axisY, stroke: "#e3e6ee" }, s);
    svg("text", { x: x(v), y: axisY + 15, "font-size": 11, "text-anchor": "middle", fill: "#4a5263", class: "tick" }, s).textContent = format(v);
  }
  svg("line", { x1: L, y1: axisY, x2: R, y2: axisY, stroke: "#99a" }, s);
  svg("text", { x: (L + R) / 2, y: axisY + 34, "font-size": 12, "text-anchor": "middle", fill: "#1d2433", class: "axis-title" }, s)
    .textContent = axisTitle;
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    svg("text", { x: L, y: y + 12, "font-size": 12, fill: "#1d2433" }, s).textContent = r.strategy;
    const bar = svg("rect", { x: L, y: y + 17, width: Math.max(2, x(valueOf(r)) - L), height: 14, rx: 2, fill: colourOf(r.strategy),
      class: "herd-bar", "data-strategy": r.strategy }, s);
    svg("title", {}, bar).textContent = `${r.strategy}: ${format(valueOf(r))}`;
    svg("text", { x: x(valueOf(r)) + 5, y: y + 29, "font-size": 11, fill: "#1d2433" }, s).textContent = format(valueOf(r));
  });
  return s;
}

/** Load over time through the outage: one line per strategy, the outage shaded, axes in seconds and requests/s. */
function loadChart(wrap, title, r) {
  const series = r.load;
  const legendH = series.length * 18 + 8;
  const T = 12, B = 46, H = 210 + legendH;
  const { s, W } = chartSvg(wrap, title, H);
  const L = 56, R = W - 12, plotBottom = H - B - legendH;
  const bucketMs = series[0].bucketMs;
  const buckets = Math.max(...series.map((p) => p.points.length), 1);
  const seconds = buckets * bucketMs / 1000;
  const yt = ticks(Math.max(...series.flatMap((p) => p.points), 1));
  const maxY = yt[yt.length - 1];
  const x = (sec) => L + (sec / seconds) * (R - L);
  const y = (v) => plotBottom - (v / maxY) * (plotBottom - T);
  if (r.downToMs > r.downFromMs) {
    svg("rect", { x: x(r.downFromMs / 1000), y: T, width: x(Math.min(seconds, r.downToMs / 1000)) - x(r.downFromMs / 1000),
      height: plotBottom - T, fill: "#fbe3e3" }, s);
    svg("text", { x: x(r.downFromMs / 1000) + 4, y: T + 14, "font-size": 11, fill: "#a33" }, s).textContent = "server down";
  }
  for (const v of yt) {
    svg("line", { x1: L, y1: y(v), x2: R, y2: y(v), stroke: "#e3e6ee" }, s);
    svg("text", { x: L - 6, y: y(v) + 4, "font-size": 11, "text-anchor": "end", fill: "#4a5263", class: "tick" }, s).textContent = compact(v);
  }
  const step = Math.max(1, Math.ceil(seconds / Math.max(1, Math.floor((R - L) / 40)))); // labels at least 40 px apart
  for (let t = 0; t <= seconds + 1e-9; t += step) {
    svg("text", { x: x(t), y: plotBottom + 15, "font-size": 11, "text-anchor": "middle", fill: "#4a5263", class: "tick" }, s).textContent = t + " s";
  }
  svg("line", { x1: L, y1: plotBottom, x2: R, y2: plotBottom, stroke: "#99a" }, s);
  svg("line", { x1: L, y1: T, x2: L, y2: plotBottom, stroke: "#99a" }, s);
  svg("text", { x: (L + R) / 2, y: plotBottom + 34, "font-size": 12, "text-anchor": "middle", fill: "#1d2433", class: "axis-title" }, s)
    .textContent = "time (s)";
  svg("text", { x: 0, y: 0, "font-size": 12, "text-anchor": "middle", fill: "#1d2433", class: "axis-title",
    transform: `translate(14 ${(T + plotBottom) / 2}) rotate(-90)` }, s).textContent = "load (requests/s)";
  series.forEach((p) => {
    const pts = p.points.map((v, j) => `${x((j + 0.5) * bucketMs / 1000).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    svg("polyline", { points: pts, fill: "none", stroke: colourOf(p.strategy), "stroke-width": 2, "data-strategy": p.strategy }, s);
  });
  series.forEach((p, i) => {
    const ly = H - legendH + 8 + i * 18;
    svg("line", { x1: L, y1: ly, x2: L + 22, y2: ly, stroke: colourOf(p.strategy), "stroke-width": 3, "data-strategy": p.strategy }, s);
    svg("text", { x: L + 28, y: ly + 4, "font-size": 12, fill: "#1d2433" }, s).textContent = p.strategy;
  });
  return s;
}

let lastHerd = null;
function drawHerd(r) {
  lastHerd = r;
  const charts = $("herd-charts");
  charts.innerHTML = "";
  // every cell first, then the charts: each is drawn at the width its cell has in the finished grid
  const cells = [div("", charts), div("", charts), div("", charts)];
  const seconds = Math.max(...r.results.map((x) => x.completionMs)) >= 10000;
  barChart(cells[0], "Total calls until every client is done", r.results, (x) => x.calls, "mean total calls per run (calls)", compact);
  barChart(cells[1], "Time until every client is done", r.results, (x) => x.completionMs,
    seconds ? "mean time to finish (s)" : "mean time to finish (ms)",
    seconds ? (v) => (v / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 }) + " s" : (v) => Math.round(v).toLocaleString() + " ms");
  if (r.load && r.load.length) {
    loadChart(cells[2], `Outage scenario: load while the server is down ${r.downFromMs / 1000}–${r.downToMs / 1000} s`, r);
  } else {
    cells[2].remove();
  }
}
window.addEventListener("resize", () => { if (lastHerd) drawHerd(lastHerd); });

const sleep = (millis) => new Promise((resolve) => setTimeout(resolve, millis));

$("herd-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("herd-button").disabled = true;
  const bar = $("herd-progress");
  try {
    const started = await api("herd", formData(ev.target));
    bar.hidden = false;
    let p;
    for (;;) {
      p = await api("herd-progress", { id: started.id });
      bar.value = p.done / p.total;
      status("herd-status", `Simulating… ${p.done} of ${p.total} runs (${pct(p.done / p.total)})`);
      if (p.finished) break;
      await sleep(300);
    }
    if (p.error) throw new Error(p.error);
    const r = p.result;
    drawHerd(r);
    table("herd-table", [["strategy", "strategy"], ["calls", "calls"], ["completion", "completion (ms)"]],
      r.results.map((x) => [x.strategy, Math.round(x.calls), Math.round(x.completionMs)]));
    status("herd-status", `${r.clients} clients, ${r.runs} run(s) each, ${r.events.toLocaleString()} simulated events`);
  } catch (e) {
    status("herd-status", e.message, true);
  } finally {
    bar.hidden = true;
    $("herd-button").disabled = false;
  }
});

// ---- 7. Metastable failure ----
// Every run of this page's session stays on the chart (up to four), the latest one played back.
const metaRuns = [];
const META_COLOURS = ["#1a4fb5", "#c62828", "#2e7d32", "#6a1b9a"];
let metaShown = 0; // seconds of the latest run drawn so far

/** The chart, then its legend as HTML below it: a set-up's name and outcome wrap at any width. */
function metaChart(r, shownSeconds) {
  metaShown = shownSeconds;
  const wrap = $("meta-chart");
  wrap.innerHTML = "";
  const cell = div("", wrap);
  const T = 12, B = 30, H = 224;
  const { s, W } = chartSvg(cell, "Goodput: calls that succeeded per second", H);
  s.setAttribute("id", "meta-svg");
  const L = 56, R = W - 12, plotBottom = H - B;
  const seconds = Math.max(...metaRuns.map((m) => m.goodput.length), 1);
  const yt = ticks(Math.max(r.capacity, ...metaRuns.flatMap((m) => m.goodput)));
  const maxY = yt[yt.length - 1];
  const x = (sec) => L + (sec / seconds) * (R - L);
  const y = (v) => plotBottom - (v / maxY) * (plotBottom - T);
  svg("rect", { x: x(r.triggerFromSecond), y: T, width: x(r.triggerToSecond) - x(r.triggerFromSecond), height: plotBottom - T,
    fill: "#fbe3e3" }, s);
  svg("text", { x: x(r.triggerFromSecond) + 4, y: T + 14, "font-size": 11, fill: "#a33" }, s).textContent = "half the workers gone";
  for (const v of yt) {
    svg("line", { x1: L, y1: y(v), x2: R, y2: y(v), stroke: "#e3e6ee" }, s);
    svg("text", { x: L - 6, y: y(v) + 4, "font-size": 11, "text-anchor": "end", fill: "#4a5263", class: "tick" }, s).textContent = compact(v);
  }
  for (const [level, name] of [[r.capacity, "capacity"], [r.reducedCapacity, "reduced"], [r.offeredRate, "offered"]]) {
    svg("line", { x1: L, y1: y(level), x2: R, y2: y(level), stroke: "#777", "stroke-dasharray": "6 4" }, s);
    // at the left, before the trigger's band and its label: at the right "offered" ran into that label on a phone
    svg("text", { x: L + 4, y: y(level) - 4, "font-size": 11, fill: "#555" }, s).textContent = name;
  }
  const step = Math.max(1, Math.ceil(seconds / Math.max(1, Math.floor((R - L) / 40))));
  for (let t = 0; t <= seconds; t += step) {
    svg("text", { x: x(t), y: plotBottom + 15, "font-size": 11, "text-anchor": "middle", fill: "#4a5263", class: "tick" }, s).textContent = t + " s";
  }
  svg("line", { x1: L, y1: plotBottom, x2: R, y2: plotBottom, stroke: "#99a" }, s);
  svg("line", { x1: L, y1: T, x2: L, y2: plotBottom, stroke: "#99a" }, s);
  const legend = document.createElement("ul");
  legend.className = "legend";
  legend.id = "meta-legend";
  cell.appendChild(legend);
  metaRuns.forEach((m, i) => {
    const latest = i === metaRuns.length - 1;
    const colour = META_COLOURS[i % META_COLOURS.length];
    const upTo = latest ? shownSeconds : m.goodput.length;
    const pts = m.goodput.slice(0, upTo).map((v, j) => `${x(j + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    svg("polyline", { points: pts, fill: "none", stroke: colour, "stroke-width": latest ? 2.5 : 1.5,
      "stroke-opacity": latest ? 1 : 0.45, class: "meta-line", "data-setup": m.setup }, s);
    const item = document.createElement("li");
    item.dataset.setup = m.setup;
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = colour;
    if (!latest) swatch.style.opacity = 0.45;
    item.append(swatch, `${m.setup}: ${m.recoveredAfterSeconds === null ? "never recovered" : "recovered after " + m.recoveredAfterSeconds + " s"}, p99 ${Math.round(m.p99Ms)} ms`);
    legend.appendChild(item);
  });
}
window.addEventListener("resize", () => { if (metaRuns.length) metaChart(metaRuns[metaRuns.length - 1], metaShown); });

$("meta-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const button = $("meta-button");
  const statusEl = $("meta-status");
  button.disabled = true;
  statusEl.dataset.played = "false";
  status("meta-status", "Simulating…");
  try {
    const r = await api("metastable", formData(ev.target));
    metaRuns.push(r);
    if (metaRuns.length > 4) metaRuns.shift();
    for (let t = 1; t <= r.goodput.length; t++) { // 20 simulated seconds per second
      metaChart(r, t);
      status("meta-status", `t = ${t} s: ${r.goodput[t - 1]} calls succeeded, ${r.load[t - 1]} attempts reached the server`);
      await sleep(50);
    }
    const recovered = r.recoveredAfterSeconds === null ? "never recovered" : `recovered ${r.recoveredAfterSeconds} s after the trigger`;
    statusEl.dataset.recovered = r.recoveredAfterSeconds === null ? "never" : String(r.recoveredAfterSeconds);
    statusEl.dataset.setup = r.setup;
    status("meta-status", `${r.description}: goodput ${Math.round(r.goodputDuringTrigger)}/s during the trigger ` +
      `(reduced capacity ${Math.round(r.reducedCapacity)}/s), ${Math.round(r.goodputAfterTrigger)}/s after; ${recovered}; ` +
      `p99 ${Math.round(r.p99Ms)} ms; ${r.attempts.toLocaleString()} attempts for ${r.calls.toLocaleString()} calls` +
      (r.shed ? `, ${r.shed.toLocaleString()} shed` : ""));
    statusEl.dataset.played = "true";
  } catch (e) {
    status("meta-status", e.message, true);
  } finally {
    button.disabled = false;
  }
});

// ---- 8. Retries through layers ----
// The runs of this page's session (up to four) side by side: attempts at the database per user request,
// the part that arrived after the user gave up drawn light.
const layersRuns = [];
const LAYERS_COLOURS = ["#c62828", "#1a4fb5", "#2e7d32", "#6a1b9a"];

function layersChart() {
  const wrap = $("layers-chart");
  wrap.innerHTML = "";
  const cell = div("", wrap);
  const rowH = 34, T = 8, B = 34;
  const H = T + rowH * layersRuns.length + B;
  const { s, W } = chartSvg(cell, "Attempts on the database per user request", H);
  s.setAttribute("id", "layers-svg");
  const L = 12, R = W - 56, plotBottom = H - B;
  const xt = ticks(Math.max(...layersRuns.map((m) => Math.max(m.bottomAttemptsPerRequest, m.attempts))));
  const maxX = xt[xt.length - 1];
  const x = (v) => L + (v / maxX) * (R - L);
  for (const v of xt) {
    svg("line", { x1: x(v), y1: T, x2: x(v), y2: plotBottom, stroke: "#e3e6ee" }, s);
    svg("text", { x: x(v), y: plotBottom + 15, "font-size": 11, "text-anchor": "middle", fill: "#4a5263", class: "tick" }, s).textContent = compact(v);
  }
  svg("text", { x: (L + R) / 2, y: plotBottom + 30, "font-size": 11, "text-anchor": "middle", fill: "#4a5263", class: "axis-title" }, s)
    .textContent = "attempts per request (light: after the user gave up)";
  layersRuns.forEach((m, i) => {
    const colour = LAYERS_COLOURS[i % LAYERS_COLOURS.length];
    const y = T + i * rowH;
    const onTime = m.bottomAttemptsPerRequest - m.lateAttemptsPerRequest;
    svg("text", { x: L, y: y + 11, "font-size": 11, fill: "#1d2433" }, s).textContent =
      `${m.setup}, ${m.tiers} × ${m.attempts}`;
    svg("rect", { x: L, y: y + 15, width: Math.max(1, x(onTime) - L), height: 12, fill: colour, class: "layers-bar",
      "data-setup": m.setup, "data-part": "on-time" }, s);
    svg("rect", { x: x(onTime), y: y + 15, width: Math.max(0, x(m.bottomAttemptsPerRequest) - x(onTime)), height: 12,
      fill: colour, "fill-opacity": 0.3, stroke: colour, class: "layers-bar", "data-setup": m.setup, "data-part": "late" }, s);
    svg("text", { x: x(m.bottomAttemptsPerRequest) + 4, y: y + 25, "font-size": 11, fill: "#1d2433" }, s).textContent =
      m.bottomAttemptsPerRequest.toFixed(1);
  });
  svg("line", { x1: L, y1: plotBottom, x2: R, y2: plotBottom, stroke: "#99a" }, s);
  table("layers-table", [["setup", "set-up"], ["chain", "tiers × attempts"], ["bottom", "attempts on the database per request"],
    ["late", "after the user gave up"], ["max", "most for one request"], ["ok", "requests succeeded"], ["p50", "p50"], ["p99", "p99"]],
    layersRuns.map((m) => [m.setup, `${m.tiers} × ${m.attempts}`, m.bottomAttemptsPerRequest.toFixed(1),
      m.lateAttemptsPerRequest.toFixed(1), m.maxBottomAttemptsPerRequest, pct(m.successShare),
      `${Math.round(m.p50Ms)} ms`, `${Math.round(m.p99Ms)} ms`]),
    (i) => ({ setup: layersRuns[i].setup }));
}
window.addEventListener("resize", () => { if (layersRuns.length) layersChart(); });

$("layers-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const button = $("layers-button");
  const statusEl = $("layers-status");
  button.disabled = true;
  statusEl.dataset.done = "false";
  status("layers-status", "Simulating…");
  try {
    const r = await api("layers", formData(ev.target));
    layersRuns.push(r);
    if (layersRuns.length > 4) layersRuns.shift();
    layersChart();
    Object.assign(statusEl.dataset, { setup: r.setup, bottom: r.bottomAttemptsPerRequest.toFixed(1),
      late: r.lateAttemptsPerRequest.toFixed(1), max: String(r.maxBottomAttemptsPerRequest) });
    status("layers-status", `${r.description}; the database ${r.failure}: ${r.bottomAttemptsPerRequest.toFixed(1)} ` +
      `attempts on it per user request (${r.attempts}^${r.tiers} = ${r.naiveFanOut} if every tier retries), ` +
      `${r.lateAttemptsPerRequest.toFixed(1)} of them after the user gave up; ${pct(r.successShare)} of requests ` +
      `succeeded; p99 ${Math.round(r.p99Ms)} ms`);
    statusEl.dataset.done = "true";
  } catch (e) {
    status("layers-status", e.message, true);
  } finally {
    button.disabled = false;
  }
});

// ---- 9. Tail latency and hedging ----
// One chart per load: a bar per set-up as long as its p99, a light extension to its p999, a tick at its p50.
const TAIL_COLOURS = { "none": "#4a5263", "fixed": "#c62828", "fixed+budget": "#ef8a80", "percentile": "#1a4fb5",
  "percentile+budget": "#7fa3e0" };
let tailAnswer = null;

function tailChart() {
  const wrap = $("tail-chart");
  wrap.innerHTML = "";
  const rows = tailAnswer.rows;
  const xt = ticks(Math.max(...rows.map((m) => m.p999Ms)));
  const maxX = xt[xt.length - 1];
  for (const load of ["normal", "overload"]) {
    const mine = rows.filter((m) => m.load === load);
    const cell = div("", wrap);
    const rowH = 34, T = 8, B = 34;
    const H = T + rowH * mine.length + B;
    const share = load === "normal" ? tailAnswer.load : tailAnswer.overload;
    const { s, W } = chartSvg(cell, `Latency at ${Math.round(share * 100)} % of capacity (${load})`, H);
    s.setAttribute("id", "tail-svg-" + load);
    const L = 12, R = W - 110, plotBottom = H - B;
    const x = (v) => L + (v / maxX) * (R - L);
    for (const v of xt) {
      svg("line", { x1: x(v), y1: T, x2: x(v), y2: plotBottom, stroke: "#e3e6ee" }, s);
      svg("text", { x: x(v), y: plotBottom + 15, "font-size": 11, "text-anchor": "middle", fill: "#4a5263", class: "tick" }, s).textContent = compact(v);
    }
    svg("text", { x: (L + R) / 2, y: plotBottom + 30, "font-size": 11, "text-anchor": "middle", fill: "#4a5263", class: "axis-title" }, s)
      .textContent = "ms: bar p99, light up to p999, tick p50";
    mine.forEach((m, i) => {
      const colour = TAIL_COLOURS[m.setup] || "#5d4037";
      const y = T + i * rowH;
      svg("text", { x: L, y: y + 11, "font-size": 11, fill: "#1d2433" }, s).textContent = m.setup;
      const data = { "data-setup": m.setup, "data-load": m.load };
      svg("rect", Object.assign({ x: L, y: y + 15, width: Math.max(1, x(m.p99Ms) - L), height: 12, fill: colour,
        class: "tail-bar", "data-part": "p99" }, data), s);
      svg("rect", Object.assign({ x: x(m.p99Ms), y: y + 15, width: Math.max(0, x(m.p999Ms) - x(m.p99Ms)), height: 12,
        fill: colour, "fill-opacity": 0.3, stroke: colour, class: "tail-bar", "data-part": "p999" }, data), s);
      svg("line", Object.assign({ x1: x(m.p50Ms), y1: y + 12, x2: x(m.p50Ms), y2: y + 30, stroke: "#000", "stroke-width": 2,
        class: "tail-p50" }, data), s);
      svg("text", { x: x(m.p999Ms) + 4, y: y + 25, "font-size": 11, fill: "#1d2433" }, s).textContent =
        `${Math.round(m.p99Ms)} ms, +${(m.extraLoad * 100).toFixed(1)} %`;
    });
    svg("line", { x1: L, y1: plotBottom, x2: R, y2: plotBottom, stroke: "#99a" }, s);
  }
  table("tail-table", [["setup", "set-up"], ["load", "load"], ["p50", "p50"], ["p99", "p99"], ["p999", "p999"],
    ["extra", "extra requests"], ["won", "calls a hedge won"]],
    rows.map((m) => [m.setup, m.load, ms(m.p50Ms), ms(m.p99Ms), ms(m.p999Ms), (m.extraLoad * 100).toFixed(1) + " %",
      m.hedgesWon.toLocaleString()]),
    (i) => ({ setup: rows[i].setup, load: rows[i].load }));
}
window.addEventListener("resize", () => { if (tailAnswer) tailChart(); });

$("tail-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const button = $("tail-button");
  const statusEl = $("tail-status");
  button.disabled = true;
  statusEl.dataset.done = "false";
  status("tail-status", "Simulating…");
  try {
    const r = await api("tail", formData(ev.target));
    tailAnswer = r;
    tailChart();
    const row = (setup, load) => r.rows.find((m) => m.setup === setup && m.load === load);
    const none = row("none", "normal"), pctl = row("percentile", "normal");
    const fixedOver = row("fixed", "overload"), cappedOver = row("fixed+budget", "overload");
    Object.assign(statusEl.dataset, { p99None: none.p99Ms.toFixed(1), p99Percentile: pctl.p99Ms.toFixed(1),
      extraPercentile: pctl.extraLoad.toFixed(3), extraFixedOverload: fixedOver.extraLoad.toFixed(3),
      extraCappedOverload: cappedOver.extraLoad.toFixed(3) });
    status("tail-status", `${Math.round(r.tailShare * 100)} % of requests ${r.tailFactor}× slower, ${r.seconds} simulated s: ` +
      `hedging after the ${r.percentile}th percentile takes p99 from ${Math.round(none.p99Ms)} ms to ` +
      `${Math.round(pctl.p99Ms)} ms for ${(pctl.extraLoad * 100).toFixed(1)} % more requests; near capacity a fixed ` +
      `${r.fixedDelayMs} ms delay sends ${(fixedOver.extraLoad * 100).toFixed(1)} % more (its hedges lose and the ` +
      `hedge credit pauses them), ${(cappedOver.extraLoad * 100).toFixed(1)} % with a budget`);
    statusEl.dataset.done = "true";
  } catch (e) {
    status("tail-status", e.message, true);
  } finally {
    button.disabled = false;
  }
});

// ---- 3. Breaker and budget ----
async function refreshState() {
  try {
    const r = await api("state");
    const strip = $("breaker-state");
    strip.innerHTML = "";
    const pill = (cls, text) => { const p = document.createElement("span"); p.className = "pill " + cls; p.textContent = text; strip.appendChild(p); return p; };
    pill(r.breaker, "breaker " + r.breaker).id = "breaker-pill";
    pill("", `budget ${r.budgetTokens.toFixed(1)} / ${r.budgetMax} tokens`);
    pill("", `budget refusals ${r.budgetRefusals}`);
    pill("", `rejected by breaker ${r.breakerRejected}`);
    table("breaker-table", [["meter", "meter"], ["value", "value"]], Object.entries(r.meters));
  } catch (e) { /* the next poll retries */ }
}

/** What happened in one breaker or budget experiment, in a sentence or two. */
function explainGuards(r, budgetExperiment) {
  const open = r.reasons.CIRCUIT_OPEN || 0, refused = r.reasons.BUDGET || 0;
  const parts = [`${r.calls} calls → ${r.downstreamRequests} requests reached the downstream (${reasonsText(r.reasons)}).`];
  if (budgetExperiment && r.breakerBefore !== "CLOSED" && open > 0) {
    parts.push(`The breaker was already ${r.breakerBefore}, so calls failed fast before the budget was asked: let it recover, then try again.`);
    return parts.join(" ");
  }
  if (budgetExperiment) {
    parts.push(`One call in three failed once, a quarter of the attempts: the breaker stayed ${r.breaker} (it opens at 50 %).`);
  }
  if (open > 0) {
    parts.push(`The breaker opened: ${open} call(s) failed at once with CIRCUIT_OPEN without reaching the downstream.`);
  }
  if (refused > 0) {
    parts.push(`Retries cost more than the successes earned (a success deposits 0.1 token, a retry spends 1), so the budget refused ${refused} retr${refused === 1 ? "y" : "ies"}: those calls ended at once with BUDGET instead of adding load.`);
  } else if (budgetExperiment) {
    parts.push("The budget still had tokens: it refused no retry.");
  }
  return parts.join(" ");
}

async function guardExperiment(button, endpoint, budgetExperiment, busyText) {
  button.disabled = true;
  delete $("hammer-status").dataset.reasons;
  status("hammer-status", busyText);
  const poll = setInterval(refreshState, 300);
  try {
    const r = await api(endpoint, formData($("hammer-form")));
    status("hammer-status", explainGuards(r, budgetExperiment));
    $("hammer-status").dataset.reasons = JSON.stringify(r.reasons);
  } catch (e) {
    status("hammer-status", e.message, true);
  } finally {
    clearInterval(poll);
    button.disabled = false;
    refreshState();
  }
}

$("hammer-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guardExperiment($("hammer-button"), "hammer", false, "Hammering…");
});
$("budget-button").addEventListener("click", () =>
  guardExperiment($("budget-button"), "budget", true, "Retrying into a downstream where one call in three fails once…"));

$("heal-button").addEventListener("click", async () => {
  status("hammer-status", "Sending healthy calls (the breaker lets a probe through once its open time is over)…");
  const poll = setInterval(refreshState, 300);
  try {
    const r = await api("heal", {});
    status("hammer-status", `healthy calls: ${reasonsText(r.reasons)}; breaker ${r.breaker}`);
  } catch (e) {
    status("hammer-status", e.message, true);
  } finally {
    clearInterval(poll);
    refreshState();
  }
});

// ---- 4. Pay twice? ----
async function pay(withKey) {
  status("pay-status", "Paying…");
  try {
    const r = await api("pay", { withKey });
    const why = withKey ? "the server replayed the stored answer to the retry instead of charging again"
      : (r.charges > 1 ? "the retry charged the card again" : "the retry did not reach the shop");
    status("pay-status", `Payment ${r.payment}. ${withKey ? "With" : "Without"} a key: ${r.attempts} attempts, card charged ${r.charges} time(s): ${why}.`);
    $("pay-status").dataset.charges = r.charges;
    table("pay-table", [["attempt", "attempt"], ["seen", "what the client saw"]], r.log.map((x, i) => [i + 1, x]));
  } catch (e) {
    status("pay-status", e.message, true);
  }
}
$("pay-nokey").addEventListener("click", () => pay(false));
$("pay-key").addEventListener("click", () => pay(true));
$("pay-400").addEventListener("click", async () => {
  try {
    const r = await api("bad-request", {});
    status("pay-status", `A naive loop retried a 400 ${r.naive.length} times and got ${[...new Set(r.naive)].join(", ")} every time; Stagger made ${r.staggerAttempts} attempt (reason ${r.staggerReason}).`);
    table("pay-table", [["attempt", "naive attempt"], ["status", "status"]], r.naive.map((x, i) => [i + 1, x]));
  } catch (e) {
    status("pay-status", e.message, true);
  }
});

$("calc-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  try {
    const r = await api("calculator", formData(ev.target));
    $("calc-result").textContent = `${r.retries.toLocaleString()} retries could hold the call for ${r.cappedHuman} with the cap ` +
      `(about half that with full jitter) — and ${r.uncappedHuman} without it. Use a deadline.`;
  } catch (e) {
    $("calc-result").textContent = e.message;
  }
});

// ---- 5. Jobs ----
async function refreshJobs() {
  try {
    const r = await api("jobs");
    $("jobs-limit").textContent = r.maxAttempts;
    const strip = $("jobs-counts");
    strip.innerHTML = "";
    for (const [k, v] of Object.entries(r.counts)) {
      const p = document.createElement("span"); p.className = "pill"; p.textContent = `${k} ${v}`; p.dataset.state = k; p.dataset.count = v; strip.appendChild(p);
    }
    table("jobs-table", [["id", "id"], ["state", "state"], ["attempt", "attempt"], ["next", "next run"], ["history", "history"],
      ["error", "last error"]],
      r.jobs.map((j) => [j.id, j.state, j.attempt, j.nextRunInMs === null ? "—" : "in " + (j.nextRunInMs / 1000).toFixed(1) + " s",
        j.history, j.lastError || ""]),
      (i) => ({ state: r.jobs[i].state }));
  } catch (e) { /* next poll */ }
}
$("jobs-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  try {
    const r = await api("jobs-enqueue", formData(ev.target));
    status("jobs-status", `enqueued ${r.enqueued} job(s); workers retry failures with backoff and jitter`);
  } catch (e) { status("jobs-status", e.message, true); }
  refreshJobs();
});
$("jobs-redrive").addEventListener("click", async () => {
  try {
    const r = await api("jobs-redrive", {});
    status("jobs-status", `the dependency was fixed; re-drove ${r.redriven} dead job(s) with fresh attempts (their history stays)`);
  } catch (e) { status("jobs-status", e.message, true); }
  refreshJobs();
});
setInterval(refreshJobs, 1000);
refreshState();
refreshJobs();

// ---- 6. When it is down ----
function storeStrip(store) {
  const strip = $("store-state");
  strip.innerHTML = "";
  const add = (text, cls, data) => {
    const p = document.createElement("span"); p.className = "pill " + (cls || ""); p.textContent = text;
    Object.assign(p.dataset, data || {}); strip.appendChild(p);
  };
  add(store.down ? "store DOWN" : "store up", store.down ? "OPEN" : "CLOSED", { down: store.down });
  add("breaker " + store.breaker, store.breaker, { breaker: store.breaker });
  add("orders placed " + store.placed, "", { placed: store.placed });
}
async function refreshStore() {
  try {
    const r = await api("store-orders");
    storeStrip(r.store);
    table("store-orders", [["job", "job"], ["order", "order"], ["state", "state"], ["attempt", "attempts"]],
      r.orders.map((o) => [o.jobId, o.order, o.state === "SUCCEEDED" ? "placed" : o.state === "AVAILABLE" ? "queued" : o.state,
        o.attempt]),
      (i) => ({ order: r.orders[i].order, state: r.orders[i].state }));
  } catch (e) { /* next poll */ }
}
function ago(seconds) {
  if (seconds < 60) return seconds + " s ago";
  const m = Math.floor(seconds / 60);
  return m + (m === 1 ? " minute" : " minutes") + " ago";
}
async function storePrices() {
  const box = $("store-prices-box");
  try {
    const r = await api("store-prices");
    if (r.message) {
      status("store-prices-box", r.message, true);
      box.dataset.stale = "none";
    } else {
      const prices = Object.entries(JSON.parse(r.prices)).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(" · ");
      status("store-prices-box", r.stale ? `${prices} — as of ${ago(r.ageSeconds)} (the store is not answering: ${r.reason})` : `${prices} — live`);
      box.dataset.stale = r.stale;
      box.dataset.age = r.ageSeconds === null ? "" : r.ageSeconds;
    }
  } catch (e) { status("store-prices-box", e.message, true); }
  refreshStore();
}
$("store-down").addEventListener("click", async () => { await api("store-down", { down: true }); refreshStore(); });
$("store-up").addEventListener("click", async () => { await api("store-down", { down: false }); refreshStore(); });
$("store-prices").addEventListener("click", storePrices);
$("store-order").addEventListener("click", async () => {
  try {
    const r = await api("store-order", {});
    status("store-order-status", `${r.order}: ${r.message}` + (r.deferred ? ` (job ${r.jobId})` : ` Receipt ${JSON.parse(r.receipt).receipt}.`));
    $("store-order-status").dataset.order = r.order;
    $("store-order-status").dataset.deferred = r.deferred;
  } catch (e) { status("store-order-status", e.message, true); }
  refreshStore();
});
$("store-account").addEventListener("click", async () => {
  try {
    const r = await api("store-account", {});
    if (r.message) {
      status("store-message", r.message, true);
      $("store-message").dataset.retryInMs = r.retryInMs === null ? "" : r.retryInMs;
    } else {
      const a = JSON.parse(r.account);
      status("store-message", `Hello ${a.name}: balance ${a.balance.toFixed(2)}.`);
      $("store-message").dataset.retryInMs = "";
    }
  } catch (e) { status("store-message", e.message, true); }
  refreshStore();
});
setInterval(refreshStore, 1000);
storePrices();
