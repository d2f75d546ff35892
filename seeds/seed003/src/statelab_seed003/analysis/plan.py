"""Seed 003's analysis plan (``configs/seed003/analysis.yaml``): which stores hold the
validation and test episodes, which readers and writers the tables name, the pre-registered
gates G1 (validation) and G2 (test), the selection rule, and the groups Figures 9 and 10 plot.

A **writer** is a label for one or more history spellings; with several (the three DSSR
seeds) a game's success is the mean over them (the seed's "three-seed mean": 28 wins of 270
episodes is 10.4%), and κ pools their audited points game by game.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from statelab.core import ConfigError
from statelab.run.config import read_yaml

#: the label a gate names for the writer the selection picks (G1: "the selected writer")
SELECTED = "selected"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Gate(_Strict):
    """A pre-registered gate: a statistic on one split, its threshold and its rule.

    ``contrast``: success of ``a`` minus ``b`` (points), each game's mean over ``lags``, paired
    bootstrap over games. ``slope``: the per-game gain (``a`` − ``b``) regressed on F′ over
    ``lags`` (points per filler step), bootstrap over games. ``level``: success of ``a``
    (points), the mean over ``lags``. Verdict **pass** iff the 95% interval's lower bound is
    strictly above ``above`` (rule ``lower``) or the mean is (rule ``mean``); else **fail**.
    """

    id: str
    split: Literal["validation", "test"]
    what: str
    kind: Literal["contrast", "slope", "level"] = "contrast"
    #: a writer label, or ``selected``: the writer the plan's selection picks on validation
    #: (:data:`SELECTED`; the one recorded in the selections ledger once the test is opened)
    a: str
    b: str | None = None
    lags: list[int]
    budget: int | None = None
    reader: str | None = None
    above: float = 0.0
    rule: Literal["lower", "mean"] = "lower"
    #: the filler protocol of the episodes it reads (``post``: F′, the pre-registered one;
    #: ``pre``: the original F): a store holding both never mixes them in a gate
    protocol: Literal["post", "pre"] = "post"

    @model_validator(mode="after")
    def _shape(self) -> Gate:
        if self.kind != "level" and self.b is None:
            raise ValueError(f"gate {self.id}: a {self.kind} needs b")
        if self.kind == "slope" and len(set(self.lags)) < 2:
            raise ValueError(f"gate {self.id}: a slope needs two lags or more")
        return self


class Selection(_Strict):
    """The seed's rule (Appendix G): the candidate with the highest validation success at
    ``budget``, averaged over ``lags`` (each game's mean over F′, then the mean over games);
    a tie goes to the candidate listed first."""

    candidates: list[str] = Field(min_length=1)
    budget: int = 128
    lags: list[int] = [0, 10, 20, 40]
    reader: str | None = None
    protocol: Literal["post", "pre"] = "post"


class Table2(_Strict):
    rows: list[str]
    contrasts: list[tuple[str, str]] = []
    pooled_lags: list[int] = [20, 40]
    budget: int = 128


class Table14(_Strict):
    budgets: list[int] = [64, 128, 256]
    reader: str | None = None
    #: writer labels (each several spellings: the three DSSR seeds) printed as one row per
    #: budget, each game's mean over the label's writers at that B (their forms: the
    #: spellings without the budget), instead of a row per writer
    means: list[str] = []


class Table7(_Strict):
    """Table 7: κ, β and δ_full by relevance-lag bin (``bins``: the bins' lower edges, the
    last bin open; our choice: the seed names no bins) at ``budget``, on ``split``."""

    split: Literal["validation", "test"] = "validation"
    #: the experiment config (or store) to read instead of the plan's ``split``
    experiment: str | None = None
    bins: list[int] = [0, 5, 10, 20, 40]
    budget: int | None = 128

    @field_validator("bins")
    @classmethod
    def _rising(cls, v: list[int]) -> list[int]:
        if not v or any(b <= a for a, b in pairwise(v)) or v[0] < 0:
            raise ValueError("bins: rising lower edges from 0 or more")
        return v


class KappaContrasts(_Strict):
    """Appendix G's round-by-round κ contrasts: each pair (a, b), the relative change of
    mean κ (%) at F′ = 0 and pooled over ``pooled_lags``, game-paired, on ``split``."""

    split: Literal["validation", "test"] = "validation"
    #: the experiment config (or store) to read instead of the plan's ``split``
    experiment: str | None = None
    pairs: list[tuple[str, str]] = Field(min_length=1)
    pooled_lags: list[int] = [20, 40]
    budget: int | None = 128
    reader: str | None = None


class FillerKappa(_Strict):
    """Appendix F's κ contrasts: for each writer of ``rows``, mean κ at F = ``lags[1]`` minus
    at F = ``lags[0]`` (nats) at ``budget``, game-clustered over the games audited at both,
    once per filler protocol of the store ("for F = 40 minus F = 0 at B = 128, the contrasts
    were −0.20, −0.34 and +0.24 nats for SUMMARY, BELIEF and SLOTS" under protocol F)."""

    split: Literal["validation", "test"] = "validation"
    #: the experiment config (or store) to read instead of the plan's ``split``
    experiment: str | None = None
    rows: list[str] = Field(min_length=1)
    lags: tuple[int, int] = (0, 40)
    budget: int | None = 128
    reader: str | None = None


class LagGrid(_Strict):
    """Appendix I's exploratory grid: success of ``rows`` and ``baseline`` by F′ at
    ``budget``, the gains over the baseline, and (``by_start_room``) the same split by
    whether the reader's first decision is in the kitchen (re-simulated)."""

    split: Literal["validation", "test"] = "validation"
    #: the experiment config (or store) to read instead of the plan's ``split``
    experiment: str | None = None
    rows: list[str] = Field(min_length=1)
    baseline: str
    budget: int = 256
    reader: str | None = None
    by_start_room: bool = True


class TieCheck(_Strict):
    """Appendix F's a*-tie check: ``sample`` steps where the reader's action was not a*
    (episodes in a ``seed``-ed order, re-simulated), and how often it shortened the plan."""

    split: Literal["validation", "test"] = "validation"
    #: the experiment config (or store) to read instead of the plan's ``split``
    experiment: str | None = None
    sample: int = Field(500, ge=1)
    seed: int = 0
    reader: str | None = None


class Pairwise(_Strict):
    """§5.5's ablations: every pairwise success difference among the trained writers
    ``rows`` (points, paired over games) at F′ = 0 and pooled over ``pooled_lags``, at
    ``budget``, on ``split``; with ``spread`` (a label of several spellings: the DSSR seeds)
    each spelling's success at F′ = 0 ("the zero-lag test seed spread"); with
    ``ceiling_budget`` the highest success of any LLM-written state at that budget, over
    every F′ ("at B = 64 no LLM writer wins more than 2.2%")."""

    split: Literal["validation", "test"] = "test"
    rows: list[str] = Field(min_length=2)
    pooled_lags: list[int] = [20, 40]
    budget: int = 128
    reader: str | None = None
    spread: str | None = None
    ceiling_budget: int | None = 64


class Fig4Source(_Strict):
    scores: str
    store: str


class Plan(_Strict):
    """The whole analysis plan."""

    name: str
    validation: str | None = None
    test: str | None = None
    #: label -> reader model spelling (the runs' ``model``)
    readers: dict[str, str] = Field(default_factory=dict)
    #: label -> history spellings (several: a game's mean over them)
    writers: dict[str, list[str]] = Field(default_factory=dict)
    gates: list[Gate] = []
    selection: Selection | None = None
    table2: Table2 | None = None
    table14: Table14 | None = None
    #: Figures 9 and 10: line label -> writer label
    fig9: dict[str, str] = Field(default_factory=dict)
    fig10: dict[str, str] = Field(default_factory=dict)
    #: Figure 4: DSSR score files (``scores_round<r>.jsonl``), each with the store of the
    #: episodes it scored (``statelab seed003 tables`` re-simulates them to read the recipes)
    fig4: list[Fig4Source] = []
    table7: Table7 | None = None
    kappa_contrasts: KappaContrasts | None = None
    filler_kappa: FillerKappa | None = None
    lag_grid: LagGrid | None = None
    tie_check: TieCheck | None = None
    pairwise: Pairwise | None = None
    out: str = "results/seed003-analysis"

    @field_validator("writers", mode="before")
    @classmethod
    def _lists(cls, v: object) -> object:
        if isinstance(v, dict):
            return {k: [x] if isinstance(x, str) else x for k, x in v.items()}
        return v

    @model_validator(mode="after")
    def _names(self) -> Plan:
        named = set(self.writers)
        used = [g.a for g in self.gates] + [g.b for g in self.gates if g.b]
        if self.selection:
            used += self.selection.candidates
        if self.table2:
            used += self.table2.rows + [x for c in self.table2.contrasts for x in c]
        used += list(self.fig9.values()) + list(self.fig10.values())
        if self.table14:
            used += self.table14.means
        if self.kappa_contrasts:
            used += [x for c in self.kappa_contrasts.pairs for x in c]
        if self.lag_grid:
            used += [*self.lag_grid.rows, self.lag_grid.baseline]
        if self.filler_kappa:
            used += self.filler_kappa.rows
        if self.pairwise:
            used += self.pairwise.rows + ([self.pairwise.spread] if self.pairwise.spread else [])
        if SELECTED in named:
            raise ValueError(f"writers: {SELECTED!r} names the selection's pick, not a writer")
        if self.selection is not None:
            named.add(SELECTED)
        unknown = [u for u in used if u not in named]
        if unknown and unknown[0] == SELECTED:
            raise ValueError(f"a gate names {SELECTED!r} but the plan has no selection")
        if unknown:
            raise ValueError(f"writer {unknown[0]!r} is not in writers: {sorted(named)}")
        readers = [g.reader for g in self.gates if g.reader]
        more = (self.selection, self.table14, self.kappa_contrasts, self.lag_grid, self.tie_check,
                self.pairwise, self.filler_kappa)  # fmt: skip
        readers += [x.reader for x in more if x and x.reader]
        bad = [r for r in readers if r not in self.readers]
        if bad:
            raise ValueError(f"reader {bad[0]!r} is not in readers: {sorted(self.readers)}")
        return self


def ledger_dir(plan: Plan) -> Path | None:
    """Where the plan's test split is opened (its experiment's ``out``, which holds the
    openings and selections ledgers): the test experiment's ``out``, or for a store named
    directly (``<out>/<name>/store.sqlite``) the folder above its own; None without a test."""
    if plan.test is None:
        return None
    if plan.test.endswith(".sqlite"):
        return Path(plan.test).parent.parent
    from statelab.run.config import load_experiment

    return Path(load_experiment(plan.test).out)


def load_plan(path: str | Path) -> Plan:
    """Read and validate an analysis plan (one :class:`ConfigError` line when invalid)."""
    from pydantic import ValidationError

    data = read_yaml(Path(path))
    try:
        return Plan.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"{path}: {where}: {first['msg']}") from None


__all__ = [
    "SELECTED",
    "Fig4Source",
    "FillerKappa",
    "Gate",
    "KappaContrasts",
    "LagGrid",
    "Pairwise",
    "Plan",
    "Selection",
    "Table2",
    "Table7",
    "Table14",
    "TieCheck",
    "ledger_dir",
    "load_plan",
]
