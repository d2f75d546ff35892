// One episode: its action strip (with its loops), its figures, its steps, and on demand the
// acting prompt of a step and every model call it made (prompt and reply).
"use strict";

let renderToken = 0; // a view drawn after an await checks that no other view started meanwhile

function stepBits(st) {
  let b = 0;
  if (!st.valid) b |= BITS.invalid;
  if (!st.parsed) b |= BITS.unparsed;
  if (st.reward > 0) b |= BITS.reward;
  if (st.reward < 0) b |= BITS.penalty;
  if (st.queries.length) b |= BITS.query;
  if (st.meta && st.meta.rejected) b |= BITS.rejected;
  return b;
}
/** A step's loop marks (repeat: the action of the step before; revisit: back to an earlier
 * state), from its data. */
function stepMarks(st) {
  return (st.repeat > 1 ? MARKS.repeat : 0) | (st.back !== null && st.back !== undefined ? MARKS.revisit : 0);
}
/** What a step's loop marks say: how long its run of one action is, where it returns to. */
function loopNote(st) {
  const out = [];
  if (st.repeat > 1) out.push("the same action as the " + (st.repeat === 2 ? "step" : (st.repeat - 1) + " steps") + " before (" + st.repeat + " in a row)");
  if (st.back !== null && st.back !== undefined) {
    const what = st.back_by === "observation" ? "observation" : "state";
    out.push(st.back === st.t - 1 ? "no change: the " + what + " after step " + st.back + " again"
      : st.back === 0 ? "back to the start " + what + " (a loop of " + st.t + " steps)"
      : "back to the " + what + " after step " + st.back + " (a loop of " + (st.t - st.back) + " steps)");
  }
  return out.join("; ");
}
function dataCells(steps) { return steps.map((st) => ({ t: st.t, bits: stepBits(st), marks: stepMarks(st), note: loopNote(st) })); }

/** The acting calls of a step (the agent's; the memory writer's and others' follow). */
function actingCalls(st) { return st.calls.slice(0, st.agent_calls); }

/** The whole acting prompt as one text (every message of every acting call), else the view. */
function promptText(st) {
  const calls = actingCalls(st);
  if (!calls.length) return st.view;
  return calls.map((c, k) => (calls.length > 1 ? "=== acting call " + (k + 1) + " ===\n" : "")
    + c.messages.map((m) => "--- " + m.role + " ---\n" + m.content).join("\n")).join("\n");
}

function promptBlock(st) {
  const calls = actingCalls(st);
  if (!calls.length) return [el("p", { class: "meta" }, "no model call at this step: the prompt view above is all it saw")];
  return calls.map((c, k) => el("div", { class: "prompt" },
    el("p", { class: "label" }, "acting call " + (k + 1) + " of " + calls.length + ": " + c.messages.length
      + " messages, " + c.in + " tokens in, " + c.out + " out" + (c.cached ? " (from the cache)" : "")),
    c.messages.map((m) => [el("div", { class: "msg-role" }, m.role), el("pre", { class: "msg" }, m.content)]),
    el("p", { class: "label" }, "its reply"), el("pre", {}, c.text)));
}

function section(label, text) { return text ? [el("p", { class: "label" }, label), el("pre", {}, text)] : null; }

function badges(st) {
  const rej = (st.meta && st.meta.rejected) || [];
  return [
    st.valid ? null : el("span", { class: "badge bad" }, "invalid"),
    st.parsed ? null : el("span", { class: "badge bad" }, "unparsed reply"),
    st.reward ? el("span", { class: "badge " + (st.reward > 0 ? "rew" : "bad") }, "reward " + fmt(st.reward)) : null,
    st.queries.length ? el("span", { class: "badge q" }, st.queries.length + " world-model " + (st.queries.length > 1 ? "queries" : "query")) : null,
    rej.length ? el("span", { class: "badge rej" }, rej.length + " rejected") : null,
    st.repeat > 1 ? el("span", { class: "badge loop repeat", title: loopNote(st) }, "repeat ×" + st.repeat) : null,
    st.back !== null && st.back !== undefined ? el("span", { class: "badge loop revisit", title: loopNote(st) },
      st.back === 0 ? "back to start" : "back to t=" + st.back) : null,
  ];
}

function promptToggle(st) {
  const holder = el("div", { class: "prompt-holder" });
  const n = actingCalls(st).reduce((s, c) => s + c.messages.length, 0);
  const label = "show the acting prompt (" + n + " message" + (n === 1 ? "" : "s") + ")";
  const btn = el("button", { type: "button", class: "show-prompt" }, label);
  btn.addEventListener("click", () => {
    const open = holder.firstChild !== null;
    holder.replaceChildren(...(open ? [] : promptBlock(st)));
    btn.textContent = open ? label : "hide the acting prompt";
  });
  return [btn, holder];
}

/** What a call was: its kind, tokens, model time, decoding, cost, whether from the cache. */
function callLine(c, k, n) {
  return "call " + (k + 1) + " of " + n + ": " + c.kind + " · " + c.in + " tokens in, " + c.out + " out · "
    + fmtSec(c.latency) + " · decoding " + (c.decoding || "not recorded") + " · " + fmtCost(c.cost)
    + (c.cached ? " · from the cache" : "");
}

/** Every model call of a step (acting, the memory writer's, a world model's ...): each opens
 * on its prompt (every message) and its reply. */
function callsBlock(st) {
  if (!st.calls.length) return [el("p", { class: "meta" }, "no model call at this step")];
  return st.calls.map((c, k) => {
    const d = el("details", { class: "call " + (k < st.agent_calls ? "acting" : "aux"), data: { kind: c.kind, i: c.i } },
      el("summary", {}, callLine(c, k, st.calls.length)));
    d.addEventListener("toggle", () => {
      if (!d.open || d.childNodes.length > 1) return;
      d.append(el("div", { class: "call-body" },
        el("p", { class: "label" }, "its prompt: " + c.messages.length + " message" + (c.messages.length === 1 ? "" : "s")),
        c.messages.map((m) => [el("div", { class: "msg-role" }, m.role), el("pre", { class: "msg" }, m.content)]),
        el("p", { class: "label" }, "its reply"), el("pre", { class: "reply" }, c.text)));
    });
    return d;
  });
}

function callsToggle(st) {
  const holder = el("div", { class: "calls-holder" });
  const label = "show every model call (" + st.calls.length + ")";
  const btn = el("button", { type: "button", class: "show-calls" }, label);
  btn.addEventListener("click", () => {
    const open = holder.firstChild !== null;
    holder.replaceChildren(...(open ? [] : callsBlock(st)));
    btn.textContent = open ? label : "hide the model calls";
  });
  return [btn, " ", holder];
}

function stepBody(st) {
  const meta = Object.assign({}, st.meta);
  const rejected = meta.rejected || [];
  delete meta.rejected;
  return el("div", { class: "body" },
    section("reply", st.reply),
    rejected.length ? [el("p", { class: "label" }, "rejected proposals"),
      el("ul", {}, rejected.map((r) => el("li", {}, String(r.action || "") + ": " + String(r.feedback || ""))))] : null,
    st.queries.length ? [el("p", { class: "label" }, "world-model queries"),
      el("ul", {}, st.queries.map((q) => el("li", {}, q.query, " → ", q.answer)))] : null,
    section("observation after the step", st.observation),
    section("memory after the step", st.memory),
    section("prompt view (the state part of the prompt)", st.view),
    section("grounding", st.grounding),
    st.calls.slice(st.agent_calls).map((c) => section(c.kind + " call (" + c.in + " tokens in): its reply", c.text)),
    Object.keys(meta).length ? section("component metadata", JSON.stringify(meta, null, 1)) : null,
    promptToggle(st), " ", callsToggle(st));
}

function stepBlock(st) {
  const d = el("details", { class: "step", data: { t: st.t } }, el("summary", {},
    "t=" + st.t + " ", el("b", { class: "action" }, st.action), badges(st),
    el("span", { class: "meta" }, " · in " + st.tokens[0] + " / out " + st.tokens[1] + " tokens" + (st.tokens[2] ? ", aux in " + st.tokens[2] : "")
      + (st.latency ? " · " + fmtSec(st.latency) : ""))));
  d.addEventListener("toggle", () => { if (d.open && d.childNodes.length === 1) d.append(stepBody(st)); });
  return d;
}

function epLine(ep) {
  return "status " + ep.status + (ep.reason ? " (" + ep.reason + ")" : "") + " · score " + fmt(ep.score)
    + " · success " + (ep.success ? "yes" : "no") + " · " + ep.steps + " steps" + (ep.error ? " · " + ep.error : "");
}

/** The episode's figures: tokens, cost, model time, decoding, calls, loops. */
function figuresLine(ep) {
  if (ep.tokensIn === null) return null;
  return el("p", { class: "meta", id: "ep-figures" },
    "tokens " + ep.tokensIn + " in / " + ep.tokensOut + " out · cost " + fmtCost(ep.cost)
    + " · model time " + fmtSec(ep.latency) + " · decoding " + (ep.decoding || "not recorded")
    + (ep.decodingDetail ? " (" + ep.decodingDetail + ")" : "") + " · " + ep.calls + " calls, " + ep.cached + " from the cache"
    + " · longest repeat ×" + ep.longestRepeat + " · " + ep.revisits + " return" + (ep.revisits === 1 ? "" : "s") + " to an earlier state");
}

/** The text a search in an episode looks through, lowercased. */
function stepHaystack(st) {
  return [st.action, st.reply, st.observation, st.memory, st.view, promptText(st),
    ...st.queries.map((q) => q.query + "\n" + q.answer)].join("\n").toLowerCase();
}

function findBox(steps, blocks, strip) {
  const found = el("span", { class: "meta", id: "ep-found" });
  const input = el("input", { type: "search", id: "ep-find", placeholder: "find in this episode (any text of a step)" });
  const hay = new Map();
  input.addEventListener("input", () => {
    const q = input.value.trim().toLowerCase();
    let n = 0;
    steps.forEach((st, i) => {
      if (q && !hay.has(i)) hay.set(i, stepHaystack(st));
      const hit = q !== "" && hay.get(i).includes(q);
      n += hit;
      blocks[i].classList.toggle("found", hit);
      const cell = strip.querySelector('[data-t="' + st.t + '"]');
      if (cell) cell.classList.toggle("found", hit);
    });
    found.textContent = q ? n + " of " + steps.length + " steps hold it" : "";
  });
  return el("p", {}, input, " ", found);
}

async function showEpisode(app, runName, seed, rollout) {
  const token = ++renderToken;
  const run = findRun(runName);
  const ep = run && findEp(run, seed, rollout);
  if (!ep) {
    app.replaceChildren(navBar(), el("p", { class: "bad", id: "missing" },
      "This page has no episode of run " + runName + ", seed " + seed + ", rollout " + rollout + "."));
    return;
  }
  const others = RUNS.filter((r) => r !== run && findEp(r, seed, rollout));
  const vs = el("select", { id: "ep-vs" }, others.map((r) => el("option", { value: r.id }, r.short)));
  const compare = others.length ? [" · compare with ", vs, " ", el("button", { type: "button", id: "ep-compare",
    onclick: () => { location.hash = hashOf({ run: run.id, vs: vs.value, seed, rollout }); } }, "side by side")] : null;
  const body = el("div", { id: "episode" }, el("p", { class: "meta" }, "loading…"));
  app.replaceChildren(navBar(compare), el("h1", {}, run.short + " · seed " + seed + " · rollout " + rollout, endBadge(ep)),
    el("p", { class: "meta" }, run.label), el("p", { class: "meta", id: "ep-line" }, epLine(ep)), figuresLine(ep), body);
  let data;
  try { data = await loadEpisode(ep); } catch (e) { body.replaceChildren(el("p", { class: "bad" }, e.message)); return; }
  if (token !== renderToken) return;
  const blocks = data.steps.map(stepBlock);
  const pick = (t) => {
    const d = blocks.find((b) => b.dataset.t === String(t));
    if (d) { d.open = true; d.scrollIntoView({ block: "center" }); }
  };
  const strip = stripOf(dataCells(data.steps), pick);
  body.replaceChildren(legend(), el("div", { id: "ep-strip" }, strip, " ", endBadge(ep)), findBox(data.steps, blocks, strip),
    el("div", { id: "steps" }, blocks));
}
