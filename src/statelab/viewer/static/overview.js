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

/** A strip: one cell per step; ``cells`` is a list of {t, bits}. */
function stripOf(cells, onPick) {
  return el("span", { class: "strip" }, cells.map(({ t, bits }) => {
    const names = bitNames(bits);
    return el("span", {
      class: names.join(" "), data: { t },
      title: "step " + t + ": " + (names.length ? names.join(", ") : "valid"),
      onclick: onPick ? () => onPick(t) : null,
    });
  }));
}
function codeCells(code) {
  return [...code].map((ch, i) => ({ t: i + 1, bits: INDEX.alphabet.indexOf(ch) }));
}
function legend() {
  const key = (cls, text) => el("span", { class: "key" }, el("span", { class: cls }), " " + text);
  return el("p", { class: "meta legend" }, "strip, one cell per step: ",
    el("span", { class: "strip" }, key("", "valid"), key("invalid", "invalid"), key("unparsed", "unparsed"),
      key("reward", "reward"), key("penalty", "negative reward (valid)"), key("query", "world-model query"),
      key("rejected", "rejected proposal")));
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

function drawList(hit) {
  const shown = hit.slice(0, listShown);
  const more = hit.length > shown.length
    ? el("button", { type: "button", onclick: () => { listShown += PAGE * 5; drawList(hit); } }, "show more (" + (hit.length - shown.length) + " left)")
    : null;
  document.getElementById("list").replaceChildren(el("table", { class: "episodes" },
    el("thead", {}, el("tr", {}, ["run", "seed", "rollout", "score", "success", "steps", "actions", "status"].map((h) => el("th", {}, h)))),
    el("tbody", {}, shown.map((e) => el("tr", { class: "ep-row", data: { i: e.i } },
      el("td", { title: e.run.label }, el("a", { href: epHash(e) }, e.run.short)), el("td", {}, e.seed), el("td", {}, e.rollout),
      el("td", { style: "background:" + scoreColor(e.score) }, fmt(e.score)), el("td", {}, e.success ? "yes" : "no"),
      el("td", {}, e.steps), el("td", {}, stripOf(codeCells(e.strip))),
      el("td", { class: "status " + (e.status === "failed" ? "bad" : "") }, endBadge(e) || e.status,
        e.error ? ": " + e.error : ""))))), ...(more ? [more] : []));
}
