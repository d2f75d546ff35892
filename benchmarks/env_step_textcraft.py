"""Textcraft speed: loading the recipes, a reset, one ``env.step`` and one expert episode.

Steps are timed while the expert plays (every step valid, each one replanning the
walkthrough from the inventory, which is part of the step) and while random commands are
sent (a seeded mix of gets, crafts from the shown commands, inventory and garbage, mostly
invalid). Reports the median and 95th percentile of each, and the expert's wins, episode
lengths and recipe depths over the chosen seeds (the 100 test goals by default).

    python benchmarks/env_step_textcraft.py [--split test|train] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter

from statelab.envs._textcraft_recipes import goals
from statelab.envs.textcraft import TextcraftEnv


def quantiles(xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
    return f"median {statistics.median(xs) * 1e3:.3f} ms  p95 {p95 * 1e3:.3f} ms  (n={len(xs)})"


def random_command(rng: random.Random, shown: list[str]) -> str:
    kind = rng.random()
    if kind < 0.4:
        return rng.choice(shown).replace("craft ", "get ", 1).split(" using")[0]
    if kind < 0.8:
        return rng.choice(shown)
    return rng.choice(["inventory", "xyzzy", "get 1 stick", "craft 1 stick using 2 bamboo"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="test", choices=sorted(TextcraftEnv.splits))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    seeds = list(TextcraftEnv.splits[args.split])

    t0 = time.perf_counter()
    goals()  # loads the 860 recipe files and computes the goal depths
    load = time.perf_counter() - t0
    env = TextcraftEnv()
    reset_t: list[float] = []
    expert_step_t: list[float] = []
    episode_t: list[float] = []
    lengths: Counter[int] = Counter()
    depths: Counter[tuple[int, bool]] = Counter()
    for r in range(args.repeats):
        for seed in seeds:
            start = time.perf_counter()
            obs, info = env.reset(seed=seed)
            reset_t.append(time.perf_counter() - start)
            expert, done = env.expert(), False
            while not done:
                action = expert.act(obs, info)
                s = time.perf_counter()
                obs, _, term, trunc, info = env.step(action)
                expert_step_t.append(time.perf_counter() - s)
                done = term or trunc
            episode_t.append(time.perf_counter() - start)
            if r == 0:
                lengths[env.steps] += 1
                depths[(info["privileged"]["depth"], bool(info["success"]))] += 1

    rng = random.Random(0)
    random_t: list[float] = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        shown = obs.text.split("\n\n")[0].splitlines()[1:]
        done = False
        while not done:
            action = random_command(rng, shown)
            s = time.perf_counter()
            _, _, term, trunc, _ = env.step(action)
            random_t.append(time.perf_counter() - s)
            done = term or trunc

    wins = sum(n for (_, won), n in depths.items() if won)
    print(f"textcraft, {args.split} split ({len(seeds)} goals), {args.repeats} repeats")
    print(f"  load recipes + goals    {load * 1e3:.1f} ms (once per process)")
    print(f"  reset                   {quantiles(reset_t)}")
    print(f"  step, expert commands   {quantiles(expert_step_t)}")
    print(f"  step, random commands   {quantiles(random_t)}")
    print(f"  expert episode          {quantiles(episode_t)}")
    print(f"expert wins {wins}/{len(seeds)}; by depth (depth, won): {sorted(depths.items())}")
    ls = sorted(lengths.elements())
    print(f"  episode length min {ls[0]} median {statistics.median(ls)} max {ls[-1]} (budget 40)")


if __name__ == "__main__":
    main()
