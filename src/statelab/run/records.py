"""What the runner records: one :class:`EpisodeRecord` per episode, one :class:`StepRecord`
per env step (the store writes them; :mod:`statelab.run.store` re-exports both)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

#: an episode played to its end: the env ended it (``reason`` ``terminated``), its step budget
#: did (``max_steps``: the env's protocol, not a cut), or the agent or seed 004's derail rule
#: stopped it (``stopped``)
DONE = "done"
#: an episode cut by a per-episode limit (:mod:`statelab.run.limits`; ``reason`` names it:
#: ``wall_s``, ``tokens`` or ``dollars``) after its last stored step; scored as it stands at the
#: cut (the env's score at that step)
TRUNCATED = "truncated"
#: an episode an error ended (``error`` says which; ``reason`` whose: ``model``, ``env``,
#: ``store`` or ``error``); the steps it played before the error are stored, it is not scored,
#: and a rerun of the experiment plays it again (replacing them)
FAILED = "failed"
#: the statuses of an episode that counts as a result (scored, never played again on resume);
#: every reader that selects scored episodes selects these
FINISHED: tuple[str, ...] = (DONE, TRUNCATED)


@dataclass
class StepRecord:
    """One env step as stored (a ``steps`` row): what the agent saw (``view``, ``memory``,
    ``grounding``), wrote (``reply``) and did (``action``: ``parsed`` onto an admissible one,
    ``valid`` for the env), what came back (``reward``, ``observation``), its tokens (acting
    ``agent_*``, auxiliary ``aux_*``), time (``latency`` of the model, ``overhead`` of the
    rest) and its model calls, world-model queries and component metadata."""

    t: int
    view: str
    grounding: str
    reply: str
    action: str
    parsed: bool
    valid: bool
    reward: float
    observation: str
    memory: str
    agent_in: int
    agent_out: int
    aux_in: int
    aux_out: int
    latency: float
    overhead: float
    #: JSON of ``info["privileged"]["tracked"]`` after the step (gold state), if the env has it
    gold: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    #: world-model questions asked during *decide*, with their answers
    queries: list[dict[str, Any]] = field(default_factory=list)
    #: per-step component metadata (tools offered, rejected proposals ...)
    meta: dict[str, Any] = field(default_factory=dict)
    #: the acting calls of this env step (VoT, constrained StateAct and ADaPT make several)
    agent_calls: int = 0
    #: the env's state fingerprint after the step (:meth:`statelab.core.Env.fingerprint`:
    #: 16 hex digits; a loop revisits one); None in a store written before it was recorded
    env_state: str | None = None


class Staged(Protocol):
    """Where a :class:`Trajectory` keeps its final steps (:class:`statelab.run._staging.
    Staging`: the store connection's temp tables)."""

    def read(self, start: int, stop: int) -> Iterator[StepRecord]: ...


class Trajectory(Sequence[StepRecord]):
    """The steps of an episode in flight into a store, standing in for its list: a step is
    appended whole and stays in memory while it may still change (the last one: an agent's
    stop, a limit's cut and the env's fingerprint are written into it); once a later one is
    recorded, the episode's text sink writes its rows into the store connection's temp tables
    (:mod:`statelab.run._staging`) and the record lets it go. So an episode in flight holds its
    last step and a count, whatever its length; ``len``, indexing and iteration read the staged
    steps back (their texts as keys), and the episode's commit copies them into the store."""

    def __init__(self, staged: Staged) -> None:
        self.staged = staged
        #: steps written to the temp tables (the first ones), and those held after them
        self.n_staged = 0
        self.held: list[StepRecord] = []

    def append(self, step: StepRecord) -> None:
        self.held.append(step)

    def to_stage(self) -> list[StepRecord]:
        """The held steps that are final (every one but the last)."""
        return self.held[:-1]

    def staged_out(self, n: int) -> None:
        """The first ``n`` held steps are staged now: let them go."""
        del self.held[:n]
        self.n_staged += n

    def __len__(self) -> int:
        return self.n_staged + len(self.held)

    @overload
    def __getitem__(self, i: int) -> StepRecord: ...
    @overload
    def __getitem__(self, i: slice) -> list[StepRecord]: ...
    def __getitem__(self, i: int | slice) -> StepRecord | list[StepRecord]:
        if isinstance(i, slice):
            return list(self)[i]
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("trajectory index out of range")
        if j >= self.n_staged:
            return self.held[j - self.n_staged]
        return next(iter(self.staged.read(j, j + 1)))

    def __iter__(self) -> Iterator[StepRecord]:
        held = list(self.held)
        yield from self.staged.read(0, self.n_staged)
        yield from held

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Trajectory({self.n_staged} staged, {len(self.held)} held)"


@dataclass
class EpisodeRecord:
    """One episode as stored (an ``episodes`` row): its run, seed and rollout, its status
    (:data:`DONE`, :data:`TRUNCATED` or :data:`FAILED`) and why (``reason``), its outcome, its
    totals and the :class:`StepRecord` of every step it played (a failed one's too)."""

    run: str
    seed: int
    status: str
    #: which episode of the seed this is (seed 000's rollouts); statistics pair on ``seed``
    rollout: int = 0
    #: the seed the env was reset with (the seed itself for rollout 0;
    #: :mod:`statelab.run.seeding`)
    env_seed: int | None = None
    #: the seed the episode's sampling derives from (None in stores before seeding scheme 2)
    sampling_seed: int | None = None
    #: the seeding scheme that chose both (:data:`statelab.run.seeding.SCHEME`; None: scheme 1)
    seeding: int | None = None
    #: the config seed this episode belongs to (the same as ``seed``; kept for readers)
    grp: int = -1
    error: str | None = None
    #: why it ended, by status (:data:`DONE`, :data:`TRUNCATED`, :data:`FAILED`); None in
    #: stores written before this column
    reason: str | None = None
    score: float = 0.0
    success: bool = False
    steps: int = 0
    reward: float = 0.0
    agent_calls: int = 0
    agent_in: int = 0
    agent_out: int = 0
    aux_in: int = 0
    aux_out: int = 0
    cached_calls: int = 0
    model_calls: int = 0
    wall_s: float = 0.0
    #: US dollars of the model calls made for this episode (cache hits cost nothing); ``None``
    #: when no call's price is known
    cost: float | None = None
    #: the built components' descriptions (spelling, label, tags) by axis
    components: dict[str, Any] = field(default_factory=dict)
    #: the env's state fingerprint at reset (:meth:`statelab.core.Env.fingerprint`): seeds
    #: that share one started from one instance; None before it was recorded
    start_state: str | None = None
    #: the steps: a list, or while in flight into a store a :class:`Trajectory` (its earlier
    #: steps in the store's temp tables)
    trajectory: list[StepRecord] | Trajectory = field(default_factory=list)
