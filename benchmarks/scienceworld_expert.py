"""The ScienceWorld expert on the anchor's test episodes: score, steps against the budget, the
time of a reset and of a step (through statelab's env: server step + room + inventory), and the
resident memory of the simulator's JVM.

    PYTHONPATH=src python benchmarks/scienceworld_expert.py [--tasks T ...] [--seeds S ...]
        [--out benchmarks/scienceworld_expert.jsonl]

Default: every task of :data:`TASKS` on its ``test`` split (the anchor's 211 episodes). One
line per episode is appended to ``--out`` as it finishes; an episode already there (same task,
seed and JVM options) is skipped, so a stopped sweep resumes. Each task starts a fresh JVM (no
simulator is kept idle), so ``jvm_peak_mb`` (the JVM's VmHWM after the episode) is that task's
peak so far. ``STATELAB_SCIENCEWORLD_XMX`` sets the JVM's heap cap as for any run.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from statelab.envs import _scienceworld_server as server
from statelab.envs import make_env
from statelab.envs.scienceworld import TASKS, env_class

OUT = Path(__file__).parent / "scienceworld_expert.jsonl"


def jvm_memory(env: Any) -> dict[str, int]:
    """The env's JVM's resident memory now and at its peak (MiB), read from /proc."""
    proc = server._process(env._sim.sw) if env._sim is not None else None
    out = {}
    if proc is not None:
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[{"VmRSS": "jvm_rss_mb", "VmHWM": "jvm_peak_mb"}[key]] = (
                    int(value.split()[0]) // 1024
                )
    return out


def episode(env: Any, task: str, seed: int) -> dict[str, Any]:
    """Play the expert on one seed; its record."""
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    reset_s = time.perf_counter() - t0
    policy, done, step_s, actions = env.expert(), False, [], []
    while not done:
        action = policy.act(obs, info)
        actions.append(action)
        t1 = time.perf_counter()
        obs, _, term, trunc, info = env.step(action)
        step_s.append(time.perf_counter() - t1)
        done = term or trunc
    score = env.score()
    return {
        "task": task,
        "seed": seed,
        "variation": env.variation,
        "score": round(score, 4),
        "steps": env.steps,
        "budget": env.budget,
        # success as the anchor and MPO count it (a score of at least 70 within the budget)
        "won": env.success() and env.steps <= env.budget,
        "perfect": score >= 1.0 and env.steps <= env.budget,
        "plan_len": len(info["privileged"]["gold"]),
        "reset_s": round(reset_s, 2),
        "step_ms": round(1000 * sum(step_s) / max(1, len(step_s)), 1),
        "java_opts": " ".join(server.java_opts()),
        **jvm_memory(env),
        "actions": actions,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", nargs="*", default=list(TASKS))
    ap.add_argument("--seeds", nargs="*", type=int, help="default: each task's test split")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    opts = " ".join(server.java_opts())
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["task"], r["seed"], r["java_opts"]))
    server.MAX_IDLE = 0  # a fresh JVM per task: its peak memory is that task's
    for task in args.tasks:
        seeds = args.seeds if args.seeds is not None else list(env_class(task).splits["test"])
        todo = [s for s in seeds if (task, s, opts) not in done]
        if not todo:
            continue
        env = make_env(f"scienceworld/{task}")
        try:
            for seed in todo:
                record = episode(env, task, seed)
                with args.out.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                print(
                    f"{task} | {seed} | v{record['variation']} | {record['score']:.2f} | "
                    f"{record['steps']}/{record['budget']} | {record['reset_s']:.1f} s | "
                    f"{record['step_ms']:.0f} ms | {record.get('jvm_peak_mb')} MB",
                    flush=True,
                )
        finally:
            env.close()


if __name__ == "__main__":
    main()
