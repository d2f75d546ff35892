"""A run: one choice per axis of the table of axes, plus sampling and budget."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from statelab.core import MODEL_AXES, MODEL_FREE, ConfigError
from statelab.envs import env_class
from statelab.llm import public_spec
from statelab.run.axes import AXES, BY_NAME, NAMES, canonical_value


def resolve_format(env: str, fmt: str) -> str:
    return str(env_class(env).default_format) if fmt == "default" else fmt


@dataclass(frozen=True)
class RunSpec:
    """One choice per axis: everything that defines a run (and its key in the store)."""

    #: (axis, value) for every axis of :data:`AXES`, in its order
    values: tuple[tuple[str, str], ...]
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    max_steps: int | None = None
    #: per-episode limits (:mod:`statelab.run.limits`): wall_s, tokens, dollars
    limits: dict[str, Any] = field(default_factory=dict, hash=False)
    #: every rollout replays the seed's instance with its own sampling seeds
    #: (:mod:`statelab.run.seeding`)
    replay: bool = False

    @classmethod
    def make(
        cls,
        *,
        params: dict[str, Any] | None = None,
        max_steps: int | None = None,
        limits: Any = None,  # a mapping of limit names (Any: axes come as **str)
        replay: Any = False,  # a bool (Any: axes come as **str)
        as_written: Any = False,  # a bool (Any: axes come as **str)
        **axes: Any,  # a spelling, or a mapping with a name (:meth:`Axis.canonical`)
    ) -> RunSpec:
        """A spec from axis values by name; an axis left out takes its default. Every value
        is held in its canonical spelling (:meth:`Axis.canonical`): ``hanoi:disks=4`` and
        ``hanoi:4`` make the same spec, with one key. ``as_written`` keeps the spellings
        as given: the spec statelab made before values were canonical (a store's old key)."""
        unknown = set(axes) - set(NAMES)
        if unknown:
            raise ConfigError(f"{sorted(unknown)} not axes; axes: {', '.join(NAMES)}")

        def canonical(name: str, value: Any) -> Any:
            return value if as_written else canonical_value(name, value)

        values: list[tuple[str, str]] = []
        for a in AXES:
            v = canonical(a.name, axes.get(a.name, a.default))
            if v is None:
                raise ConfigError(f"a run needs a value on axis {a.name!r}")
            if a.name == "format":  # "default": the env's own format, named
                v = canonical("format", resolve_format(dict(values)["env"], v))
            values.append((a.name, v))
        return cls(tuple(values), dict(params or {}), max_steps, dict(limits or {}), bool(replay))

    @classmethod
    def from_stored(cls, spec: str | dict[str, Any], as_written: bool = False) -> RunSpec:
        """The spec of a stored run (its ``spec`` column: JSON, or the mapping it holds),
        its values canonical (``as_written``: as stored). A run without a model stores "-"
        on every model axis: the ones other than ``model`` read as their defaults."""
        data = json.loads(spec) if isinstance(spec, str) else dict(spec)
        params, max_steps = data.pop("params", {}), data.pop("max_steps", None)
        limits, again = data.pop("limits", None), data.pop("replay", False)
        if data.get("model") == MODEL_FREE:
            for name in MODEL_AXES:
                if name != "model" and data.get(name) == MODEL_FREE:
                    del data[name]
        return cls.make(
            params=params,
            max_steps=max_steps,
            limits=limits,
            replay=again,
            as_written=as_written,
            **data,
        )

    def __getattr__(self, name: str) -> str:
        if name in BY_NAME:
            return dict(self.values)[name]
        raise AttributeError(name)

    @property
    def axes_values(self) -> dict[str, str]:
        return dict(self.values)

    @property
    def key(self) -> str:
        """Stable across releases: an axis added later is part of the key only when set to
        something other than its default, so existing stores keep their run keys. Model
        specs enter without credentials (a changed password is the same run)."""
        body: dict[str, Any] = {
            name: public_spec(value) if name in MODEL_AXES else value
            for name, value in self.values
            if BY_NAME[name].core or value != BY_NAME[name].default
        }
        body.update(params=self.params, max_steps=self.max_steps)
        if self.limits:  # only when set: runs without limits keep their keys
            body["limits"] = self.limits
        if self.replay:  # only when set, as limits
            body["replay"] = True
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def uses_model(self) -> bool:
        return self.model != MODEL_FREE

    def axes(self) -> dict[str, str]:
        """The run's value on each axis as stored and shown: a model-free run (the expert)
        shows "-" on the axes that do not apply to it, and model specs lose any credentials."""
        return {
            name: (
                (public_spec(value) if name in MODEL_AXES else value)
                if self.uses_model or BY_NAME[name].model_free
                else MODEL_FREE
            )
            for name, value in self.values
        }

    @property
    def label(self) -> str:
        shown = self.axes()
        if not self.uses_model:
            return " | ".join(v for n, v in shown.items() if BY_NAME[n].model_free)
        parts = [
            v
            for n, v in shown.items()
            if n not in ("grounding",) and (BY_NAME[n].core or v != BY_NAME[n].default)
        ]
        if shown["grounding"] != "none":
            parts.insert(5, shown["grounding"])
        return " | ".join(parts)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.values)
