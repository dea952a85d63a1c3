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

function table(id, header, rows) {
  const t = $(id);
  t.innerHTML = "";
  const tr = t.insertRow();
  for (const h of header) { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); }
  for (const r of rows) {
    const row = t.insertRow();
    for (const c of r) row.insertCell().textContent = c;
  }
}

const ms = (x) => (Math.round(x * 10) / 10).toLocaleString() + " ms";

// ---- 1. Send a request ----
function drawTimeline(result) {
  const host = $("timeline");
  host.innerHTML = "";
  const W = 1000, rowH = 34, H = 50 + rowH * (result.attempts.length + result.waits.length);
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "timeline of attempts and waits", id: "timeline-svg" }, host);
  const planned = (w) => Math.max(Math.max(w.rawMs, 0) + w.hintMs, w.delayMs);
  const total = Math.max(result.totalMs, ...result.waits.map((w) => w.startMs + planned(w)), 1);
  const right = W - 250; // room for the labels after the last bar
  const x = (t) => 110 + (t / total) * (right - 110);
  svg("line", { x1: 110, y1: H - 22, x2: right, y2: H - 22, stroke: "#99a" }, s);
  for (let i = 0; i <= 4; i++) {
    const t = total * i / 4;
    svg("text", { x: x(t), y: H - 6, "font-size": 12, "text-anchor": "middle", fill: "#667" }, s).textContent = ms(t);
  }
  const events = [];
  for (const a of result.attempts) events.push({ kind: "attempt", at: a.startMs, a });
  for (const w of result.waits) events.push({ kind: "wait", at: w.startMs, w });
  events.sort((p, q) => p.at - q.at);
  let y = 10;
  for (const e of events) {
    if (e.kind === "attempt") {
      const a = e.a;
      svg("text", { x: 6, y: y + 20, "font-size": 13 }, s).textContent = `attempt ${a.attempt}`;
      const bar = svg("rect", { x: x(a.startMs), y: y + 6, width: Math.max(4, x(a.endMs) - x(a.startMs)), height: 20, rx: 3,
        fill: a.ok ? "var(--ok)" : "var(--bad)", class: "attempt-bar", "data-outcome": a.outcome }, s);
      svg("title", {}, bar).textContent = a.outcome;
      svg("text", { x: x(a.endMs) + 6, y: y + 20, "font-size": 12 }, s).textContent = a.outcome;
    } else {
      const w = e.w;
      svg("text", { x: 6, y: y + 20, "font-size": 13, fill: "#8a6100" }, s).textContent = `wait → ${w.beforeAttempt}`;
      const plan = planned(w);
      svg("rect", { x: x(w.startMs), y: y + 10, width: Math.max(2, x(w.startMs + plan) - x(w.startMs)), height: 12, rx: 2,
        fill: "none", stroke: "var(--wait)", "stroke-dasharray": "4 3" }, s);
      svg("rect", { x: x(w.startMs), y: y + 10, width: Math.max(2, x(w.startMs + w.delayMs) - x(w.startMs)), height: 12, rx: 2,
        fill: "var(--wait)", class: "wait-bar" }, s);
      const hint = w.hintMs > 0 ? `, Retry-After ${ms(w.hintMs)}` : "";
      svg("text", { x: x(w.startMs + plan) + 6, y: y + 20, "font-size": 12 }, s).textContent =
        w.rawMs < 0 ? `slept ${ms(w.delayMs)} (decorrelated jitter)${hint}` : `slept ${ms(w.delayMs)} of ${ms(w.rawMs)} backoff${hint}`;
    }
    y += rowH;
  }
}

$("send-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const button = $("send-button");
  button.disabled = true;
  status("send-status", "Sending… (the waits are real)");
  try {
    const r = await api("send", formData(ev.target));
    drawTimeline(r);
    status("send-status", `${r.reason}: ${r.answer} after ${r.attempts.length} attempt(s) in ${ms(r.totalMs)}`);
    $("send-status").dataset.reason = r.reason;
    $("send-status").dataset.attempts = r.attempts.length;
    table("send-table", ["#", "outcome", "started", "took", "then waited", "backoff before jitter", "jitter removed"],
      r.attempts.map((a) => {
        const w = r.waits.find((x) => x.beforeAttempt === a.attempt + 1);
        return [a.attempt, a.outcome, ms(a.startMs), ms(a.endMs - a.startMs),
          w ? ms(w.delayMs) : "—", w && w.rawMs >= 0 ? ms(w.rawMs) : "—",
          w && w.rawMs >= 0 ? ms(Math.max(0, w.rawMs + w.hintMs - w.delayMs)) : "—"];
      }));
  } catch (e) {
    status("send-status", e.message, true);
  } finally {
    button.disabled = false;
  }
});

// ---- 2. Thundering herd ----
const COLORS = ["#c62828", "#1a4fb5", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037"];

function barChart(title, rows, valueKey, unit) {
  const W = 520, H = 40 + rows.length * 30;
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "herd-chart" });
  svg("text", { x: 8, y: 20, "font-size": 14, "font-weight": 600 }, s).textContent = title;
  const max = Math.max(...rows.map((r) => r[valueKey]), 1);
  rows.forEach((r, i) => {
    const y = 32 + i * 30;
    svg("text", { x: 8, y: y + 16, "font-size": 12 }, s).textContent = r.strategy;
    svg("rect", { x: 160, y, width: Math.max(2, (r[valueKey] / max) * (W - 260)), height: 20, fill: COLORS[i % COLORS.length], class: "herd-bar" }, s);
    svg("text", { x: 166 + (r[valueKey] / max) * (W - 260), y: y + 15, "font-size": 12 }, s).textContent =
      Math.round(r[valueKey]).toLocaleString() + unit;
  });
  return s;
}

function lineChart(title, series) {
  const W = 520, H = 260, L = 50, B = 30;
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "herd-chart" });
  svg("text", { x: 8, y: 18, "font-size": 14, "font-weight": 600 }, s).textContent = title;
  const maxX = Math.max(...series.map((p) => p.points.length), 1);
  const maxY = Math.max(...series.flatMap((p) => p.points), 1);
  svg("line", { x1: L, y1: H - B, x2: W - 10, y2: H - B, stroke: "#99a" }, s);
  svg("line", { x1: L, y1: 28, x2: L, y2: H - B, stroke: "#99a" }, s);
  svg("text", { x: 4, y: 36, "font-size": 11 }, s).textContent = Math.round(maxY);
  series.forEach((p, i) => {
    const pts = p.points.map((v, j) => `${L + (j / maxX) * (W - L - 10)},${H - B - (v / maxY) * (H - B - 30)}`).join(" ");
    svg("polyline", { points: pts, fill: "none", stroke: COLORS[i % COLORS.length], "stroke-width": 1.5 }, s);
    svg("text", { x: W - 150, y: 36 + i * 14, "font-size": 11, fill: COLORS[i % COLORS.length] }, s).textContent = p.strategy;
  });
  svg("text", { x: L, y: H - 8, "font-size": 11, fill: "#667" }, s).textContent = `time → (${series[0] ? series[0].bucketMs : 0} ms buckets)`;
  return s;
}

$("herd-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("herd-button").disabled = true;
  status("herd-status", "Simulating…");
  try {
    const r = await api("herd", formData(ev.target));
    const charts = $("herd-charts");
    charts.innerHTML = "";
    charts.appendChild(barChart("Total calls to finish", r.results, "calls", ""));
    charts.appendChild(barChart("Time until every client is done", r.results, "completionMs", " ms"));
    if (r.load && r.load.length) charts.appendChild(lineChart("Load on the server over time", r.load));
    table("herd-table", ["strategy", "calls", "completion (ms)"], r.results.map((x) => [x.strategy, Math.round(x.calls), Math.round(x.completionMs)]));
    status("herd-status", `${r.clients} clients, ${r.runs} run(s) each, ${r.events.toLocaleString()} simulated events`);
  } catch (e) {
    status("herd-status", e.message, true);
  } finally {
    $("herd-button").disabled = false;
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
    table("breaker-table", ["meter (from the Micrometer registry)", "value"], Object.entries(r.meters));
  } catch (e) { /* the next poll retries */ }
}

$("hammer-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("hammer-button").disabled = true;
  status("hammer-status", "Hammering…");
  const poll = setInterval(refreshState, 300);
  try {
    const r = await api("hammer", formData(ev.target));
    status("hammer-status", `${r.calls} calls → ${r.downstreamRequests} requests reached the downstream (` +
      Object.entries(r.reasons).map(([k, v]) => `${k} ${v}`).join(", ") + ")");
    $("hammer-status").dataset.reasons = JSON.stringify(r.reasons);
  } catch (e) {
    status("hammer-status", e.message, true);
  } finally {
    clearInterval(poll);
    $("hammer-button").disabled = false;
    refreshState();
  }
});

$("heal-button").addEventListener("click", async () => {
  status("hammer-status", "Sending healthy calls (the breaker lets a probe through once its open time is over)…");
  const poll = setInterval(refreshState, 300);
  try {
    const r = await api("heal", {});
    status("hammer-status", `healthy calls: ${Object.entries(r.reasons).map(([k, v]) => `${k} ${v}`).join(", ")}; breaker ${r.breaker}`);
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
    status("pay-status", `${withKey ? "With" : "Without"} a key: ${r.attempts} attempts, card charged ${r.charges} time(s)`);
    $("pay-status").dataset.charges = r.charges;
    table("pay-table", ["attempt", "what the client saw"], r.log.map((x, i) => [i + 1, x]));
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
    table("pay-table", ["naive attempt", "status"], r.naive.map((x, i) => [i + 1, x]));
  } catch (e) {
    status("pay-status", e.message, true);
  }
});

$("calc-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  try {
    const r = await api("calculator", formData(ev.target));
    $("calc-result").textContent = `${r.retries} retries could hold the call for ${r.cappedHuman} with the cap ` +
      `(about half that with full jitter) — and ${r.uncappedHuman} without it. Use a deadline.`;
  } catch (e) {
    $("calc-result").textContent = e.message;
  }
});

// ---- 5. Jobs ----
async function refreshJobs() {
  try {
    const r = await api("jobs");
    const strip = $("jobs-counts");
    strip.innerHTML = "";
    for (const [k, v] of Object.entries(r.counts)) {
      const p = document.createElement("span"); p.className = "pill"; p.textContent = `${k} ${v}`; p.dataset.state = k; p.dataset.count = v; strip.appendChild(p);
    }
    table("jobs-table", ["id", "state", "attempts", "next run", "last error"], r.jobs.map((j) => [j.id, j.state, j.attempts, j.runAt, j.lastError || ""]));
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
    status("jobs-status", `the dependency was fixed; re-drove ${r.redriven} dead job(s)`);
  } catch (e) { status("jobs-status", e.message, true); }
  refreshJobs();
});
setInterval(refreshJobs, 1000);
refreshState();
refreshJobs();
