"""The environment contract: Gymnasium-style, text actions, structured observations."""

from __future__ import annotations

import abc
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Protocol

import gymnasium as gym


@dataclass(frozen=True)
class Observation:
    """What an agent may see after a reset or a step.

    ``text`` is the environment's own natural-language rendering (feedback + state).
    ``feedback`` is the event part of it alone (what the last action did), ``facts`` the
    structured state that formats render. Privileged truth never lives here: it is in
    ``info["privileged"]``.
    """

    text: str
    facts: Any
    admissible: tuple[str, ...] | None
    goal: str
    feedback: str = ""
    image: Any | None = None


class ObservationSpace(gym.Space[Observation]):
    """A Gymnasium space whose members are :class:`Observation` objects."""

    def __init__(self) -> None:
        super().__init__(shape=None, dtype=None)

    def contains(self, x: Any) -> bool:
        return isinstance(x, Observation)

    def sample(self, mask: Any = None, probability: Any = None) -> Observation:  # pragma: no cover
        raise TypeError("observations of a text environment cannot be sampled")


class Policy(Protocol):
    """Something that maps an observation (and privileged info) to an action string."""

    def act(self, obs: Observation, info: dict[str, Any]) -> str: ...


class Env(gym.Env[Observation, str], abc.ABC):
    """Base class of every statelab environment.

    Subclasses set the class attributes and implement ``_reset``/``_step``; the base class
    enforces the step budget and fills ``info`` with ``score`` (normalised to [0, 1]),
    ``success`` and ``steps``.
    """

    #: short config name, e.g. ``"hanoi"``
    name: ClassVar[str]
    #: default step budget (Table 2 of seed 000 for its envs)
    max_steps: ClassVar[int]
    #: default number of past steps kept by the ``full`` history (Table 2)
    history_len: ClassVar[int]
    #: the kind of ``Observation.facts`` (decides which formats apply)
    facts_type: ClassVar[type]
    #: the format used when a config says ``default`` (SmartPlay's default for seed 000 envs)
    default_format: ClassVar[str]
    #: whether the action set is the same at every step (then it joins the prompt's static head)
    static_actions: ClassVar[bool] = False
    #: whether every observation lists the admissible actions (``Observation.admissible``);
    #: the ``random`` floor row draws from them, so configs add it only where this holds
    lists_actions: ClassVar[bool] = True
    #: fixed, disjoint seed ranges by split name (e.g. "train" for few-shot examples, "test")
    splits: ClassVar[dict[str, range]] = {}
    #: whether ``info["privileged"]["map"]`` holds the true ASCII map (``oracle-vot``)
    privileged_map: ClassVar[bool] = False
    #: the least normalised score of a won episode (1.0: a win is a full score; ScienceWorld
    #: counts a task won at 70 of its 100 points, so 0.7 there)
    win_score: ClassVar[float] = 1.0
    #: static task manual shown first in every prompt
    manual: str

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012 - Gymnasium's own attribute

    def __init__(self, max_steps: int | None = None) -> None:
        self.budget = max_steps if max_steps is not None else type(self).max_steps
        self.observation_space = ObservationSpace()
        self.action_space = gym.spaces.Text(max_length=512)
        self.steps = 0
        self._done = True
        #: set by the runner when a run grounds prompts in images (``Observation.image``)
        self.want_image = False

    # -- to implement -------------------------------------------------------------------
    @abc.abstractmethod
    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode; return the first observation and info (with ``privileged``)."""

    @abc.abstractmethod
    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        """Apply one action; return (observation, reward, terminated, info)."""

    @abc.abstractmethod
    def expert(self) -> Policy:
        """The env's expert policy (reads privileged info); plays through ``step``."""

    def score(self) -> float:
        """Normalised score of the current state, in [0, 1]; 1 means the task is done.

        By default 1 on success and 0 otherwise; envs with partial credit override it."""
        return 1.0 if self.success() else 0.0

    @abc.abstractmethod
    def success(self) -> bool:
        """Whether the task is accomplished."""

    # -- the Gymnasium contract ------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        self.steps = 0
        self._done = False
        obs, info = self._reset(seed, dict(options or {}))
        return self._with_image(obs), self._info(info)

    def step(self, action: str) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        self.steps += 1
        obs, reward, terminated, info = self._step(str(action))
        truncated = not terminated and self.steps >= self.budget
        self._done = terminated or truncated
        return self._with_image(obs), reward, terminated, truncated, self._info(info)

    def _with_image(self, obs: Observation) -> Observation:
        if self.want_image and obs.image is None:
            return replace(obs, image=self.render_rgb())
        return obs

    def render_rgb(self) -> Any:
        """An RGB uint8 array (H, W, 3) of what the agent currently sees (None: no images)."""
        return None

    @classmethod
    def renders_images(cls) -> bool:
        """Whether the env draws its observations (it overrides :meth:`render_rgb`)."""
        return cls.render_rgb is not Env.render_rgb

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        info.setdefault("privileged", {})
        info["score"] = self.score()
        info["success"] = self.success()
        info["steps"] = self.steps
        return info

    def render(self) -> str:
        return self._last_text()

    def _last_text(self) -> str:
        """The last observation's text (envs that keep it in ``self._text`` need nothing)."""
        return str(getattr(self, "_text", ""))
