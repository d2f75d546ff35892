"""Golden prompts: the first prompt each seed-001 and seed-002 config sends (and the anchor's
JSON ReAct, ``react:jsonreact/anchor``, which no config uses), for one
household game (the first test game) and one traffic state (seed 0), with the golden
scripted model. ``python -m tests.golden.prompts.record`` rewrites ``prompts.json`` and the
readable ``prompts.txt`` (for review against the anchors' layouts); ``test_prompts.py``
checks that nothing changed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from tests.golden._golden import GoldenLLM

from statelab.run.config import Sampling
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec, resolve_format

ROOT = Path(__file__).parents[3]
HERE = Path(__file__).parent
FIXTURE = HERE / "prompts.json"
READABLE = HERE / "prompts.txt"
SEEDS = {"household": 100_000, "textcraft": None, "traffic": 0}


def cases() -> list[tuple[str, str, str, str, str, dict[str, Any]]]:
    """(config, env, agent, history, grounding, params) of every seed-001/002 grid row on
    household and traffic."""
    out = []
    for path in sorted((ROOT / "configs").glob("seed00[12]/*.yaml")):
        cfg = yaml.safe_load(path.read_text())
        grid = cfg["grid"]
        for env in grid["env"]:
            if SEEDS.get(env) is None:
                continue
            for agent in grid["agent"]:
                for history in grid.get("history", ["full"]):
                    for grounding in grid.get("grounding", ["none"]):
                        params = {**Sampling().model_dump(), **cfg.get("params", {})}
                        out.append((path.stem, env, str(agent), history, grounding, params))
    # agent options no config uses yet, recorded for review against the anchors' layouts
    base = Sampling().model_dump()
    out.append(("options", "household", "react:jsonreact/anchor", "full", "none", base))
    return out


def first_prompt(env: str, agent: str, history: str, grounding: str, params: dict) -> Any:
    spec = RunSpec.make(
        env=env,
        model="golden:free",
        agent=agent,
        history=history,
        format=resolve_format(env, "default"),
        grounding=grounding,
        params=params,
        max_steps=2,
    )
    ep = asyncio.run(run_episode(spec, SEEDS[env], GoldenLLM(constrained=False)))
    for step in ep.trajectory:
        acting = [c for c in step.calls if c["kind"] not in ("describe", "summary")]
        if acting:
            return acting[0]["messages"]
    return None  # decided without a model call (the collision check alone)


def key(case: tuple) -> str:
    config, env, agent, history, grounding, _ = case
    return f"{config}|{env}|{agent}|{history}|{grounding}"


def collect() -> dict[str, Any]:
    return {key(c): first_prompt(*c[1:]) for c in cases()}


def readable(data: dict[str, Any]) -> str:
    parts = []
    for k, msgs in data.items():
        parts.append(f"@@@@@@@@ {k}")
        for m in msgs or []:
            content = m["content"]
            if not isinstance(content, str):
                content = "\n".join(p.get("text", f"[{p.get('type')}]") for p in content)
            parts.append(f"=== {m['role']}\n{content}")
    return "\n".join(parts) + "\n"


def main() -> None:
    data = collect()
    FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    READABLE.write_text(readable(data))
    print(f"{len(data)} prompts in {FIXTURE}")


if __name__ == "__main__":
    main()
