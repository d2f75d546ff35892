"""The writer job's scoring of one round (:mod:`statelab_seed003.train.pipeline`): write
points drawn from the logged episodes, their candidates written and scored by the frozen
reader (and, with outcomes, continued), and the counts its summary reports."""

from __future__ import annotations

import asyncio
import random
import sys
from typing import Any

from statelab.core import LLM
from statelab.state.bounded import BoundedWriter
from statelab_seed003.train._config import WriterConfig
from statelab_seed003.train.data import Trajectory
from statelab_seed003.train.dssr import (
    At,
    WritePoint,
    arm_points,
    eligible_points,
    score_write_point,
    write_points,
)


async def score_round(
    cfg: WriterConfig, trajs: list[Trajectory], writer_spec: str, r: int
) -> list[WritePoint]:
    from statelab.llm import ModelPool, Role

    models = ModelPool()  # one model per spec, whatever its roles; closed when scored
    writer_llm = models.get(writer_spec, Role.WRITER)
    reader = models.get(cfg.reader, Role.READER)
    try:
        return await _score_points(cfg, trajs, writer_llm, reader, r)
    finally:
        await models.aclose()


async def _score_points(
    cfg: WriterConfig, trajs: list[Trajectory], writer_llm: LLM, reader: LLM, r: int
) -> list[WritePoint]:
    rng = random.Random(cfg.seed * 7919 + r)
    drawn = [(traj, at) for traj in trajs for at in _draw(cfg, traj, rng)]
    if cfg.max_points is not None and len(drawn) > cfg.max_points:
        keep = sorted(rng.sample(range(len(drawn)), cfg.max_points))
        drawn = [drawn[i] for i in keep]
    gate = asyncio.Semaphore(cfg.concurrency)  # points at once; each its own seeds: any order

    async def one(traj: Trajectory, at: At) -> WritePoint:
        async with gate:
            return await _score_one(cfg, traj, at, writer_llm, reader, r)

    return list(await asyncio.gather(*(one(traj, at) for traj, at in drawn)))


async def _score_one(
    cfg: WriterConfig, traj: Trajectory, at: At, writer_llm: LLM, reader: LLM, r: int
) -> WritePoint:
    from statelab_seed003.train.continuation import outcome_of

    writer = BoundedWriter(traj.render_obs, cfg.form, cfg.budget, seed=cfg.seed * 100 + r)
    writer.spelling = f"bounded:{cfg.form}:{cfg.budget}"
    outcome = None
    if cfg.measures_outcomes():
        outcome = outcome_of(traj, at.phase, at.j, writer, reader, writer_llm,
                             steps=cfg.continue_steps)  # fmt: skip
    p = await score_write_point(
        traj, at.j, writer, writer_llm, reader, candidates=cfg.candidates, k=cfg.k,
        ks=tuple(cfg.ks), temperature=cfg.temperature, phase=at.phase, outcome=outcome,
    )  # fmt: skip
    got = [c.outcome for c in p.candidates if c.outcome is not None]
    returns = f", returns {min(got):g}..{max(got):g}" if got else ""
    print(
        f"round {r}: {traj.run} seed {traj.seed} write point {at.phase}{at.j}: recursive "
        f"{p.best().recursive:.3f}..{p.worst().recursive:.3f} nats over {p.decisions} "
        f"decisions{returns}",
        file=sys.stderr,
        flush=True,
    )
    return p


def _draw(cfg: WriterConfig, traj: Trajectory, rng: random.Random) -> list[At]:
    return write_points(traj, cfg.points, rng, phases=tuple(cfg.phases), arm=cfg.arm, horizon=cfg.k)


def arm_counts(cfg: WriterConfig, trajs: list[Trajectory]) -> dict[str, int]:
    """The write points the arm samples from, of all eligible ones (the seed's A4: 2,529 of
    3,984), and the post-reveal ones among the eligible."""
    kept = total = post = 0
    for traj in trajs:
        pool = eligible_points(traj, tuple(cfg.phases), cfg.k)
        total += len(pool)
        post += sum(traj.post_reveal(*p) for p in pool)
        kept += len(arm_points(traj, pool, cfg.arm))
    return {"kept": kept, "of": total, "post_reveal": post}


def rank_agreement(points: list[WritePoint]) -> dict[str, Any]:
    """How often the recursive and window scores order a write point's candidates alike
    (pairs of candidates with different scores under both)."""
    same = differ = 0
    for p in points:
        cs = p.candidates
        for a in range(len(cs)):
            for b in range(a + 1, len(cs)):
                dr = cs[a].recursive - cs[b].recursive
                dw = cs[a].window - cs[b].window
                if abs(dr) > 1e-9 and abs(dw) > 1e-9:
                    same, differ = same + (dr * dw > 0), differ + (dr * dw < 0)
    return {"concordant": same, "discordant": differ}
