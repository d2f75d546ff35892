"""Win rate of the cooking env's expert (a*: TextWorld's own solver) by lag F'.

    PYTHONPATH=src python benchmarks/cooking_expert.py [n_seeds]

Generates (or reads from the cache) the games of train seeds 0..n-1, then plays the expert
at F' = 0, 10, 20, 40 and prints wins, mean Phase-B steps, mean Phase-A length and seconds.
"""

from __future__ import annotations

import sys
import time

from statelab.envs import make_env
from statelab.envs._cooking_games import ensure_games


def main(n: int = 20) -> None:
    t0 = time.perf_counter()
    ensure_games(range(n))
    print(f"games ready: {time.perf_counter() - t0:.1f} s")
    for lag in (0, 10, 20, 40):
        env = make_env(f"cooking:lag={lag}")
        wins, steps, prelude, t = 0, 0, 0, time.perf_counter()
        for seed in range(n):
            obs, info = env.reset(seed=seed)
            prelude += len(info["prelude"])
            policy, done = env.expert(), False
            while not done:
                obs, _, term, trunc, info = env.step(policy.act(obs, info))
                done = term or trunc
            wins += bool(info["success"])
            steps += env.steps
        dt = time.perf_counter() - t
        print(
            f"lag={lag:2d}: {wins}/{n} won, Phase B {steps / n:.1f} steps, "
            f"Phase A {prelude / n:.1f} steps, {dt:.1f} s"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
