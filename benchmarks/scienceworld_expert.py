"""The ScienceWorld expert on every registered task: score, steps against the budget, and the
time of a reset and of a step (through statelab's env: server step + room + inventory).

    PYTHONPATH=src python benchmarks/scienceworld_expert.py [seeds...]   (default: 0)
"""

from __future__ import annotations

import sys
import time

from statelab.envs import make_env
from statelab.envs.scienceworld import TASKS


def main(seeds: list[int]) -> None:
    print("task | seed | variation | score | steps/budget | reset s | step ms")
    for task in TASKS:
        env = make_env(f"scienceworld/{task}")
        for seed in seeds:
            t0 = time.perf_counter()
            obs, info = env.reset(seed=seed)
            reset_s = time.perf_counter() - t0
            policy, done, step_s = env.expert(), False, []
            while not done:
                action = policy.act(obs, info)
                t1 = time.perf_counter()
                obs, _, term, trunc, info = env.step(action)
                step_s.append(time.perf_counter() - t1)
                done = term or trunc
            ms = 1000 * sum(step_s) / len(step_s)
            print(
                f"{task} | {seed} | {env.variation} | {info['score']:.2f} | "
                f"{env.steps}/{env.budget} | {reset_s:.2f} | {ms:.1f}",
                flush=True,
            )
        env.close()


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [0])
