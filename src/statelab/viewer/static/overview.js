// The overview: filters, the side-by-side picker, the runs x seeds table, the episode list.
"use strict";

const FILTER = { runs: new Set(), success: "any", min: "", max: "", text: "", where: "both" };
let textHits = null; // the episode numbers whose reply or memory holds FILTER.text; null: no text filter
const PAGE = 200;
let listShown = PAGE;

function matches(ep) {
  if (FILTER.runs.size && !FILTER.runs.has(ep.run.id)) return false;
  if (FILTER.success === "yes" && !ep.success) return false;
  if (FILTER.success === "no" && ep.success) return false;
  if (FILTER.min !== "" && ep.score < Number(FILTER.min)) return false;
  if (FILTER.max !== "" && ep.score > Number(FILTER.max)) return false;
  return !(textHits && !textHits.has(ep.i));
}

async function updateTextHits() {
  const q = FILTER.text.trim().toLowerCase();
  if (!q) { textHits = null; return; }
  const idx = await loadTextIndex();
  const hits = new Set();
  for (const f of FILTER.where === "both" ? ["reply", "memory"] : [FILTER.where]) {
    const part = idx[f];
    part.lower = part.lower || part.lines.map((l) => l.toLowerCase());
    part.lower.forEach((line, i) => { if (line.includes(q)) for (const e of part.eps[i]) hits.add(e); });
  }
  textHits = hits;
}

function countsLine() {
  const parts = [INDEX.shown + " episode" + (INDEX.shown === 1 ? "" : "s") + " on this page"];
  if (INDEX.shown < INDEX.total) {
    let of = "of " + INDEX.total + " in the store";
    if (INDEX.selected > INDEX.shown) of += " (" + INDEX.selected + " chosen, the first " + INDEX.shown + " written)";
    parts.push(of);
  }
  parts.push(RUNS.length + " runs × " + INDEX.seeds.length + " seeds" + (INDEX.rollouts > 1 ? " × " + INDEX.rollouts + " rollouts" : ""));
  return parts.join(" · ");
}

function bitNames(b) {
  const out = [];
  for (const name of ["invalid", "unparsed", "reward", "penalty", "query", "rejected"]) if (b & BITS[name]) out.push(name);
  return out;
}

function markNames(m) {
  const out = [];
  for (const name of ["repeat", "revisit"]) if (m & MARKS[name]) out.push(name);
  return out;
}

/** What a cell's loop marks say, for its tooltip (``note``: the episode page's details). */
function markText(names, note) {
  if (note) return note;
  const out = [];
  if (names.includes("repeat")) out.push("the same action as the step before");
  if (names.includes("revisit")) out.push("back to an earlier state");
  return out.join("; ");
}

/** A strip: one cell per step; ``cells`` is a list of {t, bits, marks, note}: ``bits`` the
 * step's outcome (invalid, reward, ...), ``marks`` its loop marks (a repeated action, a
 * return to an earlier state), ``note`` what those say in words. */
function stripOf(cells, onPick) {
  return el("span", { class: "strip" }, cells.map(({ t, bits, marks, note }) => {
    const names = bitNames(bits), loops = markNames(marks || 0);
    const said = markText(loops, note);
    return el("span", {
      class: names.concat(loops).join(" "), data: { t },
      title: "step " + t + ": " + (names.length ? names.join(", ") : "valid") + (said ? "; " + said : ""),
      onclick: onPick ? () => onPick(t) : null,
    });
  }));
}
function codeCells(code, marks) {
  return [...code].map((ch, i) => ({
    t: i + 1, bits: INDEX.alphabet.indexOf(ch),
    marks: marks && i < marks.length ? INDEX.alphabet.indexOf(marks[i]) : 0,
  }));
}
function legend() {
  const key = (cls, text) => el("span", { class: "key" }, el("span", { class: cls }), " " + text);
  return el("p", { class: "meta legend" }, "strip, one cell per step: ",
    el("span", { class: "strip" }, key("", "valid"), key("invalid", "invalid"), key("unparsed", "unparsed"),
      key("reward", "reward"), key("penalty", "negative reward (valid)"), key("query", "world-model query"),
      key("rejected", "rejected proposal"),
      key("repeat", "repeats the step before's action (a bar under a run of them)"),
      key("revisit", "back to an earlier state (hatched; by observation where the store has no state fingerprints)")));
}

function showOverview(app) {
  app.replaceChildren(
    el("h1", {}, "statelab · " + INDEX.name),
    el("p", { class: "meta", id: "counts" }, countsLine()),
    filterForm(), compareForm(),
    el("h2", {}, "Runs × seeds"),
    el("p", { class: "meta" }, "each episode's score (one cell per rollout), red at 0 to green at 1; a cell opens its episode; cells outside the filters are faded"),
    el("div", { id: "grid" }),
    el("h2", {}, "Episodes"), legend(), el("div", { id: "list" }));
  listShown = PAGE;
  redraw();
}

function redraw() {
  const hit = EPS.filter(matches);
  const count = document.getElementById("f-count");
  if (count) count.textContent = hit.length + " of " + EPS.length + " episodes match";
  drawGrid(new Set(hit.map((e) => e.i)));
  drawList(hit);
}

function filterForm() {
  const change = () => { listShown = PAGE; redraw(); };
  let timer = null;
  const runBoxes = RUNS.map((r) => el("label", {},
    el("input", { type: "checkbox", class: "f-run", data: { run: r.id }, checked: FILTER.runs.has(r.id),
      onchange: (ev) => { if (ev.target.checked) FILTER.runs.add(r.id); else FILTER.runs.delete(r.id); change(); } }),
    " " + r.short));
  return el("fieldset", {}, el("legend", {}, "Filters"),
    el("div", {}, "runs (none ticked: all): ", runBoxes),
    el("label", {}, "success ", el("select", { id: "f-success", onchange: (ev) => { FILTER.success = ev.target.value; change(); } },
      ["any", "yes", "no"].map((v) => el("option", { value: v, selected: FILTER.success === v }, v)))),
    el("label", {}, "score ≥ ", el("input", { id: "f-min", type: "number", step: "any", value: FILTER.min,
      oninput: (ev) => { FILTER.min = ev.target.value; change(); } })),
    el("label", {}, "score ≤ ", el("input", { id: "f-max", type: "number", step: "any", value: FILTER.max,
      oninput: (ev) => { FILTER.max = ev.target.value; change(); } })),
    el("label", {}, "text ", el("input", { id: "f-text", type: "search", value: FILTER.text, placeholder: "in a line of a reply or memory",
      oninput: (ev) => {
        FILTER.text = ev.target.value;
        clearTimeout(timer);
        timer = setTimeout(() => updateTextHits().then(change, (e) => { document.getElementById("f-count").textContent = String(e); }), 200);
      } })),
    el("label", {}, "in ", el("select", { id: "f-where", onchange: (ev) => { FILTER.where = ev.target.value; updateTextHits().then(change); } },
      ["both", "reply", "memory"].map((v) => el("option", { value: v, selected: FILTER.where === v }, v === "both" ? "reply or memory" : v)))),
    el("span", { id: "f-count", class: "meta" }));
}

function options(values, label) { return values.map((v) => el("option", { value: v }, label ? label(v) : v)); }

function compareForm(preset) {
  const want = preset || {};
  const runs = RUNS.map((r) => r.id);
  const label = (id) => findRun(id).short;
  const a = el("select", { id: "cmp-a" }, options(runs, label));
  const b = el("select", { id: "cmp-b" }, options(runs, label));
  const seed = el("select", { id: "cmp-seed" }, options(INDEX.seeds));
  const rollout = el("select", { id: "cmp-rollout" }, options([...Array(Math.max(1, INDEX.rollouts)).keys()].map(String)));
  a.value = want.a || runs[0];
  b.value = want.b || runs[1] || runs[0];
  if (want.seed !== undefined) seed.value = want.seed;
  if (want.rollout !== undefined) rollout.value = want.rollout;
  const go = () => { location.hash = hashOf({ run: a.value, vs: b.value, seed: seed.value, rollout: rollout.value }); };
  return el("fieldset", {}, el("legend", {}, "Two runs side by side"),
    el("label", {}, "run A ", a), el("label", {}, "run B ", b), el("label", {}, "seed ", seed),
    el("label", {}, "rollout ", rollout), el("button", { id: "cmp-go", type: "button", onclick: go }, "compare"));
}

function drawGrid(hit) {
  const runs = RUNS.filter((r) => !FILTER.runs.size || FILTER.runs.has(r.id));
  const cells = new Map();
  for (const e of EPS) {
    const k = e.run.id + "|" + e.seed;
    if (!cells.has(k)) cells.set(k, []);
    cells.get(k).push(e);
  }
  const rows = runs.map((r) => {
    const mine = EPS.filter((e) => e.run === r);
    const mean = mine.length ? mine.reduce((s, e) => s + e.score, 0) / mine.length : 0;
    return el("tr", { data: { run: r.id } },
      el("th", { title: r.label }, r.short),
      el("td", { class: "mean", style: "background:" + scoreColor(mean) }, mine.length ? fmt(mean) : "–"),
      el("td", {}, mine.filter((e) => e.success).length + "/" + mine.length),
      INDEX.seeds.map((s) => el("td", { class: "cells" }, (cells.get(r.id + "|" + s) || []).map((e) =>
        el("a", { class: "cell" + (hit.has(e.i) ? "" : " dim") + (endClass(e) ? " " + endClass(e) : ""),
          href: epHash(e), style: "background:" + scoreColor(e.score),
          data: { seed: e.seed, rollout: e.rollout },
          title: r.short + " · seed " + e.seed + " · rollout " + e.rollout + " · " + (endText(e) || e.status) + (e.success ? " · success" : "") },
        fmt(e.score))))));
  });
  document.getElementById("grid").replaceChildren(el("table", { class: "grid" },
    el("thead", {}, el("tr", {}, el("th", {}, "run"), el("th", {}, "mean"), el("th", {}, "success"),
      INDEX.seeds.map((s) => el("th", {}, "seed " + s)))),
    el("tbody", {}, rows)));
}

// -- the episode list: sortable columns ---------------------------------------------------
/** Seeds are decimal strings (they may exceed 2**53): compared as integers. */
function bigCompare(a, b) {
  try { const x = BigInt(a), y = BigInt(b); return x < y ? -1 : x > y ? 1 : 0; } catch (e) { return String(a).localeCompare(String(b)); }
}
/** The list's columns: name, the value a sort compares (``num``: as numbers, a missing one
 * last either way; else as text), and the cell. */
const COLUMNS = [
  { name: "run", key: (e) => e.run.short, cell: (e) => el("td", { title: e.run.label }, el("a", { href: epHash(e) }, e.run.short)) },
  { name: "seed", cmp: (a, b) => bigCompare(a.seed, b.seed), cell: (e) => el("td", {}, e.seed) },
  { name: "rollout", num: true, key: (e) => Number(e.rollout), cell: (e) => el("td", {}, e.rollout) },
  { name: "score", num: true, key: (e) => e.score, cell: (e) => el("td", { style: "background:" + scoreColor(e.score) }, fmt(e.score)) },
  { name: "success", num: true, key: (e) => (e.success ? 1 : 0), cell: (e) => el("td", {}, e.success ? "yes" : "no") },
  { name: "steps", num: true, key: (e) => e.steps, cell: (e) => el("td", {}, e.steps) },
  { name: "actions", sort: false, cell: (e) => el("td", {}, stripOf(codeCells(e.strip, e.marks))) },
  { name: "repeat", title: "the longest run of one action, in steps", num: true, key: (e) => e.longestRepeat,
    cell: (e) => el("td", { class: "num" + (e.longestRepeat > 2 ? " loopy" : "") }, e.longestRepeat === null ? "–" : "×" + e.longestRepeat) },
  { name: "revisits", title: "steps that return to an earlier state", num: true, key: (e) => e.revisits,
    cell: (e) => el("td", { class: "num" }, e.revisits === null ? "–" : e.revisits) },
  { name: "tokens", title: "tokens in + out over every model call (in / out shown)", num: true,
    key: (e) => (e.tokensIn === null ? null : e.tokensIn + e.tokensOut),
    cell: (e) => el("td", { class: "num", title: e.calls === null ? null : e.calls + " calls, " + e.cached + " from the cache" },
      e.tokensIn === null ? "–" : e.tokensIn + " / " + e.tokensOut) },
  { name: "cost", title: "US dollars of the calls not served from the cache (– : no price known)", num: true,
    key: (e) => e.cost, cell: (e) => el("td", { class: "num" }, fmtCost(e.cost)) },
  { name: "latency", title: "model seconds over the episode's calls (a cache hit spends none)", num: true,
    key: (e) => e.latency, cell: (e) => el("td", { class: "num" }, fmtSec(e.latency)) },
  { name: "decoding", title: "how replies were decoded (trie, grammar, choice ...: held to the actions; free: not)",
    key: (e) => e.decoding, cell: (e) => el("td", { title: e.decodingDetail || null }, e.decoding || "–") },
  { name: "status", key: (e) => e.status, cell: (e) => el("td", { class: "status " + (e.status === "failed" ? "bad" : "") }, endBadge(e) || e.status,
    e.error ? ": " + e.error : "") },
];
const SORT = { col: null, dir: 1 };

function sortRows(rows) {
  const col = COLUMNS.find((c) => c.name === SORT.col);
  if (!col) return rows;
  const d = SORT.dir;
  const cmp = col.cmp || ((a, b) => {
    const x = col.key(a), y = col.key(b);
    const mx = x === null || x === undefined || (col.num && Number.isNaN(x));
    const my = y === null || y === undefined || (col.num && Number.isNaN(y));
    if (mx || my) return mx && my ? 0 : mx ? 1 - 2 * (d < 0) : -1 + 2 * (d < 0); // missing last
    return col.num ? x - y : String(x).localeCompare(String(y));
  });
  return rows.slice().sort((a, b) => d * cmp(a, b) || a.i - b.i);
}

function header(col, hit) {
  if (col.sort === false) return el("th", { title: col.title || null }, col.name);
  const on = SORT.col === col.name;
  const arrow = on ? (SORT.dir > 0 ? " ▲" : " ▼") : "";
  return el("th", {
    class: "sortable" + (on ? " sorted" : ""), data: { col: col.name }, title: (col.title ? col.title + "; " : "") + "click to sort",
    "aria-sort": on ? (SORT.dir > 0 ? "ascending" : "descending") : "none",
    onclick: () => {
      if (SORT.col === col.name) SORT.dir = -SORT.dir; else { SORT.col = col.name; SORT.dir = 1; }
      drawList(hit);
    },
  }, col.name + arrow);
}

function drawList(hit) {
  const rows = sortRows(hit);
  const shown = rows.slice(0, listShown);
  const more = hit.length > shown.length
    ? el("button", { type: "button", onclick: () => { listShown += PAGE * 5; drawList(hit); } }, "show more (" + (hit.length - shown.length) + " left)")
    : null;
  document.getElementById("list").replaceChildren(el("table", { class: "episodes" },
    el("thead", {}, el("tr", {}, COLUMNS.map((c) => header(c, hit)))),
    el("tbody", {}, shown.map((e) => el("tr", { class: "ep-row" + (endClass(e) ? " end " + endClass(e) : ""), data: { i: e.i } },
      COLUMNS.map((c) => c.cell(e)))))), ...(more ? [more] : []));
}
