"""Messenger step time: ``env.step`` plus rendering the new state in every format.

Plays episodes with uniformly random actions (a seeded RNG; invalid actions never occur) and
reports, over all steps, the median and 95th percentile of the step alone, of each format's
rendering, and of the step plus every rendering. Target: under 2 ms per step in all.
The expert's decisions are timed separately, as they are not part of a step, and its win
rate is measured on the test split's first ``--episodes`` seeds under each ``--budgets``
(SmartPlay's 64, seed 000's 10).

    python benchmarks/env_step_messenger.py [--episodes 200] [--level 2] [--budgets 10 64]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from statelab.envs._messenger_rules import ACTIONS
from statelab.envs.messenger import MessengerEnv
from statelab.state import formats_for, render


def quantiles(xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
    return f"median {statistics.median(xs) * 1e3:.3f} ms  p95 {p95 * 1e3:.3f} ms  (n={len(xs)})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--level", type=int, default=2)
    ap.add_argument("--budgets", type=int, nargs="+", default=[10, 64])
    args = ap.parse_args()
    env = MessengerEnv(level=args.level)
    fmts = formats_for(env.facts_type)
    rng = random.Random(0)
    step_t: list[float] = []
    fmt_t: dict[str, list[float]] = {f: [] for f in fmts}
    total_t: list[float] = []
    for seed in range(args.episodes):
        env.reset(seed=seed)
        done = False
        while not done:
            action = rng.choice(ACTIONS)
            t0 = time.perf_counter()
            obs, _, term, trunc, _ = env.step(action)
            t1 = time.perf_counter()
            for f in fmts:
                s = time.perf_counter()
                render(f, obs.facts)
                fmt_t[f].append(time.perf_counter() - s)
            total_t.append(time.perf_counter() - t0)
            step_t.append(t1 - t0)
            done = term or trunc
    plan_t: list[float] = []
    wins: dict[int, int] = {}
    seeds = list(MessengerEnv.splits["test"])[: args.episodes]
    for budget in args.budgets:
        env = MessengerEnv(level=args.level, max_steps=budget)
        wins[budget] = 0
        for seed in seeds:
            obs, info = env.reset(seed=seed)
            expert, done = env.expert(), False
            while not done:
                s = time.perf_counter()
                action = expert.act(obs, info)
                plan_t.append(time.perf_counter() - s)
                obs, _, term, trunc, info = env.step(action)
                done = term or trunc
            wins[budget] += info["success"]
    print(f"messenger level {args.level}, {args.episodes} episodes, random actions")
    print(f"  step alone              {quantiles(step_t)}")
    for f in fmts:
        print(f"  render {f:<16} {quantiles(fmt_t[f])}")
    print(f"  step + every format     {quantiles(total_t)}")
    print(f"expert decision           {quantiles(plan_t)}")
    for budget, n in wins.items():
        print(f"expert wins, test seeds 0-{len(seeds) - 1}, {budget} steps: {n}/{len(seeds)}")


if __name__ == "__main__":
    main()
