"""Play one golden case through the current spine and return its comparable record."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.golden._golden import MAX_STEPS, GoldenLLM, normalise

from statelab.run.config import Sampling
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec, resolve_format


def play(case: tuple[str, ...], seed: int) -> dict[str, Any]:
    env, agent, history, fmt, grounding, kind = case
    expert = kind == "-"
    spec = RunSpec.make(
        env=env,
        model="-" if expert else f"golden:{kind}",
        agent=agent,
        history=history,
        format=resolve_format(env, fmt),
        grounding=grounding,
        params={} if expert else Sampling().model_dump(),
        max_steps=None if expert else MAX_STEPS,
    )
    llm = None if expert else GoldenLLM(constrained=kind == "constrained")
    ep = asyncio.run(run_episode(spec, seed, llm))
    return normalise(
        {
            "score": round(ep.score, 9),
            "success": ep.success,
            "steps": ep.steps,
            "reward": round(ep.reward, 9),
            "trajectory": [
                {
                    "t": s.t,
                    "view": s.view,
                    "grounding": s.grounding,
                    "reply": s.reply,
                    "action": s.action,
                    "parsed": s.parsed,
                    "valid": s.valid,
                    "reward": round(s.reward, 9),
                    "observation": s.observation,
                    "memory": s.memory,
                    "gold": s.gold,
                    "calls": [
                        {"kind": c["kind"], "messages": c["messages"], "text": c["text"]}
                        for c in s.calls
                    ],
                    # the fixture predates the step's own meta field: component metadata
                    # was stored among the queries then
                    "queries": s.queries
                    + (
                        [{"query": "decision", "answer": json.dumps(s.meta, sort_keys=True)}]
                        if s.meta
                        else []
                    ),
                }
                for s in ep.trajectory
            ],
        }
    )
