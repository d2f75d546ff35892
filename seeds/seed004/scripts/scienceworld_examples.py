"""Write seed 004's ScienceWorld in-context examples (one per task; module
``statelab_seed004.examples.scienceworld``): our expert on the task's first train
variation (seed 1000), from the task description alone (``start=task``), with our world
model answering the opening ``query where is <target>`` in each mode.

    python seeds/seed004/scripts/scienceworld_examples.py [task ...]   (default: every task)
    python seeds/seed004/scripts/scienceworld_examples.py --check TASK ...

(with ``src`` and ``seeds/seed004/src`` on ``PYTHONPATH`` when the packages are not installed)

One simulator (a JVM) at a time; every task takes about 5 minutes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from statelab.envs import make_env
from statelab.envs.scienceworld import TASKS, TRAIN_BASE
from statelab.worldmodels.adapters import adapter_for
from statelab.worldmodels.adapters.scienceworld import ScienceWorldAdapter
from statelab_seed004.examples.scienceworld import EXAMPLES, render


def examples(task: str) -> dict[str, str]:
    """{mode: example text} of one task (modes ``belief`` and ``noprob``)."""
    env = make_env(f"scienceworld/{task}:start=task")
    try:
        obs, info = env.reset(seed=TRAIN_BASE)
        ad = adapter_for(env.kind, obs)
        assert isinstance(ad, ScienceWorldAdapter)
        target = ad.target or "thing"
        answers = {
            m: ad.answer(f"where is {target}", m, random.Random(0)) for m in ("belief", "noprob")
        }
        policy, done, steps = env.expert(), False, []
        while not done:
            action = policy.act(obs, info)
            obs, _, term, trunc, info = env.step(action)
            steps.append((action, obs.text))
            done = term or trunc
    finally:
        env.close()
    return {m: render(obs.goal, target, a, steps) for m, a in answers.items()}


def main(argv: list[str] | None = None) -> int:
    """Write (or ``--check``: compare with the stored text) the examples of the tasks given."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tasks", nargs="*", default=list(TASKS))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    stored = json.loads(EXAMPLES.read_text()) if EXAMPLES.exists() else {}
    bad = []
    for task in sorted(args.tasks, key=lambda t: TASKS[t][0]):  # the short tasks first
        got = examples(task)
        if args.check:
            bad += [task] if stored.get(task) != got else []
            continue
        stored[task] = got  # written task by task
        EXAMPLES.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
        print(f"{task} written -> {EXAMPLES}", flush=True)
    if args.check:
        print(f"{len(args.tasks) - len(bad)} of {len(args.tasks)} as stored; differ: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
