"""Time per BabyAI step, and the describer's share of it.

For each task, plays seeded random actions and reports medians (microseconds) of:

- ``minigrid``: minigrid's own ``level.step`` (which already encodes the 7x7 view);
- ``env.step``: our whole step (minigrid + view facts + text + privileged info);
- ``+expert``: the expert playing: its ``act`` (minigrid's BabyAIBot replanning) + our step;
- ``facts``: building the view facts from minigrid's encoding;
- ``describe``: the view in words (BabyAI-Text); ``describer`` = facts + describe (target < 2 ms);
- ``privileged``: full-map facts, ASCII map and grid for ``info["privileged"]``;
- ``symbolic`` / ``matrix``: the other two formats;
- ``image``: minigrid's agent-view render (only with ``image=True``).

    python benchmarks/env_step_babyai.py [--steps 400]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from statelab.envs.babyai import ACTIONS, TASKS, BabyAIEnv
from statelab.facts.egoview import describe, ego_view
from statelab.state import render


def _us(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e6


def _play(env: BabyAIEnv, steps: int, expert: bool) -> list[float]:
    """Step times over ``steps`` steps: random actions, or the expert's (its act() timed too)."""
    rng = random.Random(0)
    times: list[float] = []
    seed = 0
    obs, info = env.reset(seed=seed)
    policy = env.expert() if expert else None
    for _ in range(steps):
        t = time.perf_counter()
        a = policy.act(obs, info) if policy is not None else rng.choice(ACTIONS)
        obs, _, terminated, truncated, info = env.step(a)
        times.append((time.perf_counter() - t) * 1e6)
        if terminated or truncated:
            seed += 1
            obs, info = env.reset(seed=seed)
    return times


def bench(task: str, steps: int) -> dict[str, float]:
    env, playing = BabyAIEnv(task), BabyAIEnv(task)
    out = {
        "env.step": statistics.median(_play(env, steps, expert=False)),
        "+expert": statistics.median(_play(playing, steps, expert=True)),
    }
    parts: dict[str, list[float]] = {
        k: [] for k in ("minigrid", "facts", "describe", "privileged", "symbolic", "matrix")
    }
    rng = random.Random(1)
    lv = env.level
    env.reset(seed=0)
    for _ in range(steps):
        t = time.perf_counter()
        raw, _, terminated, truncated, _ = lv.step(ACTIONS.index(rng.choice(ACTIONS)))
        parts["minigrid"].append((time.perf_counter() - t) * 1e6)
        t = time.perf_counter()
        facts = ego_view(raw["image"], raw["direction"], lv.mission)
        parts["facts"].append((time.perf_counter() - t) * 1e6)
        parts["describe"].append(_us(partial(describe, facts)))
        parts["privileged"].append(_us(env._privileged))
        parts["symbolic"].append(_us(partial(render, "symbolic", facts)))
        parts["matrix"].append(_us(partial(render, "matrix", facts)))
        if terminated or truncated:
            lv.reset(seed=int(rng.random() * 1e6))
    out.update({k: statistics.median(v) for k, v in parts.items()})
    out["describer"] = out["facts"] + out["describe"]
    img = BabyAIEnv(task, image=True)
    img.reset(seed=0)
    img.render_rgb()  # the first render loads fonts and caches tiles
    out["image"] = statistics.median(_us(img.render_rgb) for _ in range(50))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=400)
    args = ap.parse_args()
    cols = (
        "minigrid", "env.step", "+expert", "facts", "describe", "describer",
        "privileged", "symbolic", "matrix", "image",
    )  # fmt: skip
    print("median microseconds per step")
    print(f"{'task':<16}" + "".join(f"{c:>11}" for c in cols))
    for task in TASKS:
        r = bench(task, args.steps)
        print(f"{task:<16}" + "".join(f"{r[c]:>11.0f}" for c in cols))
    print("describer target: under 2000 us per step")


if __name__ == "__main__":
    main()
