"""Offline tool descriptions (seed 001, section 4.3 and appendix A.1).

Each tool of the library (a five-letter action sequence) is described once, offline, by the
model that will later choose among the tools. Two forms:

- ``long``: strategy, risks with respect to the moving cars, and when to use it;
- ``short``: a one-line strategy (used when the collision check is on: collision and timing
  are then handled in code, so the description only has to say where the tool goes).

The geometry is never left to the model: every description starts with the tool's exact net
displacement and action list, computed here (:func:`exact_text`), so even a weak model's
description carries the true geometry; the model's words follow. Inputs are deterministic
(one seeded request per tool), and :func:`cached_descriptions` keeps the results on disk
next to the library, keyed by the model id, the library and the request parameters: a
second build makes no model call.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from statelab.core import LLM, GenParams, Message
from statelab.envs.traffic_world import DELTAS

#: bump when the prompts change: cached descriptions of another version are not reused
PROMPT_VERSION = 2
#: a description line longer than this is cut at a word (weak models ramble)
MAX_LINE = 240
FORMS = ("long", "short")
#: generation budget of one description, per form
MAX_TOKENS = {"long": 160, "short": 48}

_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_MOVES = {"U": "up", "D": "down", "L": "left", "R": "right"}
_TIMES = {1: "once", 2: "twice"}

LIBRARY_HEADER = (
    "Each tool is a list of actions that affect the position of the agent. When a tool is "
    "selected all its actions are implemented until collision, reaching the goal, or "
    "exhaustion of the list. Each tool is named by its actions, one letter per step: "
    "U=up (-1,0), D=down (1,0), L=left (0,-1), R=right (0,1), W=wait (0,0)."
)

_SYSTEM = (
    "You write short descriptions of movement tools for an agent on a grid. Cells are "
    "(row, column); rows grow downward. Cars move up one row per time step and wrap from the "
    "top row to the bottom row; the agent is hit if a car enters its cell or swaps cells with "
    "it. The agent sees only cells near it. A tool is a fixed list of five actions executed "
    "one per time step without looking."
)
_ASK = {
    "long": (
        "Describe this tool in exactly three lines:\n"
        "strategy: <what the movement pattern does, in one sentence>\n"
        "risks: <when it could be hit by a car or hit the grid edge, in one sentence>\n"
        "when to use: <in which situation to choose it, in one sentence>"
    ),
    "short": "Describe this tool in one line:\nstrategy: <what the movement does, a few words>",
}
_FIELDS = {"long": ("strategy", "risks", "when to use"), "short": ("strategy",)}


def _count(n: int, unit: str) -> str:
    return f"{_NUMBERS[n] if n < len(_NUMBERS) else n} {unit}{'s' * (n != 1)}"


def displacement_text(actions: str) -> str:
    """The exact net displacement of ``actions`` in words ("three rows down and two columns
    to the right", "one row up, no sideways change", "no movement"); walls are ignored."""
    dr = sum(DELTAS[a][0] for a in actions)
    dc = sum(DELTAS[a][1] for a in actions)
    rows = _count(abs(dr), "row") + (" down" if dr > 0 else " up")
    cols = _count(abs(dc), "column") + (" to the right" if dc > 0 else " to the left")
    if dr and dc:
        return f"{rows} and {cols}"
    if dr:
        return f"{rows}, no sideways change"
    if dc:
        return f"{cols}, no row change"
    return "no movement"


def action_list_text(actions: str) -> str:
    """The actions as runs in words ("down twice, then right once, then down twice",
    "up once, then hold four steps", "hold five steps")."""
    runs: list[tuple[str, int]] = []
    for a in actions:
        if runs and runs[-1][0] == a:
            runs[-1] = (a, runs[-1][1] + 1)
        else:
            runs.append((a, 1))
    words = [
        f"hold {_count(n, 'step')}"
        if a == "W"
        else f"{_MOVES[a]} {_TIMES.get(n, _count(n, 'time').removeprefix('no '))}"
        for a, n in runs
    ]
    return ", then ".join(words)


def exact_text(actions: str) -> str:
    """The part of every description computed by code: displacement and action list."""
    return (
        f"total displacement: {displacement_text(actions)}\n"
        f"action list: {action_list_text(actions)}"
    )


def describe_messages(name: str, form: str) -> list[Message]:
    """The offline request describing tool ``name`` (its letters are its actions)."""
    if form not in FORMS:
        raise ValueError(f"description form {form!r}; allowed: {', '.join(FORMS)}")
    user = f"Tool {name}\n{exact_text(name)}\n\n{_ASK[form]}"
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def _cut(text: str) -> str:
    if len(text) <= MAX_LINE:
        return text
    return text[: MAX_LINE - 4].rsplit(" ", 1)[0].rstrip(" ,;:") + " ..."


def clean(text: str, form: str) -> str:
    """The model's description as ``field: value`` lines (the fields of ``form``), one line
    each, cut to :data:`MAX_LINE` characters; a reply without any field becomes the strategy
    line (first line, whitespace collapsed); an empty reply becomes
    ``strategy: (no description)``."""
    fields = _FIELDS[form]
    found: dict[str, str] = {}
    pattern = re.compile(r"^\W*(" + "|".join(map(re.escape, fields)) + r")\W*:\s*(.*)$", re.I)
    for line in text.splitlines():
        m = pattern.match(line.strip())
        if m and m.group(1).lower() not in found and m.group(2).strip():
            found[m.group(1).lower()] = " ".join(m.group(2).split())
    if not found:
        first = next((" ".join(ln.split()) for ln in text.splitlines() if ln.strip()), "")
        found["strategy"] = first or "(no description)"
    return "\n".join(f"{f}: {_cut(found[f])}" for f in fields if f in found)


def describe_params(params: GenParams, form: str, seed: int, index: int) -> GenParams:
    """Request parameters of one description: the run's sampling, the form's budget, a seed
    derived from the library's sampling seed and the tool's position."""
    return replace(
        params,
        max_tokens=MAX_TOKENS[form],
        stop=(),
        choices=None,
        choice_prefix="",
        seed=seed * 1000 + index,
    )


async def describe(
    tools: Sequence[str],
    llm: LLM,
    form: str = "long",
    params: GenParams | None = None,
    seed: int = 0,
) -> dict[str, str]:
    """Describe every tool with ``llm`` (one call per tool): exact geometry, then the model's
    words. Returns ``{tool: description}`` in the order of ``tools``."""
    base = params or GenParams()
    out: dict[str, str] = {}
    for i, name in enumerate(tools):
        completion = await llm.complete(
            describe_messages(name, form), describe_params(base, form, seed, i)
        )
        out[name] = f"{exact_text(name)}\n{clean(completion.text, form)}"
    return out


def descriptions_key(
    model_id: str, library_key: str, form: str, params: GenParams, seed: int
) -> str:
    """Cache key of a description set: model, library, form, sampling, prompt version."""
    body = json.dumps(
        {
            "model": model_id,
            "library": library_key,
            "form": form,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": seed,
            "version": PROMPT_VERSION,
        },
        sort_keys=True,
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def write_json(path: Path, data: object) -> None:
    """Write JSON atomically (a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


async def cached_descriptions(
    directory: Path,
    library_key: str,
    tools: Sequence[str],
    llm: LLM,
    form: str,
    params: GenParams | None = None,
    seed: int = 0,
) -> dict[str, str]:
    """:func:`describe`, cached in ``directory`` (the library's folder) as
    ``descriptions-<form>-<key>.json``; a cached set missing a tool is rebuilt."""
    base = params or GenParams()
    key = descriptions_key(llm.model_id, library_key, form, base, seed)
    path = directory / f"descriptions-{form}-{key}.json"
    if path.is_file():
        data = json.loads(path.read_text())
        found = data.get("descriptions", {})
        if all(t in found for t in tools):
            return {t: str(found[t]) for t in tools}
    out = await describe(tools, llm, form, base, seed)
    write_json(
        path,
        {"model": llm.model_id, "library": library_key, "form": form, "descriptions": out},
    )
    return out


def tool_block(name: str, description: str) -> str:
    """One tool as the seed's appendix A.1 lays it out."""
    bar = "=" * 20
    return f"{bar} tool {name} {bar}\n{description}\n{bar} end description tool {name} {bar}"


def library_text(names: Sequence[str], descriptions: dict[str, str]) -> str:
    """The header, then one block per tool of ``names``."""
    blocks = "\n\n".join(tool_block(n, descriptions.get(n, exact_text(n))) for n in names)
    return f"{LIBRARY_HEADER}\n\nAvailable tools are:\n\n{blocks}"
