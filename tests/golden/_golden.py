"""Golden episodes: every env x the agents, histories, formats and groundings that apply,
played with scripted models (free and constrained) and the experts, recorded as fixtures.

A refactor changes no result: ``python -m tests.golden.record`` (re)writes the fixture, and
``test_golden.py`` replays every case and compares prompts, replies, actions, observations,
memories and scores. Only a change of behaviour made on purpose re-records it, and the
commit says which cases changed.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from statelab.core import LLM, Completion, GenParams, Message, Usage

FIXTURE = Path(__file__).with_name("episodes.json.gz")
SEEDS = (0, 1)
MAX_STEPS = 5

#: (env, agent, history, format, grounding, model kind); model kind "free" | "constrained" | "-"
CASES: list[tuple[str, str, str, str, str, str]] = [
    # seed 000: granularity, structure, grounding
    ("hanoi", "act", "full", "default", "none", "free"),
    ("hanoi", "act", "full", "default", "none", "constrained"),
    ("hanoi", "act", "window:2", "dict-list", "none", "constrained"),
    ("hanoi", "act", "summary", "tagged-list", "none", "constrained"),
    ("hanoi", "act", "oracle-summary", "natural", "none", "free"),
    ("hanoi", "act:logprob", "full", "matrix", "none", "free"),
    ("hanoi", "act", "full", "default", "vot", "constrained"),
    ("hanoi", "act", "full", "default", "oracle-vot", "free"),
    ("hanoi", "react", "full", "default", "none", "free"),
    ("hanoi", "stateact", "summary", "default", "none", "constrained"),
    ("messenger", "act", "full", "default", "none", "constrained"),
    ("messenger", "act", "summary", "natural-pos", "none", "free"),
    ("messenger", "act", "oracle-summary", "symbolic", "oracle-vot", "free"),
    ("messenger", "act", "window:3", "coordinates", "vot", "free"),
    ("babyai/goto", "act", "full", "default", "none", "constrained"),
    ("babyai/open", "act", "summary", "symbolic", "none", "free"),
    ("babyai/pickup", "act", "oracle-summary", "matrix", "oracle-vot", "constrained"),
    ("babyai/putnext", "stateact", "full", "default", "none", "free"),
    ("babyai/pickup-seq-goto", "react", "window:2", "default", "none", "constrained"),
    # seed 001: tools
    ("traffic", "act", "full", "default", "none", "constrained"),
    ("traffic", "plan:5", "full", "default", "none", "free"),
    ("traffic", "tools", "full", "default", "none", "free"),
    ("traffic", "tools:cc+short", "window:2", "default", "zoom:text", "free"),
    ("traffic", "act", "summary", "coordinates", "zoom:text", "constrained"),
    # seed 002: StateAct family
    ("textcraft", "stateact", "full", "default", "none", "free"),
    ("textcraft", "react", "full", "default", "none", "constrained"),
    ("textcraft", "stateact:none", "window:2", "default", "none", "free"),
    ("textcraft", "adapt:stateact", "full", "default", "none", "free"),
    ("household", "stateact", "full", "default", "none", "free"),
    ("household", "stateact:all/json", "full", "default", "none", "constrained"),
    ("household", "react", "summary", "default", "none", "free"),
    ("household", "act", "full", "default", "none", "constrained"),
]
EXPERT_ENVS = (
    "hanoi",
    "messenger",
    "babyai/goto",
    "babyai/open",
    "babyai/pickup",
    "babyai/putnext",
    "babyai/pickup-seq-goto",
    "traffic",
    "textcraft",
    "household",
)

#: generic replies the scripted models cycle through (free text and every agent's fields)
REPLIES = [
    "Action: Move the top disk of rod A to the top of rod C",
    "Goal: finish the task\nState: nothing known yet\nThought: try the first thing\n"
    "Action: go forward",
    "Thought: I should look around.\nAction: look",
    "Map (Top-Down View):\n# . A\n. B .\nLegend: A = agent, B = ball\nAction: turn left",
    "RRDDR",
    "1",
    "goal: make the item\nstate: empty inventory\nthought: get things\naction: inventory",
    "I am not sure what to do here.",
    '{"goal": "win", "state": "start", "thought": "move", "action": "Move North"}',
    "Action: Move the top disk of rod A to the top of rod B",
    "The tool RRRRR looks safe.\nAction: RRRRR",
    "Action: go to countertop 1",
]


def _text(messages: list[Message]) -> str:
    out = []
    for m in messages:
        c = m["content"]
        out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c))
    return "\n".join(out)


class GoldenLLM(LLM):
    """A deterministic stand-in model: cycles through REPLIES by a hash of the request, so
    a reply depends on the request alone (not on call order); ``constrained`` mimics a
    grammar backend by choosing among ``params.choices``."""

    max_concurrency = 1
    vision = False

    def __init__(self, constrained: bool) -> None:
        self.constrained = constrained
        self.model_id = f"golden:{'constrained' if constrained else 'free'}"

    def _pick(self, messages: list[Message], salt: str) -> int:
        import zlib

        return zlib.crc32((_text(messages) + salt).encode()) % 1_000_003

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        k = self._pick(messages, f"{params.seed}|{params.stop}|{params.choice_prefix}")
        if params.choices:
            choice = params.choices[k % len(params.choices)]
            text = params.choice_prefix + choice
        else:
            text = REPLIES[k % len(REPLIES)]
        usage = Usage(len(_text(messages).split()), len(text.split()))
        return Completion(text, usage=usage)

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        k = self._pick(messages, "score")
        return [-float((k + 7 * i) % 13) for i in range(len(continuations))]

    def count_tokens(self, text: str) -> int:
        return max(1, len(text.split()))


def case_id(case: tuple[str, ...], seed: int) -> str:
    return "|".join(case) + f"|seed={seed}"


def all_cases() -> list[tuple[tuple[str, ...], int]]:
    out = [(c, s) for c in CASES for s in SEEDS]
    out += [
        ((env, "expert", "full", "default", "none", "-"), s) for env in EXPERT_ENVS for s in SEEDS
    ]
    return out


_VOLATILE = re.compile(r"\d+\.\d{6,}")


def normalise(obj: Any) -> Any:
    """JSON-able, with no floats that differ by rounding noise."""
    return json.loads(json.dumps(obj, default=str))


def load() -> dict[str, Any]:
    with gzip.open(FIXTURE, "rt") as f:
        data: dict[str, Any] = json.load(f)
    return data


def save(data: dict[str, Any]) -> None:
    blob = json.dumps(data, sort_keys=True, indent=0, ensure_ascii=False)
    with gzip.GzipFile(FIXTURE, "wb", mtime=0) as f:
        f.write(blob.encode())


__all__ = ["CASES", "FIXTURE", "GoldenLLM", "all_cases", "case_id", "load", "replace", "save"]
_ = asyncio
