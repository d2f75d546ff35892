"""``statelab seed003 train reader|writer CONFIG``: the two training jobs of seed 003, from YAML.

**reader** (behaviour cloning, Appendix B): every decision point of the logged episodes (the
chosen runs: several history variants) becomes (reader prompt -> labelled a*); LoRA SFT on
them; then, when the config has an ``eval`` block, the trained reader plays those games online
(agent ``reader``, model ``hf:<base>?adapter=<out>``) and its success is reported before it is
used as the frozen reader.

**writer** (DSSR, section 4): for each round, write points are drawn from the logged episodes
(``points`` per episode, at most ``max_points`` a round, from the ``phases`` chosen: Phase A's
prelude writes and Phase B's, both by default as in the seed; the ``arm``: ``main`` or ``a4``,
which keeps a post-reveal point only when its input state holds a recipe directive),
``candidates`` states (12) are sampled by the current writer (round 0: the base model with the
prompt of the job's ``form``, SUMMARY by default, NO-HINT with ``form: nohint``; later rounds:
the last round's adapter, same prompt), and each is scored by the frozen reader, recursively and
as a fixed window, over the look-ahead ``k`` (S_K; :mod:`statelab_seed003.train.dssr`; ``ks``
records S_K at further look-aheads) and, with ``outcomes`` or ``score: outcome``, by the return
of the episode continued from it (:mod:`statelab_seed003.train.continuation`). Round 0
fine-tunes on the best candidates, rounds 1+ run DPO on best-vs-worst pairs, chosen by
``score``: ``recursive`` (DSSR, a gap of at least ``gap`` nats) or ``outcome`` (the OUTCOME
writer, returns that differ by more than ``outcome_gap``). Every round writes its scores
(``scores_round<r>.jsonl``), with outcomes Figure 2 of the round
(``fig2_round<r>.md|png|json``), and its adapter (``round<r>/``); the last adapter is the writer
``bounded:dssr=<dir>:B``, which writes with the form its ``statelab.json`` records.
``score_only`` scores round 0 and trains nothing.

Both write ``summary.json`` (what was trained on, the losses, seconds per part) into ``out``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from statelab.run.records import FINISHED
from statelab_seed003.train._config import (
    Common,
    ReaderConfig,
    WriterConfig,
    load_trajectories,
)
from statelab_seed003.train._writer_scores import (
    arm_counts,
    rank_agreement,
    score_round,
)
from statelab_seed003.train.dssr import WritePoint, preference_pairs, sft_examples
from statelab_seed003.train.reader import writer_spec
from statelab_seed003.train.retrain import save_pairs
from statelab_seed003.train.serving import round_writer, vllm_info
from statelab_seed003.train.trainers import dpo, sft

__all__ = ["online_success", "point_final", "train_reader", "train_writer"]


def online_success(cfg: Common, model: str, name: str) -> dict[str, Any]:
    """Play ``cfg.eval``'s games with ``model`` (agent ``reader``); success per history."""
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync
    from statelab.run.store import Store

    assert cfg.eval is not None
    grid: dict[str, Any] = {"env": cfg.eval.env, "agent": ["reader"], "history": cfg.eval.history}
    if (w := writer_spec(cfg.eval.writer, cfg.base)) is not None:
        grid["writer"] = [w]
    exp = parse_experiment(
        {
            "name": name,
            "model": model,
            "seeds": cfg.eval.seeds,
            "max_steps": cfg.eval.max_steps,
            "grid": grid,
            "out": str(cfg.out_dir()),
            "cache": None,
            "concurrency": 1,
            "expert": False,
            "random": False,
        }
    )
    t0 = time.perf_counter()
    res = run_sync(exp, progress=None)
    st = Store(exp.out_dir / "store.sqlite", readonly=True)
    try:
        history = {
            r["run"]: json.loads(r["spec"]).get("history") for r in st.rows("runs", ["run", "spec"])
        }
        success: dict[Any, list[int]] = {}
        for e in st.rows("episodes", ["run", "success"], {"status": FINISHED}):
            got = success.setdefault(history[e["run"]], [0, 0])
            got[0] += int(e["success"] or 0)
            got[1] += 1
    finally:
        st.close()
    return {
        "store": str(exp.out_dir / "store.sqlite"),
        "success": dict(sorted(success.items(), key=lambda kv: str(kv[0]))),
        "failed": res.failed,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def train_reader(
    cfg: ReaderConfig,
    *,
    fit: Any = None,
    model_of: Any = None,
) -> dict[str, Any]:
    """Reader BC, its DAgger iterations and the acceptance bar
    (:mod:`statelab_seed003.train.reader`; ``fit`` and ``model_of`` as there)."""
    from statelab_seed003.train import reader

    return reader.train_reader(
        cfg, load=load_trajectories, online=online_success, fit=fit, model_of=model_of
    )


def _write_scores(cfg: WriterConfig, out: Path, r: int, points: list[WritePoint]) -> Any:
    """``scores_round<r>.jsonl``; with outcomes, Figure 2 of the round (``fig2_round<r>.*``)."""
    rows = [p.to_dict() for p in points]
    with (out / f"scores_round{r}.jsonl").open("w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    # the round's pairs with their prompts: ``statelab seed003 retrain`` trains seeds on them
    save_pairs(points, out / f"pairs_round{r}.jsonl", cfg.pair_gap(), cfg.score)
    if not cfg.measures_outcomes():
        return None
    from statelab_seed003.analysis.fig2 import write_figure2

    return write_figure2(rows, out, stem=f"fig2_round{r}")["cells"]


def _train_round(
    cfg: WriterConfig, points: list[WritePoint], r: int, adapter: Path | None, info: dict[str, Any]
) -> Path | None:
    """Round 0's SFT or a later round's DPO on the round's points; the new adapter (None: no
    pair reached the gap, so the round trains nothing)."""
    where = cfg.out_dir() / f"round{r}"
    kind = "dssr" if cfg.score == "recursive" else "outcome"
    meta = {"round": r, "form": cfg.form, "reader": cfg.reader, "budget": cfg.budget, "k": cfg.k,
            "candidates": cfg.candidates, "score": cfg.score, "arm": cfg.arm,
            "phases": list(cfg.phases)}  # fmt: skip
    base = cfg.base_arg()
    if r == 0:
        res = sft(sft_examples(points, cfg.score), where, base=base, hyper=cfg.hyper_(),
                  kind=f"{kind}-round0", meta=meta)  # fmt: skip
    else:
        pairs = preference_pairs(points, cfg.pair_gap(), cfg.score)
        info["pairs"] = len(pairs)
        if not pairs:
            unit = "-nat" if cfg.score == "recursive" else " return"
            info["skipped"] = f"no pair reached the {cfg.pair_gap()}{unit} gap"
            return None
        res = dpo(pairs, where, base=base, hyper=cfg.hyper_(), init=adapter,
                  kind=f"{kind}-round{r}", meta=meta)  # fmt: skip
    info.update(examples=res.examples, losses=res.losses, train_seconds=round(res.seconds, 1))
    return where


def _served(cfg: WriterConfig, adapter: Path, r: int) -> dict[str, Any]:
    """:func:`vllm_info`; for a form other than SUMMARY, the note that the served spelling
    (a model spec: no statelab.json) writes with SUMMARY's prompt."""
    got = vllm_info(cfg, adapter, r)
    if cfg.form != "summary":
        got["note"] = (f"trained on the {cfg.form} prompt: the served spelling writes with "
                       f"SUMMARY's; name the adapter by its directory, "
                       f"bounded:dssr={adapter}:{cfg.budget}")  # fmt: skip
        print(f"  {got['note']}", file=sys.stderr, flush=True)
    return got


def point_final(out: Path, adapter: Path) -> Path:
    """``<out>/final``: a link to the writer's last adapter (a round that trains nothing, when no
    pair reaches the gap, leaves the previous round's), so later configs can name the writer
    before the rounds' outcome is known; the link is replaced on a rerun."""
    final = out / "final"
    if final.is_symlink() or final.exists():
        final.unlink()
    final.symlink_to(Path(adapter).name, target_is_directory=True)
    return final


def train_writer(cfg: WriterConfig) -> dict[str, Any]:
    out = cfg.out_dir()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    trajs = load_trajectories(cfg)
    summary: dict[str, Any] = {
        "episodes": len(trajs),
        "histories": sorted({t.history for t in trajs}),
        "reader": cfg.reader,
        "form": cfg.form,
        "k": cfg.k,
        "candidates": cfg.candidates,
        "ks": sorted({cfg.k, *cfg.ks}),
        "score": cfg.score,
        "phases": list(cfg.phases),
        "arm": cfg.arm,
        "write_points_kept": arm_counts(cfg, trajs),
        "rounds": [],
        "seconds": {"data": round(time.perf_counter() - t0, 1)},
    }
    got = summary["write_points_kept"]
    print(
        f"arm {cfg.arm}, phases {'+'.join(cfg.phases)}: {got['kept']} of {got['of']} write "
        f"points kept ({got['post_reveal']} post-reveal)",
        file=sys.stderr,
        flush=True,
    )
    if not cfg.score_only:
        cfg.base_arg()  # an hf: base, before any scoring
    adapter: Path | None = None
    for r in range(1 if cfg.score_only else cfg.rounds):
        spec = round_writer(cfg, adapter, r)
        t1 = time.perf_counter()
        points = asyncio.run(score_round(cfg, trajs, spec, r))
        fig2 = _write_scores(cfg, out, r, points)
        info: dict[str, Any] = {
            "round": r,
            "writer": spec,
            "write_points": len(points),
            "by_phase": {ph: sum(p.phase == ph for p in points) for ph in cfg.phases},
            "candidates": sum(len(p.candidates) for p in points),
            "rank_agreement": rank_agreement(points),
            "score_seconds": round(time.perf_counter() - t1, 1),
            **({"fig2": fig2} if fig2 is not None else {}),
        }
        summary["rounds"].append(info)
        if not cfg.score_only:
            adapter = _train_round(cfg, points, r, adapter, info) or adapter
            if adapter is not None and adapter.name == f"round{r}":
                info["vllm"] = _served(cfg, adapter, r)
    if adapter is not None:
        summary["adapter"] = str(adapter)
        summary["writer"] = f"bounded:dssr={point_final(out, adapter)}:{cfg.budget}"
        if adapter.name.removeprefix("round").isdigit():  # one this job trained
            summary["vllm"] = _served(cfg, adapter, int(adapter.name.removeprefix("round")))
    summary["seconds"]["total"] = round(time.perf_counter() - t0, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary
