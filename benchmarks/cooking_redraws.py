"""How many cooking games the Phase-A check redraws, per split (seed 003, Appendix A).

Resets ``cooking:lag=0`` on each seed of the splits asked for (generating any game the cache
lacks: 4-12 s each) and writes one JSON line per seed: the draw the env settled on (0: the
seed's own game passed), whether it passed, its rooms and recipe size, and the seconds the
reset took. ``--summary FILE [FILE ...]`` prints the per-split counts of finished files (pooled).

    python benchmarks/cooking_redraws.py validation test train --out results/cooking_redraws.jsonl
    python benchmarks/cooking_redraws.py --summary results/cooking_redraws.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from statelab.envs import _cooking_games as games
from statelab.envs import make_env


def measure(splits: list[str], out: Path, limit: int | None = None) -> None:
    done = set()
    if out.exists():
        done = {json.loads(line)["seed"] for line in out.read_text().splitlines() if line}
    env = make_env("cooking:lag=0")
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as fh:
        for split in splits:
            for seed in list(games.SPLITS[split])[:limit]:
                if seed in done:
                    continue
                start = time.perf_counter()
                _, info = env.reset(seed=seed)
                phase = info["privileged"]["phase_a"]
                spec = games.spec_for(seed, phase["draw"])
                row = {"split": split, "seed": seed, "draw": phase["draw"],
                       "passed": bool(phase["all_observed"]), "rooms": spec.rooms,
                       "recipe": spec.recipe, "rooms0": games.spec_for(seed).rooms,
                       "seconds": round(time.perf_counter() - start, 1)}  # fmt: skip
                fh.write(json.dumps(row) + "\n")
                fh.flush()


def summary(paths: list[Path]) -> None:
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line]
    for split in games.SPLITS:
        got = [r for r in rows if r["split"] == split]
        if not got:
            continue
        redrawn = [r for r in got if r["draw"] > 0]
        by_rooms = Counter(r["rooms0"] for r in redrawn)
        failed = sum(not r["passed"] for r in got)
        draws = sum(r["draw"] for r in got)
        print(f"{split}: {len(got)}/{len(games.SPLITS[split])} seeds checked, "
              f"{len(redrawn)} redrawn ({draws} failing draws; by rooms of the first draw: "
              f"{dict(sorted(by_rooms.items()))}), {failed} with no passing draw")  # fmt: skip


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("splits", nargs="*", default=["validation", "test", "train"])
    ap.add_argument("--out", type=Path, default=Path("results/cooking_redraws.jsonl"))
    ap.add_argument("--summary", type=Path, nargs="+", help="finished files (several: pooled)")
    ap.add_argument("--limit", type=int, help="the first N seeds of each split only")
    a = ap.parse_args()
    if a.summary:
        summary(a.summary)
    else:
        measure(a.splits, a.out, a.limit)
