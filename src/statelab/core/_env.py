"""The environment contract: Gymnasium-style, text actions, structured observations."""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import enum
import hashlib
import json
import threading
from collections.abc import Callable, Mapping
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


#: what one step did (:meth:`Env.outcome`; seed 004's derail rule counts each kind in a row)
MOVED, NO_OP, FORMAT_ERROR = "moved", "no-op", "format error"


class Env(gym.Env[Observation, str], abc.ABC):
    """Base class of every statelab environment.

    Subclasses set the class attributes and implement ``_reset``/``_step``; the base class
    enforces the step budget and fills ``info`` with ``score`` (normalised to [0, 1]),
    ``success`` and ``steps``. Every optional capability (a train split, privileged keys the
    spine reads, a validity oracle, a few-shot player, a world family, images, a map) is
    declared below and off by default; :data:`CAPABILITIES` says what each one enables.
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
    #: splits whose seeds no run may use (held out, e.g. a test set): provenance refuses them
    sealed_splits: ClassVar[tuple[str, ...]] = ()
    #: whether instances of the env may be called from several threads of one process at
    #: once (the runner plays episodes concurrently, each env call on a worker thread). False:
    #: a library it plays through keeps process-wide state (TextWorld's grammar parsers are
    #: module-level objects), so the runner makes every call of such envs wait for the
    #: others (every call of such an env holds :func:`serial_for`: the runner's env calls,
    #: and ``reset``/``step`` themselves, so a replay, an audit or training is safe too)
    thread_safe: ClassVar[bool] = True
    #: static task manual shown first in every prompt
    manual: str

    # -- optional capabilities (all off by default; :data:`CAPABILITIES` names what each
    # enables, and ``check_env`` checks an env keeps what it declares) -------------------
    #: the world family whose text the env speaks (``"household"``, ``"scienceworld"``,
    #: ``"babyai"``): world-model adapters claim envs by it, never by their text ("": none)
    kind: ClassVar[str] = ""
    #: the family of tasks the env's episodes belong to (``"household"``, ``"scienceworld"``,
    #: ``"babyai"``; "": none), with :meth:`current_task` the key under which few-shot
    #: example sets hold their texts; the step context carries both, so no component reads
    #: them from the env's spelling
    task_family: ClassVar[str] = ""
    #: ``info["privileged"]["tracked"]`` holds the true location, inventory and visited
    #: places (:func:`tracked_of`): the stored gold state, few-shot annotations
    tracks_state: ClassVar[bool] = False
    #: ``info["privileged"]["task_type"]`` names the episode's task type (:func:`task_type_of`)
    task_types: ClassVar[bool] = False
    #: ``info["privileged"]["a_star"]`` holds the optimal next command (:func:`a_star_of`)
    optimal_action: ClassVar[bool] = False
    #: ``info["prelude"]`` after a reset holds scripted ``(action, Observation)`` steps played
    #: before the agent acts (:func:`prelude_of`; seed 003's Phase A)
    scripted_prelude: ClassVar[bool] = False
    #: the expert answers from any state reached by replaying actions, not only on its own
    #: path (``statelab audit`` asks it there; ``tests/conformance`` checks the claim)
    expert_any_state: ClassVar[bool] = False

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012 - Gymnasium's own attribute

    def __init__(self, max_steps: int | None = None) -> None:
        self.budget = max_steps if max_steps is not None else type(self).max_steps
        self.observation_space = ObservationSpace()
        self.action_space = gym.spaces.Text(max_length=512)
        self.steps = 0
        self._done = True
        #: set by the runner when a run grounds prompts in images (``Observation.image``)
        self.want_image = False
        #: what :meth:`fingerprint` hashes by default (set by every reset and step)
        self._fingerprinted: Any = None
        #: the goal of the last observation (:meth:`current_task` reads its task type)
        self._goal = ""

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

    # -- optional hooks (an env offers one by overriding it) --------------------------------
    def would_accept(self, action: str) -> bool:
        """Whether the env would accept ``action`` now, asked without stepping it (the
        action-validity oracle of seed 004's WALL-E). Offered when overridden
        (:meth:`has_oracle`); the default has none."""
        raise NotImplementedError(f"env {self.name!r} has no action-validity oracle")

    def outcome(self, info: Mapping[str, Any]) -> str:
        """What the last step did: :data:`NO_OP` (the env read the action and nothing
        happened), :data:`FORMAT_ERROR` (the env could not read it as an action at all) or
        :data:`MOVED`. By default an action the env reported invalid (``info["valid"]``
        False: "Nothing happens.", "No known action matches that input.") is a no-op; an env
        whose own sense of a wasted step differs overrides this (BabyAI)."""
        return MOVED if info.get("valid", True) else NO_OP

    def fingerprint(self) -> str:
        """A short hash of the current instance state, after the last reset or step: equal
        states give equal fingerprints, within an episode (a loop revisits one) and across
        seeds (two seeds that start from one state share one). The runner records it at
        reset and after every step. The default hashes the goal with the privileged
        ``facts`` (the env's own view of its true state), else the observation's facts; an
        env whose state holds more than those (hidden roles, a carried object) overrides it
        with :func:`fingerprint_of` of what it does hold."""
        return fingerprint_of(getattr(self, "_fingerprinted", None))

    @classmethod
    def has_oracle(cls) -> bool:
        """Whether the env overrides :meth:`would_accept`."""
        return cls.would_accept is not Env.would_accept

    def fewshot_expert(self) -> Policy:
        """The player whose traces become few-shot examples: by default the expert; an env
        may offer one that searches as a player would (household)."""
        return self.expert()

    @classmethod
    def has_fewshot_expert(cls) -> bool:
        """Whether the env offers its own few-shot player (overrides :meth:`fewshot_expert`)."""
        return cls.fewshot_expert is not Env.fewshot_expert

    @staticmethod
    def task_type_of_goal(goal: str) -> str | None:
        """The task type a goal sentence names (None: the env cannot read one); few-shot
        examples of that type are chosen for the goal."""
        return None

    @classmethod
    def reads_goal_types(cls) -> bool:
        """Whether the env overrides :meth:`task_type_of_goal`."""
        return cls.task_type_of_goal is not Env.task_type_of_goal

    def current_task(self) -> str | None:
        """The current episode's task within :attr:`task_family` (after a reset; None: the
        env names none): by default the task type its goal names (:meth:`task_type_of_goal`);
        an env whose instance plays one task (a ScienceWorld task, a BabyAI task) names it."""
        return self.task_type_of_goal(self._goal) if self._goal else None

    @classmethod
    def capabilities(cls) -> dict[str, bool]:
        """Whether the env offers each of :data:`CAPABILITIES`, by name."""
        return {c.name: bool(c.offered(cls)) for c in CAPABILITIES}

    # -- the Gymnasium contract ------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        self.steps = 0
        self._done = False
        with serial_for(self):  # whoever calls: the runner, a replay, an audit, training
            obs, info = self._reset(seed, dict(options or {}))
        self._fingerprinted = (obs.goal, _privileged(info).get("facts", obs.facts))
        self._goal = obs.goal
        return self._with_image(obs), self._info(info)

    def step(self, action: str) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        self.steps += 1
        with serial_for(self):
            obs, reward, terminated, info = self._step(str(action))
        self._fingerprinted = (obs.goal, _privileged(info).get("facts", obs.facts))
        self._goal = obs.goal
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


# -- state fingerprints (:meth:`Env.fingerprint`) -------------------------------------------
def fingerprint_of(value: Any) -> str:
    """16 hex digits of BLAKE2b over a canonical form of ``value`` (dataclasses by field,
    mappings and sets sorted, arrays as lists): the same in every process, whatever the hash
    seed, so stores written apart compare."""
    text = json.dumps(_canonical(value), separators=(",", ":"), default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _canonical(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, enum.Enum):
        return f"{type(v).__name__}.{v.name}"
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        fields = {f.name: _canonical(getattr(v, f.name)) for f in dataclasses.fields(v)}
        return {"~": type(v).__name__, **fields}
    if isinstance(v, Mapping):
        items = [[_canonical(k), _canonical(x)] for k, x in v.items()]
        return sorted(items, key=lambda kv: json.dumps(kv[0], default=repr))
    if isinstance(v, set | frozenset):
        return sorted((_canonical(x) for x in v), key=lambda x: json.dumps(x, default=repr))
    if isinstance(v, list | tuple):
        return [_canonical(x) for x in v]
    if hasattr(v, "tolist"):  # numpy arrays and scalars
        return _canonical(v.tolist())
    return repr(v)


# -- the keys of ``info`` the spine reads, and their typed accessors ---------------------------
PRELUDE = "prelude"
TRACKED = "tracked"
TASK_TYPE = "task_type"
A_STAR = "a_star"


def _privileged(info: Mapping[str, Any]) -> Mapping[str, Any]:
    priv = info.get("privileged")
    return priv if isinstance(priv, Mapping) else {}


def prelude_of(info: Mapping[str, Any]) -> tuple[tuple[str, Observation], ...]:
    """The scripted ``(action, Observation)`` steps of a reset's ``info`` (() when none)."""
    return tuple(info.get(PRELUDE, ()))


def tracked_of(info: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The privileged tracked state (``location``, ``inventory``, ``visited``), if any."""
    tracked = _privileged(info).get(TRACKED)
    return tracked if isinstance(tracked, Mapping) else None


def task_type_of(info: Mapping[str, Any]) -> str | None:
    """The privileged task type of the episode, if the env names one."""
    raw = _privileged(info).get(TASK_TYPE)
    return None if raw is None else str(raw)


def a_star_of(info: Mapping[str, Any]) -> str | None:
    """The privileged optimal next command, if the env knows one."""
    a = _privileged(info).get(A_STAR)
    return a if isinstance(a, str) else None


@dataclass(frozen=True)
class Capability:
    """An optional capability of an env: how it is declared, and what lacks without it."""

    name: str
    #: what the env offers when it has it
    help: str
    #: the features a run loses on an env without it
    lacking: str
    offered: Callable[[type[Env]], bool]


#: every optional capability of the env contract, in the order reports list them
CAPABILITIES: tuple[Capability, ...] = (
    Capability(
        "splits", "a 'train' seed split (few-shot examples are played on it)",
        "stateact/react/reflact run without few-shot examples; configs cannot name seeds by "
        "split", lambda c: bool(c.splits.get("train")),
    ),
    Capability(
        "sealed-splits", "held-out splits no run may use (sealed_splits)",
        "provenance guards no held-out seeds", lambda c: bool(c.sealed_splits),
    ),
    Capability(
        "kind", "a world family world-model adapters claim (kind)",
        "belief/memory/walle/bbwm have no adapter: they answer that they have no model of the "
        "env and check nothing", lambda c: bool(c.kind),
    ),
    Capability(
        "task-family", "a task family and each episode's task in it (task_family, current_task)",
        "the conversation prompt and world models find no few-shot example set's text",
        lambda c: bool(c.task_family),
    ),
    Capability(
        "tracked", "privileged tracked state: location, inventory, visited (tracks_state)",
        "steps store no gold state; few-shot states come from TextFacts (else are empty)",
        lambda c: c.tracks_state,
    ),
    Capability(
        "task-types", "a privileged task type per episode (task_types)",
        "few-shot examples are not kept per task type", lambda c: c.task_types,
    ),
    Capability(
        "goal-types", "the task type of a goal sentence (task_type_of_goal)",
        "few-shot examples are chosen by word overlap with the goal",
        lambda c: c.reads_goal_types(),
    ),
    Capability(
        "a-star", "the privileged optimal next command (optimal_action)",
        "oracle-readtime and DSSR's decision loss have no target", lambda c: c.optimal_action,
    ),
    Capability(
        "expert-any-state", "an expert that answers from any state (expert_any_state)",
        "statelab audit has a* only while the agent stayed on the expert's path",
        lambda c: c.expert_any_state,
    ),
    Capability(
        "prelude", "scripted steps before the agent acts (scripted_prelude)",
        "the memory starts from the first observation", lambda c: c.scripted_prelude,
    ),
    Capability(
        "oracle", "an action-validity oracle (would_accept)",
        "walle/bbwm check actions by their adapter's rules only", lambda c: c.has_oracle(),
    ),
    Capability(
        "fewshot-expert", "its own few-shot player (fewshot_expert)",
        "few-shot traces are the expert's", lambda c: c.has_fewshot_expert(),
    ),
    Capability(
        "images", "RGB renderings of observations (render_rgb)",
        "grounding image is refused", lambda c: c.renders_images(),
    ),
    Capability(
        "map", "the true ASCII map in privileged info (privileged_map)",
        "grounding oracle-vot is refused", lambda c: c.privileged_map,
    ),
)  # fmt: skip


#: held by every call of an env that is not thread-safe (``Env.thread_safe`` False): one lock
#: for every such env, since two of them may share a library (cooking and household share
#: TextWorld)
SERIAL = threading.RLock()


def serial_for(env: Any) -> contextlib.AbstractContextManager[Any]:
    """What a call of ``env`` (an env or an env class) holds while it runs: :data:`SERIAL`
    when its class declares itself not thread-safe, else nothing. Every caller of an env's
    methods holds it: the runner's env calls, a replay, an audit's, training's."""
    cls = env if isinstance(env, type) else type(env)
    return contextlib.nullcontext() if getattr(cls, "thread_safe", True) else SERIAL
