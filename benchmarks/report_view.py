"""Wall time and peak memory of ``statelab view`` and ``statelab report`` on a large store.

Builds (once, then reuses) a store of 2,000 scripted 30-step Tower of Hanoi episodes with
the full history (the store issue 22 measured: every call carries the whole history, so
the calls table grows with the square of the steps), then runs each command in a fresh
process and reads its CPU time and peak RSS from ``os.wait4`` (on a busy machine the CPU
time is the steadier figure). ``--varied`` makes every episode its own: each plays moves
drawn at random, seeded by the episode (as a real model's episodes differ, so no two share
their texts). ``--src`` runs the commands from another
source tree, e.g. main's for the "before" figures:

    python benchmarks/report_view.py --src after=src --src before=<a checkout of main>/src \\
        [--episodes 2000] [--varied] [--store DIR] [--json benchmarks/report_view.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPLIES = [
    "Action: Move the top disk of rod A to the top of rod C",
    "Action: Move the top disk of rod A to the top of rod B",
    "Action: Move the top disk of rod C to the top of rod B",
    "Action: Move the top disk of rod B to the top of rod A",
] * 8
#: the moves a varied episode draws from (some of them refused by the env, as a model's are)
MOVES = [f"Action: Move the top disk of rod {a} to the top of rod {b}" for a in "ABC" for b in "ABC"
         if a != b]  # fmt: skip


def _random_moves() -> None:
    """Make every episode of a scripted model play its own moves: 40 drawn at random, seeded
    by the episode's key (the same episode draws the same moves on every build)."""
    import random

    from statelab.llm.scripted import ScriptedLLM

    plain = ScriptedLLM.for_episode

    def for_episode(self: ScriptedLLM, key: str) -> ScriptedLLM:
        view = plain(self, key)
        rng = random.Random(key)
        view.replies = [rng.choice(MOVES) for _ in range(40)]
        return view

    ScriptedLLM.for_episode = for_episode  # type: ignore[method-assign]


def build(folder: Path, episodes: int, varied: bool = False) -> Path:
    """The store of ``episodes`` full-history Hanoi episodes in ``folder`` (made once); with
    ``varied``, every episode plays random moves of its own."""
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    if varied:
        _random_moves()

    script = folder / "replies.json"
    folder.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(REPLIES))
    exp = parse_experiment(
        {
            "name": "rv",
            "model": f"scripted:{script}",
            "seeds": list(range(episodes // 4)),
            "max_steps": 30,
            "grid": {
                "env": ["hanoi"],
                "history": ["full"],
                "format": ["tagged-list", "natural", "dict-list", "matrix"],
            },
            "out": str(folder),
            "cache": None,
            "expert": False,
        }
    )
    store = exp.out_dir / "store.sqlite"
    if not store.exists():
        t = time.perf_counter()
        res = run_sync(exp, progress=None)
        print(f"built {res.done} episodes in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return store


def measure(cmd: list[str], src: str) -> dict[str, Any]:
    """Wall seconds and peak RSS (MB) of ``cmd`` in a fresh process, statelab from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    p.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: KiB
        "rc": p.returncode,
        "stderr": err.strip().splitlines()[-1:] if err.strip() else [],
    }


def du(path: Path) -> float:
    """MB under ``path``."""
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--varied", action="store_true", help="random moves, seeded per episode")
    ap.add_argument("--store", type=Path, default=None, help="default: a temp folder per size")
    ap.add_argument("--src", action="append", default=[], help="label=src folder (repeatable)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--command", action="append", choices=["view", "report"], default=[])
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = ap.parse_args()
    kind = "varied" if args.varied else "scripted"
    where = args.store or Path(tempfile.gettempdir()) / f"statelab-bench-rv-{kind}-{args.episodes}"
    store = build(where, args.episodes, args.varied)
    srcs = [s.split("=", 1) for s in args.src] or [["this", str(Path(__file__).parents[1] / "src")]]
    rows = []
    for label, src in srcs:
        for what in args.command or ["view", "report"]:
            out = Path(tempfile.mkdtemp(prefix=f"rv-{what}-"))
            for k in range(args.repeat):
                # a page path: main's view takes a file, this one a folder or a page path
                where = out / "index.html" if what == "view" else out
                cmd = [
                    sys.executable,
                    "-m",
                    "statelab",
                    what,
                    str(store.parent),
                    "--out",
                    str(where),
                ]
                got = measure(cmd, src)
                got.update(code=label, command=what, run=k + 1, out_mb=du(out))
                rows.append(got)
                print(
                    f"{label:>8} {what:<6} {got['wall_s']:>7.2f} s (CPU {got['cpu_s']:.2f} s)"
                    f" {got['peak_rss_mb']:>8.1f} MB"
                    f"  out {got['out_mb']} MB  rc {got['rc']}",
                    flush=True,
                )
    result = {
        "store": {
            "episodes": args.episodes,
            "steps": 30,
            "history": "full",
            "episodes_kind": kind,
            "mb": round(store.stat().st_size / 1e6, 1),
        },
        "machine": {
            "cpus": os.cpu_count(),
            "load": os.getloadavg(),
            "python": platform.python_version(),
        },
        "rows": rows,
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
