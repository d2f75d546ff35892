"""Reader behaviour cloning with DAgger and the acceptance bar (seed 003, Appendix B).

Iteration 0 behaviour-clones a* on the logged episodes (every decision point of the chosen
runs -> the labelled a*). Each DAgger iteration i >= 1 then lets the reader of iteration
i - 1 play the ``dagger`` games itself (agent ``reader``, its states written by the
``dagger.writer`` model: the untrained base by default, as the seed's readers see states of
untrained writers), labels every state it visits with a* (the expert's command from that
state: the env's privileged ``a_star``), adds those examples to all earlier ones and trains
a fresh adapter on the aggregate. After every iteration the reader plays the ``eval`` games
online; the success of each iteration is recorded, and the **acceptance bar** is applied to
the last one (the one used as the frozen reader).

*The bar.* The seed gives it by its outcomes only: on the 45 validation games R1 "reaches
97.8% online success after iteration 2 and meets acceptance" (44/45) and Phi-4-mini
"reaches 77.8% and misses the bar by one game" (35/45): one more game, 36/45, meets it, so
the bar is 80% of the games (:data:`BAR`), i.e. at least ceil(0.8 n) of n eval episodes won.
A reader that misses it is still the reader the run writes (the seed used Phi-4-mini's
iteration 2 for the transfer rows and reported its shortfall): ``summary.json`` says
``accepted`` and by how many games it fell short.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from statelab.core import Message

#: the acceptance bar: the share of eval games the reader must win (see the module)
BAR = 0.8

Examples = list[tuple[list[Message], str]]
#: trains an adapter on examples into a folder (``statelab_seed003.train.trainers.sft``'s signature)
Fit = Callable[..., Any]


class Dagger(BaseModel):
    """DAgger iterations: the games the reader plays to be labelled."""

    model_config = ConfigDict(extra="forbid")

    #: DAgger iterations after the BC pass (the seed's R1: 2)
    iterations: int = Field(2, ge=0, le=16)
    env: list[str]
    seeds: list[int]
    history: list[str] = ["full"]
    #: the model writing the reader's states while it plays ("base": the untrained base
    #: model, the seed's wiring; "acting": the reader itself; or any model spec)
    writer: str = "base"
    max_steps: int | None = None


def acceptance(won: int, of: int, bar: float = BAR) -> dict[str, Any]:
    """The bar applied to ``won`` of ``of`` eval episodes: the games needed, whether they
    were won, by how many games the reader fell short (0 when accepted)."""
    needed = math.ceil(bar * of - 1e-9)
    return {
        "bar": bar,
        "won": won,
        "of": of,
        "rate": round(won / of, 4) if of else None,
        "needed": needed,
        "accepted": of > 0 and won >= needed,
        "short_by": max(0, needed - won),
    }


def writer_spec(writer: str, base: str) -> str | None:
    """The writer axis value for the reader's collection and eval runs (None: the acting
    model, i.e. no writer axis)."""
    if writer == "acting":
        return None
    return base if writer == "base" else writer


def pooled(online: dict[str, Any]) -> tuple[int, int]:
    """(won, played) over every history of an online check."""
    won = sum(int(v[0]) for v in online["success"].values())
    return won, sum(int(v[1]) for v in online["success"].values())


def train_reader(
    cfg: Any,
    *,
    load: Callable[[Any], list[Any]],
    online: Callable[[Any, str, str], dict[str, Any]],
    fit: Fit | None = None,
    model_of: Callable[[Path], str] | None = None,
) -> dict[str, Any]:
    """BC, then ``cfg.dagger.iterations`` DAgger iterations, each checked online; the last
    adapter is written to ``<out>/reader`` and ``summary.json`` records every iteration and
    the bar. ``load`` gives the logged trajectories of the config, ``online`` plays the eval
    games (``statelab_seed003.train.pipeline`` passes both); ``fit`` (default: LoRA SFT) and
    ``model_of`` (the model spec of an adapter folder; default ``<base>?adapter=<dir>``)
    are what a test replaces."""
    from statelab_seed003.train.data import reader_examples, trajectories
    from statelab_seed003.train.trainers import sft

    train: Fit = fit if fit is not None else sft
    spec_of = model_of or (lambda d: f"{cfg.base}?adapter={d}")
    out = cfg.out_dir()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    trajs = load(cfg)
    examples: Examples = reader_examples(trajs)
    histories = sorted({t.history for t in trajs})
    iters: list[dict[str, Any]] = []
    rounds = cfg.dagger.iterations if cfg.dagger is not None else 0
    adapter = out / "reader"
    for i in range(rounds + 1):
        row: dict[str, Any] = {"iteration": i}
        if i > 0:  # the previous reader plays; every state it visits is labelled with a*
            assert cfg.dagger is not None
            played = collect(cfg, spec_of(adapter), f"{cfg.name}-dagger{i}")
            new = list(trajectories(played["store"]))
            row.update(collected=len(new), collect_seconds=played["seconds"])
            got = reader_examples(new)
            row["added"] = len(got)
            examples = examples + got
        where = out / f"iter{i}"
        meta = {"store": cfg.store, "histories": histories, "dagger_iteration": i}
        res = train(examples, where, base=cfg.base_arg(), hyper=cfg.hyper_(),
                  kind="reader-bc" if i == 0 else "reader-dagger", meta=meta)  # fmt: skip
        row.update(examples=len(examples), steps=res.steps, losses=res.losses,
                   train_seconds=round(res.seconds, 1))  # fmt: skip
        if adapter.exists():
            shutil.rmtree(adapter)
        shutil.copytree(where, adapter)
        if cfg.eval is not None:
            got_online = online(cfg, spec_of(where), f"{cfg.name}-online{i}")
            row["online"] = got_online
            row["acceptance"] = acceptance(*pooled(got_online), cfg.bar)
        iters.append(row)
    summary: dict[str, Any] = {
        "adapter": str(adapter),
        "model": spec_of(adapter),
        "episodes": len(trajs),
        "histories": histories,
        "examples": len(examples),
        "iterations": iters,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if iters and "acceptance" in iters[-1]:
        summary["acceptance"] = iters[-1]["acceptance"]
        summary["online"] = iters[-1]["online"]
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def collect(cfg: Any, model: str, name: str) -> dict[str, Any]:
    """The reader ``model`` plays the DAgger games into a store of its own."""
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    d = cfg.dagger
    grid: dict[str, Any] = {"env": d.env, "agent": ["reader"], "history": d.history}
    if (w := writer_spec(d.writer, cfg.base)) is not None:
        grid["writer"] = [w]
    data = {"name": name, "model": model, "seeds": d.seeds, "max_steps": d.max_steps,
            "grid": grid, "out": str(cfg.out_dir()), "cache": None, "concurrency": 1,
            "expert": False, "random": False}  # fmt: skip
    exp = parse_experiment(data)
    t0 = time.perf_counter()
    run_sync(exp, progress=None)
    seconds = round(time.perf_counter() - t0, 1)
    return {"store": str(exp.out_dir / "store.sqlite"), "seconds": seconds}
