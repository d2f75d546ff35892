"""Few-shot examples for the StateAct family, written by us from the env's expert.

Seed 002 prompts with two solved traces per task type (ReAct's ALFWorld examples, annotated
with goal and state by hand). We cannot ship those, so we make our own: the env's expert plays
seeds of the env's ``train`` split (never ``test``), and each turn is annotated from what the
builder, not the agent, may read: the goal, the privileged tracked state
(``info["privileged"]["tracked"]``: location, inventory, visited) or else the observation's
:class:`TextFacts`, and a templated thought. Traces are kept per task type
(``info["privileged"]["task_type"]`` when the env has one), at most ``per_type`` each, solved
within ``max_len`` steps.

Traces are cached as JSON under ``$STATELAB_CACHE/fewshot/`` (default
``~/.cache/statelab/fewshot/``), raw (observations, actions, states), and rendered at prompt
time in the exact output format of the agent variant. The agent picks the examples of the task
type whose goals are closest in words to the current goal (the goal alone: no privileged info).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from statelab.agents._turn import render_turn
from statelab.core import Env, task_type_of, tracked_of
from statelab.facts import TextFacts

#: 5: household games v5 (receptacles at ALFWorld's places); 4: train games never in the
#: unseen test rooms (games v3)
VERSION = 5
_LOCK = threading.Lock()
_MEMO: dict[str, list[Trace]] = {}
_STOP = {"a", "an", "the", "some", "in", "on", "to", "of", "and", "it", "put", "with", "then"}


@dataclass
class TraceStep:
    """One turn of an expert trace: what was observed, the state then, what was done."""

    observation: str
    action: str
    location: str | None = None
    inventory: list[str] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    state: str = ""
    #: the player's own thought (a searching expert's); None: a templated one is written
    thought: str | None = None


@dataclass
class Trace:
    """One expert episode of a train split, as the few-shot examples show it."""

    env: str
    seed: int
    goal: str
    task_type: str | None
    steps: list[TraceStep]


def cache_dir() -> Path:
    """Where expert traces are cached (``$STATELAB_CACHE/fewshot``, else ~/.cache)."""
    root = os.environ.get("STATELAB_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "statelab"
    return base / "fewshot"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _annotate(obs: Any, info: dict[str, Any], seen: list[str]) -> TraceStep:
    """The state at this observation, from the privileged tracked state or the facts."""
    tracked = tracked_of(info)
    facts = obs.facts
    if tracked is not None:
        loc = tracked.get("location")
        inv = [str(x) for x in tracked.get("inventory") or []]
        visited = [str(x) for x in tracked.get("visited") or []]
    elif isinstance(facts, TextFacts):
        loc, inv = facts.location, list(facts.inventory)
        if loc is not None and loc not in seen:
            seen.append(loc)
        visited = list(seen)
    else:
        loc, inv, visited = None, [], []
    return TraceStep(
        observation=obs.text,
        action="",
        location=None if loc is None else str(loc),
        inventory=inv,
        visited=visited,
        state=" ".join(str(obs.text).split()),
    )


def play_expert(
    env: Env, seed: int, name: str, max_len: int, skip: set[str | None] | None = None
) -> tuple[str | None, Trace | None]:
    """(task type, trace) of one expert episode on ``seed``; the trace is None unless solved
    within ``max_len`` steps, and not played when the task type is in ``skip``."""
    obs, info = env.reset(seed=seed)
    task_type = task_type_of(info)
    if skip is not None and task_type in skip:
        return task_type, None
    # an env may offer a player that searches as the few-shot expert (household)
    expert = env.fewshot_expert()
    steps: list[TraceStep] = []
    seen: list[str] = []
    goal = obs.goal or ""
    done = False
    while not done and len(steps) < max_len:
        step = _annotate(obs, info, seen)
        step.action = str(expert.act(obs, info))
        if hasattr(expert, "thought"):
            step.thought = str(expert.thought)
        steps.append(step)
        obs, _r, terminated, truncated, info = env.step(step.action)
        done = terminated or truncated
    if not (done and info.get("success")):
        return task_type, None
    return task_type, Trace(name, seed, goal, task_type, steps)


def build_traces(
    env: str | Callable[[], Env],
    per_type: int = 2,
    max_len: int = 30,
    max_scan: int = 60,
    patience: int = 20,
) -> list[Trace]:
    """Expert traces on train seeds, at most ``per_type`` per task type.

    Scans the train split in order, at most ``max_scan`` seeds, and stops early once every
    task type seen has its examples and ``patience`` seeds in a row brought no new type.
    An env without a train split gives no traces.
    """
    if isinstance(env, str):
        from statelab.envs import make_env

        name, instance = env, make_env(env)
    else:
        instance = env()
        name = type(instance).name
    train = type(instance).splits.get("train")
    if not train:
        return []
    counts: dict[str | None, int] = {}
    traces: list[Trace] = []
    quiet = 0
    for i, seed in enumerate(train):
        if i >= max_scan:
            break
        full = {t for t, n in counts.items() if n >= per_type}
        task_type, trace = play_expert(instance, seed, name, max_len, skip=full)
        quiet = quiet + 1 if task_type in counts else 0
        counts.setdefault(task_type, 0)
        if trace is not None and counts[task_type] < per_type:
            counts[task_type] += 1
            traces.append(trace)
        if all(n >= per_type for n in counts.values()) and quiet >= patience:
            break
    return traces


def cache_path(env: str, per_type: int, max_len: int) -> Path:
    return cache_dir() / f"{_slug(env)}-p{per_type}-l{max_len}-v{VERSION}.json"


def load_traces(env: str, per_type: int = 2, max_len: int = 30) -> list[Trace]:
    """The env's traces from the disk cache, built (and cached) on first use."""
    path = cache_path(env, per_type, max_len)
    key = str(path)
    with _LOCK:
        if key in _MEMO:
            return _MEMO[key]
        traces: list[Trace] | None = None
        if path.is_file():
            try:
                data = json.loads(path.read_text())
                traces = [
                    Trace(**{**t, "steps": [TraceStep(**s) for s in t["steps"]]})
                    for t in data["traces"]
                ]
            except (json.JSONDecodeError, KeyError, TypeError):
                traces = None
        if traces is None:
            traces = build_traces(env, per_type=per_type, max_len=max_len)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            body = {"version": VERSION, "env": env, "traces": [asdict(t) for t in traces]}
            tmp.write_text(json.dumps(body, indent=1))
            tmp.replace(path)
        _MEMO[key] = traces
        return traces


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP}


def _similarity(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def select(
    traces: list[Trace],
    goal: str,
    k: int = 2,
    type_of: Callable[[str], str | None] | None = None,
) -> list[Trace]:
    """The ``k`` examples for ``goal``. With ``type_of`` (the env's reading of a goal
    sentence's task type, e.g. household's templates) the examples of that type, as seed
    002's runner picks them; else those of the task type whose goals are closest in words
    (ties: the first type built). Topped up by the closest others."""
    if k <= 0 or not traces:
        return []
    types: dict[str | None, list[Trace]] = {}
    for t in traces:
        types.setdefault(t.task_type, []).append(t)
    named = type_of(goal) if type_of is not None else None
    if named in types:
        best = named
    else:
        best = max(types, key=lambda ty: max(_similarity(goal, t.goal) for t in types[ty]))
    chosen = sorted(types[best], key=lambda t: -_similarity(goal, t.goal))[:k]
    others = sorted(
        (t for t in traces if t not in chosen), key=lambda t: -_similarity(goal, t.goal)
    )
    return chosen + others[: k - len(chosen)]


def _item(entry: str) -> str:
    """An inventory entry without its count ("4 oak planks" -> "oak planks")."""
    return re.sub(r"^\d+\s+", "", entry.strip())


def _thought(i: int, goal: str, before: list[str], now: list[str], action: str) -> str:
    if i == 0:
        return f"To solve the task, I need to {goal.rstrip('.')}. First: {action}."
    had = {_item(x) for x in before}
    gained = [x for x in now if _item(x) not in had]
    if gained:
        return f"Now I have {', '.join(gained)}. Next: {action}."
    return ""


#: the anchor's name of the place an episode starts in (seed 002's examples)
START = "starting location"


def _reflection(goal: str, location: str | None, inventory: list[str], action: str) -> str:
    """ReflAct's reflection: the state relative to the goal (templated, as the thoughts are)."""
    where = f"I am at {location}" if location else "I am here"
    held = ", ".join(inventory) or "nothing"
    return f"{where}, holding {held}; the goal is to {goal.rstrip('.')}, so next: {action}."


def render_trace(trace: Trace, keys: tuple[str, ...], fmt: str = "text") -> str:
    """A trace as observations and turns, each turn in the agent variant's output format
    (``react``: ReAct's original lines, ``> think: ...`` answered ``OK.``).

    States follow the anchor's field conventions: "locations visited" includes the current
    location, and the place an episode starts in is "starting location"."""
    parts: list[str] = []
    before: list[str] = []
    for i, s in enumerate(trace.steps):
        at = s.location if s.location and s.location != "middle of room" else START
        thought = s.thought
        if thought is None:
            thought = _thought(i, trace.goal, before, s.inventory, s.action)
        values = {
            "goal": trace.goal.rstrip("."),
            "locations visited": ", ".join(s.visited),
            "current location": at,
            "current inventory": ", ".join(s.inventory),
            "current state": s.state,
            "thought": thought,
            "reflection": _reflection(trace.goal, s.location, s.inventory, s.action),
            "action": s.action,
        }
        if fmt == "react":
            parts.append(s.observation.strip())
            if thought:
                parts += [f"> think: {thought}", "OK."]
            parts.append(f"> {s.action}")
        else:
            parts.append(s.observation.strip())
            parts.append(render_turn(values, keys, fmt))
        before = s.inventory
    return ("\n" if fmt == "react" else "\n\n").join(parts)


def _type_reader(env: str) -> Callable[[str], str | None] | None:
    """The env's reading of a goal's task type (``task_type_of_goal``), if it has one."""
    from statelab.core import ConfigError
    from statelab.envs import make_env

    try:
        cls = type(make_env(env))
    except ConfigError:  # not a registered env (a builder given directly)
        return None
    return cls.task_type_of_goal if cls.reads_goal_types() else None


def examples_block(
    env: str, goal: str, keys: tuple[str, ...], fmt: str = "text", k: int = 2
) -> str:
    """The few-shot part of the prompt's head ('' when the env has no train split)."""
    chosen = select(load_traces(env), goal, k, _type_reader(env))
    if not chosen:
        return ""
    body = "\n\n".join(render_trace(t, keys, fmt) for t in chosen)
    n = len(chosen)
    intro = "Here is 1 example:" if n == 1 else f"Here are {n} examples:"
    return f"{intro}\n\n{body}\n\nHere is the task."


__all__ = [
    "Trace",
    "TraceStep",
    "build_traces",
    "cache_dir",
    "examples_block",
    "load_traces",
    "render_trace",
    "select",
]
