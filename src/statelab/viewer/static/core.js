// statelab viewer: the index, DOM helpers, data loading and routing.
// Every text from the store is put into the page as a text node or an attribute value;
// no text is ever parsed as markup (elements are made one by one, texts are text nodes).
"use strict";

const INDEX = JSON.parse(document.getElementById("statelab-index").textContent);
const ME = document.currentScript;
const DATA_DIR = ME.dataset.dir;
const VERSION = ME.dataset.v;
const NONCE = ME.nonce;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const BITS = INDEX.bits;
const MARKS = INDEX.marks || { repeat: 1, revisit: 2 };

/** Text safe to show: every bidirectional control shown by its name (the writer did so
 * too; this is the second lock). */
function clean(s) {
  return String(s).replace(BIDI, (c) => "[U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "]");
}

/** An element; string children become text nodes, never markup. */
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "data") for (const [dk, dv] of Object.entries(v)) e.dataset[dk] = String(dv);
    else if (k === "value" || k === "checked" || k === "selected") e[k] = v;
    else e.setAttribute(k, clean(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(clean(kid)));
  }
  return e;
}

const RUNS = INDEX.runs;
const EPS = INDEX.episodes.map((r, i) => {
  const x = r[12] || [];
  return {
    i, run: RUNS[r[0]], seed: r[1], rollout: String(r[2]), status: r[3], score: r[4],
    success: r[5], steps: r[6], strip: r[7], file: r[8], error: r[9], reason: r[10] || "",
    marks: r[11] || "",
    // the episode's figures (stats_of in _index.py); null where the page has none
    tokensIn: x.length ? x[0] : null, tokensOut: x.length ? x[1] : null,
    cost: x.length ? x[2] : null, latency: x.length ? x[3] : null,
    decoding: x[4] || "", decodingDetail: x[5] || "", calls: x.length ? x[6] : null,
    cached: x.length ? x[7] : null, longestRepeat: x.length ? x[8] : null, revisits: x.length ? x[9] : null,
  };
});
const BY_KEY = new Map(EPS.map((e) => [epKey(e.run.id, e.seed, e.rollout), e]));

function epKey(run, seed, rollout) { return run + "|" + seed + "|" + rollout; }
function findRun(name) { return RUNS.find((r) => r.id === name) || RUNS.find((r) => r.label === name); }
function findEp(run, seed, rollout) { return BY_KEY.get(epKey(run.id, seed, rollout)); }
function hashOf(params) {
  return "#" + Object.entries(params).map(([k, v]) => k + "=" + encodeURIComponent(v)).join("&");
}
function epHash(ep) { return hashOf({ run: ep.run.id, seed: ep.seed, rollout: ep.rollout }); }
function scoreColor(s) {
  const x = Math.max(0, Math.min(1, Number(s) || 0));
  return "hsl(" + Math.round(x * 120) + ",62%," + Math.round(80 - 8 * x) + "%)";
}
function fmt(x) { return (Math.round(x * 1000) / 1000).toString(); }
/** Dollars: "–" when no price is known, else as many digits as a small cost needs. */
function fmtCost(x) {
  if (x === null || x === undefined) return "–";
  if (x === 0) return "$0";
  return "$" + (x >= 0.01 ? x.toFixed(2) : x.toPrecision(2));
}
/** Seconds, to a tenth (a millisecond under one second; "<1 ms" for less but some). */
function fmtSec(x) {
  if (x === null || x === undefined) return "–";
  if (x > 0 && x < 0.0005) return "<1 ms";
  return (x < 1 ? Math.round(x * 1000) / 1000 : Math.round(x * 10) / 10) + " s";
}

/** How an episode ended, when not played to its end: "" for a done one. A truncated one was
 * cut by a per-episode limit (scored as it stands at the cut); a failed one by an error. */
function endText(ep) {
  const steps = " after " + ep.steps + " step" + (ep.steps === 1 ? "" : "s");
  if (ep.status === "truncated") return "truncated" + (ep.reason ? " by " + ep.reason : "") + steps;
  if (ep.status !== "done") return ep.status + steps + (ep.reason ? " (" + ep.reason + ")" : "");
  return "";
}
/** The class an episode's end marks it with ("" for done). */
function endClass(ep) { return ep.status === "done" ? "" : ep.status === "truncated" ? "truncated" : "failed"; }
/** A badge saying how the episode ended, or null for one played to its end. */
function endBadge(ep) {
  const text = endText(ep);
  return text ? el("span", { class: "badge end " + endClass(ep), title: ep.error || text }, text) : null;
}

// -- data files, loaded by script tags (fetch() of file:// is blocked) -------------------
const waiting = new Map();
const cache = new Map();
const CACHE_MAX = 24;

window.statelabEpisode = (key, data) => { const w = waiting.get(key); if (w) { waiting.delete(key); w(data); } };
window.statelabText = (data) => { const w = waiting.get("#text"); if (w) { waiting.delete("#text"); w(data); } };

function loadScript(file, key) {
  return new Promise((resolve, reject) => {
    waiting.set(key, resolve);
    const s = document.createElement("script");
    s.nonce = NONCE;
    s.src = DATA_DIR + "/" + file + "?v=" + encodeURIComponent(VERSION);
    s.onload = () => {
      s.remove();
      if (waiting.delete(key)) reject(new Error(file + " does not hold this episode"));
    };
    s.onerror = () => { s.remove(); waiting.delete(key); reject(new Error("could not load " + s.src)); };
    document.head.append(s);
  });
}

/** The texts of an episode's table: a string, or [ref, prefix, middle, suffix]. */
function decodeTexts(items) {
  const out = [];
  for (const it of items) {
    if (typeof it === "string") { out.push(it); continue; }
    const [ref, p, mid, s] = it;
    const r = out[ref];
    out.push(r.slice(0, p) + mid + r.slice(r.length - s));
  }
  return out;
}

const STEP_TEXTS = ["action", "reply", "view", "grounding", "observation", "memory", "gold"];

function decodeEpisode(data) {
  const T = decodeTexts(data.texts);
  for (const st of data.steps) {
    for (const f of STEP_TEXTS) st[f] = T[st[f]];
    st.queries = st.queries.map(([q, a]) => ({ query: T[q], answer: T[a] }));
    for (const c of st.calls) {
      c.text = T[c.text];
      c.messages = c.messages.map(([role, i]) => ({ role, content: T[i] }));
    }
  }
  return data;
}

/** The episode's data (a promise); the last few are kept, so memory stays bounded. */
function loadEpisode(ep) {
  const key = epKey(ep.run.id, ep.seed, ep.rollout);
  let p = cache.get(key);
  if (p) cache.delete(key);
  else p = loadScript(ep.file, key).then(decodeEpisode);
  cache.set(key, p);
  while (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value);
  p.catch(() => cache.delete(key));
  return p;
}

let textIndex = null;
function loadTextIndex() {
  if (!textIndex) {
    textIndex = loadScript("text.js", "#text");
    textIndex.catch(() => { textIndex = null; });
  }
  return textIndex;
}

// -- routing: #run=<id>&seed=<s>&rollout=<r> an episode; &vs=<id> two side by side ------
function route() {
  const h = new URLSearchParams(location.hash.slice(1));
  const app = document.getElementById("app");
  const run = h.get("run"), vs = h.get("vs"), seed = h.get("seed"), rollout = h.get("rollout") || "0";
  window.scrollTo(0, 0);
  if (run && vs && seed !== null) return showCompare(app, run, vs, seed, rollout);
  if (run && seed !== null) return showEpisode(app, run, seed, rollout);
  if (run) { const r = findRun(run); if (r) FILTER.runs = new Set([r.id]); }
  return showOverview(app);
}

function navBar(...more) {
  return el("nav", {}, el("a", { href: "#" }, "all episodes"), ...more);
}
