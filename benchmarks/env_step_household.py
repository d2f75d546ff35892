"""Household: game generation, load and step times, and the expert on the test split.

- generation: :func:`generate` + writing the ``.tw-pddl`` file, into a fresh temporary cache;
- load: the first reset of a game (TextWorld loads the file, Fast Downward translates it);
  a second reset of the same game (translation memoised, file cached) is timed apart;
- step: ``env.step`` with uniformly random admissible commands (a seeded RNG);
- expert: plays every seed of the ``test`` split (134 games); wins, steps, time per step.

    python benchmarks/env_step_household.py [--games 134] [--random-steps 20]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections import Counter

from statelab.envs import _household_gen as gen
from statelab.envs.household import HouseholdEnv


def quantiles(xs: list[float], unit: float = 1e3, name: str = "ms") -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
    return (
        f"median {statistics.median(xs) * unit:.1f} {name}  p95 {p95 * unit:.1f} {name}  "
        f"(n={len(xs)})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=134)
    ap.add_argument("--random-steps", type=int, default=20)
    args = ap.parse_args()
    os.environ.setdefault("STATELAB_CACHE", tempfile.mkdtemp(prefix="statelab-household-"))
    seeds = list(HouseholdEnv.splits["test"])[: args.games]
    env = HouseholdEnv()
    gen_t, load_t, reload_t, step_t, expert_t = [], [], [], [], []
    wins: Counter[str] = Counter()
    played: Counter[str] = Counter()
    steps: list[int] = []
    rng = random.Random(0)
    for seed in seeds:
        task_type = env.task_type_of(seed)
        t0 = time.perf_counter()
        gen.ensure_game(seed, task_type)
        gen_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        obs, info = env.reset(seed=seed)
        load_t.append(time.perf_counter() - t0)
        for _ in range(args.random_steps):
            t0 = time.perf_counter()
            obs, _, term, trunc, info = env.step(rng.choice(obs.admissible or ("look",)))
            step_t.append(time.perf_counter() - t0)
            if term or trunc:
                break
        t0 = time.perf_counter()
        obs, info = env.reset(seed=seed)
        reload_t.append(time.perf_counter() - t0)
        expert, done = env.expert(), False
        while not done:
            action = expert.act(obs, info)
            t0 = time.perf_counter()
            obs, _, term, trunc, info = env.step(action)
            expert_t.append(time.perf_counter() - t0)
            done = term or trunc
        played[task_type] += 1
        wins[task_type] += bool(info["success"])
        steps.append(info["steps"])
    print(f"household, {len(seeds)} test games (cache {os.environ['STATELAB_CACHE']})")
    print(f"  generate + write game   {quantiles(gen_t)}")
    print(f"  load (first reset)      {quantiles(load_t, 1, 's')}")
    print(f"  reset again (same game) {quantiles(reload_t, 1, 's')}")
    print(f"  step, random commands   {quantiles(step_t)}")
    print(f"  step, expert commands   {quantiles(expert_t)}")
    total = sum(wins.values())
    mean = statistics.mean(steps)
    print(f"expert wins {total}/{len(seeds)}; steps mean {mean:.1f} max {max(steps)}")
    for t in gen.TASK_TYPES:
        print(f"  {t:<32} {wins[t]}/{played[t]}")


if __name__ == "__main__":
    main()
