"""The geodesic tool pipeline's speed (seed 001): sampling geodesics and quantizing windows.

Reports the best of ``--repeats`` wall times for
- sampling 250 geodesics on the 25x25 grid with 25 cars (target: under 1 s), and
- k-medoids (K = 5, FasterPAM) of 10,000 five-step windows, distances included
  (target: under 5 s),
then the medoids and the ten-tool library. ``--plots DIR`` also writes the two figures.

    python benchmarks/geodesics.py [--repeats 3] [--plots DIR]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from statelab.tools.geodesics import sample_geodesics, windows
from statelab.tools.plots import plot_clusters, plot_geodesics
from statelab.tools.quantize import quantize, tool_library

T = TypeVar("T")


def best_of(repeats: int, fn: Callable[[], T]) -> tuple[float, T]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    assert out is not None
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--windows", type=int, default=10_000)
    ap.add_argument("--plots", type=Path, default=None)
    args = ap.parse_args()

    t_sample, geos = best_of(args.repeats, lambda: sample_geodesics(250, seed=0))
    print(f"sample 250 geodesics: {t_sample:.3f} s (target < 1 s)")
    q250 = quantize(windows(geos), k=5, seed=0)
    print(f"  K=5 medoids of their 250 windows: {', '.join(q250.medoids)}")
    print(f"  tool library: {', '.join(tool_library(q250.medoids))}")

    pool: list[str] = []
    seed = 1
    while len(pool) < args.windows:
        pool += windows(sample_geodesics(250, seed=seed), all_windows=True)
        seed += 1
    big = pool[: args.windows]
    t_quant, q = best_of(args.repeats, lambda: quantize(big, k=5, seed=0))
    print(f"quantize {len(big)} windows ({len(set(big))} distinct): {t_quant:.3f} s (target < 5 s)")
    print(f"  K=5 medoids: {', '.join(q.medoids)}; loss {q.loss:.1f}")
    if args.plots is not None:
        args.plots.mkdir(parents=True, exist_ok=True)
        plot_geodesics(geos, args.plots / "geodesics.png")
        plot_clusters(windows(geos), q250, args.plots / "clusters.png")
        print(f"plots written to {args.plots}")


if __name__ == "__main__":
    main()
