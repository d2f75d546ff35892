"""Seed 003's leak check: no prompt holds a privileged string not yet observed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from statelab_seed003.analysis.measures import MIN_SECRET


# -- the leak check -----------------------------------------------------------------------
def _norm(text: str) -> str:
    return " ".join(text.lower().split())


_PAREN = re.compile(r" \(.*\)$")


def privileged_strings(priv: Mapping[str, Any]) -> list[str]:
    """The strings of a privileged view a prompt must not hold before they are observed:
    the recipe's ingredient and direction lines, where each needed item is ("<item> <place>"),
    and the commands of the optimal plan (a*, policy, walkthrough)."""
    out: list[str] = []
    recipe = priv.get("recipe")
    if isinstance(recipe, str) and "Ingredients:" in recipe:
        body = recipe.split("Ingredients:", 1)[1].replace("Directions:", "\n")
        out += [ln.strip() for ln in body.splitlines() if ln.strip()]
    where = priv.get("where")
    if isinstance(where, Mapping):
        out += [f"{item} {_PAREN.sub('', str(place))}" for item, place in where.items()]
    for key in ("a_star", "policy", "walkthrough"):
        v = priv.get(key)
        out += [v] if isinstance(v, str) else [c for c in (v or ()) if isinstance(c, str)]
    seen: dict[str, None] = {}
    for s in out:
        if len(s.strip()) >= MIN_SECRET:
            seen.setdefault(s.strip(), None)
    return list(seen)


def find_leaks(prompt: str, observed: str, secrets: Iterable[str]) -> list[str]:
    """The secrets in ``prompt`` that ``observed`` (everything shown so far) does not hold
    (case and whitespace ignored)."""
    p, o = _norm(prompt), _norm(observed)
    return [s for s in secrets if _norm(s) in p and _norm(s) not in o]


def _observed(obs: Any) -> str:
    return "\n".join([obs.text, *(obs.admissible or ()), obs.goal])


def _messages_text(raw: str) -> str:
    msgs = json.loads(raw or "[]")
    parts = []
    for m in msgs:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):
            parts += [p.get("text", "") for p in c if isinstance(p, dict)]
    return "\n".join(parts)


def leak_check(store: Any, run: str, seed: int, rollout: int = 0) -> list[dict[str, Any]]:
    """Every leak in the stored episode's prompts: ``{t, call, secret}`` (empty: clean)."""
    from statelab.envs import make_env
    from statelab.run.replay import replay, spec_of
    from statelab.run.store import Store

    st = store if isinstance(store, Store) else Store(store, readonly=True)
    try:
        manual = make_env(spec_of({"spec": st.run_spec(run)}).env).manual  # public: the manual
        rows = [
            (c["t"], c["i"], c["messages"])
            for c in st.episode_calls(run, seed, rollout, ["t", "i", "messages"])
        ]
        agent_calls = {
            s["t"]: s["agent_calls"]
            for s in st.episode_steps(run, seed, rollout, ["t", "agent_calls"])
        }
        steps = list(replay(st, run, seed, rollout))
    finally:
        if st is not store:
            st.close()
    by_t: dict[int, list[tuple[int, str]]] = {}
    for t, i, msgs in rows:
        by_t.setdefault(int(t), []).append((int(i), msgs))
    leaks: list[dict[str, Any]] = []
    observed: list[str] = [manual]
    for k, step in enumerate(steps):
        info = step.privileged.info
        if k == 0:
            observed += [_observed(o) for _, o in info.get("prelude", ())]
        observed.append(_observed(step.observation))
        secrets = privileged_strings(info.get("privileged", {}))
        n_agent = int(agent_calls.get(step.t) or 0)
        for i, msgs in by_t.get(step.t, []):
            seen = observed + ([_observed(step.next_observation)] if i >= n_agent else [])
            for s in find_leaks(_messages_text(msgs), "\n".join(seen), secrets):
                leaks.append({"t": step.t, "call": i, "secret": s})
        observed.append(_observed(step.next_observation))
    return leaks
