// Two runs side by side on one seed and rollout: steps aligned by t, the first step where
// their actions differ marked, and line diffs of their prompts and memories at each step.
"use strict";

const DIFF_CELLS = 250000; // past this many line pairs the middle of a diff is shown replaced
const CONTEXT = 3;

function lcsOps(a, b) {
  const n = a.length, m = b.length;
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push([" ", a[i]]); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push(["-", a[i++]]);
    else out.push(["+", b[j++]]);
  }
  while (i < n) out.push(["-", a[i++]]);
  while (j < m) out.push(["+", b[j++]]);
  return out;
}

/** A line diff of a to b: [op, line] with op " " (both), "-" (only a) or "+" (only b). */
function lineDiff(a, b) {
  const A = (a || "").split("\n"), B = (b || "").split("\n");
  let p = 0;
  while (p < A.length && p < B.length && A[p] === B[p]) p++;
  let s = 0;
  while (s < A.length - p && s < B.length - p && A[A.length - 1 - s] === B[B.length - 1 - s]) s++;
  const a2 = A.slice(p, A.length - s), b2 = B.slice(p, B.length - s);
  const mid = a2.length * b2.length > DIFF_CELLS
    ? [...a2.map((l) => ["-", l]), ...b2.map((l) => ["+", l])] : lcsOps(a2, b2);
  return [...A.slice(0, p).map((l) => [" ", l]), ...mid, ...A.slice(A.length - s).map((l) => [" ", l])];
}

function diffCounts(ops) {
  let add = 0, del = 0;
  for (const [op] of ops) { if (op === "+") add++; else if (op === "-") del++; }
  return { add, del };
}

function diffView(ops, nameA, nameB) {
  const rows = [];
  let i = 0;
  while (i < ops.length) {
    if (ops[i][0] !== " ") { rows.push(el("div", { class: ops[i][0] === "+" ? "add" : "del" }, ops[i][0] + " " + ops[i][1])); i++; continue; }
    let j = i;
    while (j < ops.length && ops[j][0] === " ") j++;
    const run = ops.slice(i, j);
    const head = i === 0 ? 0 : CONTEXT, tail = j === ops.length ? 0 : CONTEXT;
    if (run.length > head + tail + 1) {
      run.slice(0, head).forEach(([, l]) => rows.push(el("div", {}, "  " + l)));
      rows.push(el("div", { class: "skip" }, "… " + (run.length - head - tail) + " lines the same …"));
      run.slice(run.length - tail).forEach(([, l]) => rows.push(el("div", {}, "  " + l)));
    } else run.forEach(([, l]) => rows.push(el("div", {}, "  " + l)));
    i = j;
  }
  return el("div", { class: "diff" }, el("div", { class: "skip" }, "− " + nameA + "   + " + nameB), rows);
}

function firstDivergence(ts, ma, mb) {
  return ts.find((t) => { const x = ma.get(t), y = mb.get(t); return !x || !y || x.action !== y.action; });
}

function actionCell(st, cls) {
  if (!st) return el("td", { class: "act " + cls }, el("span", { class: "meta" }, "(episode over)"));
  return el("td", { class: "act " + cls }, el("span", { class: "action" }, st.action), badges(st));
}

function deltaButton(label, ops, detail) {
  const { add, del } = diffCounts(ops);
  const text = add || del ? "+" + add + " −" + del : "same";
  return el("button", { type: "button", class: "link " + label, title: label + " diff: lines only in B (+) and only in A (−)",
    onclick: detail }, text);
}

function compareRow(t, x, y, first, names, tbody) {
  const same = x && y && x.action === y.action;
  const cls = "step-row " + (same ? "same" : "differ") + (t === first ? " first-divergence" : "");
  const tr = el("tr", { class: cls, data: { t } });
  let open = null;
  const show = (kind, make) => () => {
    if (open) { open.row.remove(); if (open.kind === kind) { open = null; return; } }
    const row = el("tr", { class: "detail", data: { t, kind } }, el("td", { colspan: 6 }, make()));
    tr.after(row);
    open = { row, kind };
  };
  const prompts = lineDiff(x ? promptText(x) : "", y ? promptText(y) : "");
  const memories = lineDiff(x ? x.memory : "", y ? y.memory : "");
  tr.append(el("td", {}, String(t)), actionCell(x, "act-a"), actionCell(y, "act-b"),
    el("td", { class: "d" }, deltaButton("prompt", prompts, show("prompt", () => diffView(prompts, names[0], names[1])))),
    el("td", { class: "d" }, deltaButton("memory", memories, show("memory", () => diffView(memories, names[0], names[1])))),
    el("td", { class: "d" }, el("button", { type: "button", class: "link replies", onclick: show("replies", () =>
      el("div", { class: "two" }, [x, y].map((st, k) => el("div", {}, el("p", { class: "label" }, names[k] + ": reply"),
        el("pre", {}, st ? st.reply : "(episode over)"), st ? promptToggle(st) : null)))) }, "replies")));
  tbody.append(tr);
  return tr;
}

async function showCompare(app, aName, bName, seed, rollout) {
  const token = ++renderToken;
  const A = findRun(aName), B = findRun(bName);
  const ea = A && findEp(A, seed, rollout), eb = B && findEp(B, seed, rollout);
  const form = compareForm({ a: A && A.id, b: B && B.id, seed, rollout });
  const body = el("div", { id: "compare" }, el("p", { class: "meta" }, "loading…"));
  app.replaceChildren(navBar(), form, body);
  if (!ea || !eb) {
    body.replaceChildren(el("p", { class: "bad", id: "missing" }, "This page has no episode of "
      + (!ea ? "run " + aName : "run " + bName) + " at seed " + seed + ", rollout " + rollout + "."));
    return;
  }
  let da, db;
  try { [da, db] = await Promise.all([loadEpisode(ea), loadEpisode(eb)]); } catch (e) { body.replaceChildren(el("p", { class: "bad" }, e.message)); return; }
  if (token !== renderToken) return;
  const ma = new Map(da.steps.map((s) => [s.t, s])), mb = new Map(db.steps.map((s) => [s.t, s]));
  const ts = [...new Set([...ma.keys(), ...mb.keys()])].sort((x, y) => x - y);
  const first = firstDivergence(ts, ma, mb);
  const names = ["A " + A.short, "B " + B.short];
  const headline = first === undefined
    ? "The two runs take the same action at every one of their " + ts.length + " steps."
    : "Their actions first differ at step " + first + ": A " + (ma.has(first) ? "«" + ma.get(first).action + "»" : "(over)")
      + ", B " + (mb.has(first) ? "«" + mb.get(first).action + "»" : "(over)") + ".";
  const strips = [[names[0], ea, da], [names[1], eb, db]].map(([name, ep, d]) => {
    const s = stripOf(dataCells(d.steps));
    const c = first === undefined ? null : s.querySelector('[data-t="' + first + '"]');
    if (c) c.classList.add("diverge");
    return el("div", {}, el("span", { class: "strip-name" }, name + " · score " + fmt(ep.score) + (ep.success ? " · success" : "") + "  "), s, " ", endBadge(ep));
  });
  const tbody = el("tbody", {});
  const rows = ts.map((t) => compareRow(t, ma.get(t), mb.get(t), first, names, tbody));
  body.replaceChildren(
    el("h1", {}, "seed " + seed + " · rollout " + rollout + ": " + A.short + " vs " + B.short),
    el("p", { id: "divergence", data: { t: first === undefined ? "" : first } }, headline),
    legend(), ...strips,
    el("p", { class: "meta" }, "rows aligned by step; + lines are only in B's text, − only in A's; click a count to see the diff"),
    el("table", { class: "compare" },
      el("colgroup", {}, el("col", { class: "t" }), el("col", {}), el("col", {}), el("col", { class: "d" }), el("col", { class: "d" }), el("col", { class: "d" })),
      el("thead", {}, el("tr", {}, el("th", {}, "step"), el("th", {}, names[0]), el("th", {}, names[1]),
        el("th", {}, "prompt Δ"), el("th", {}, "memory Δ"), el("th", {}, ""))),
      tbody));
  const at = rows[ts.indexOf(first)];
  if (at) at.querySelector("button.prompt").click(); // the first divergence opens on its prompt diff
}
