"""Logged episodes as training material: trajectories from a store, the reader's prompt.

A :class:`Trajectory` is one stored episode re-simulated with :func:`statelab.replay`: the env's
scripted prelude (the cooking env's Phase A, as transitions) with the memory state in front of
each of its writes (the logged writer rolled forward from its initial state with the run's
stored replies, as replay does; the state it ends in must equal replay's first state), then
every Phase-B decision with
what the reader had in front of it (the observation, the memory state and its rendering, the
admissible commands), the action taken, a* from the privileged view, and the transition the
writer consumed after it. Training reads a* only as a label; no prompt built here carries a
privileged field.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from statelab.agents.reader import normalise, options, reader_messages
from statelab.core import (
    LLM,
    Memory,
    Message,
    Observation,
    PrivilegedView,
    Prompt,
    Transition,
    frozen_view,
)
from statelab.run.components import Components, prelude_transitions
from statelab.run.replay import ReplayMismatch, StoredReplies, replay, spec_of
from statelab.run.seeding import single
from statelab.run.spec import RunSpec
from statelab.run.store import Store
from statelab.state.view import compose_view
from statelab_seed003.analysis.leaks import privileged_strings


@dataclass(frozen=True)
class Decision:
    """One Phase-B step of a logged episode."""

    t: int
    observation: Observation
    #: the memory state before the action (immutable) and its rendering
    state: Any
    memory: str
    admissible: tuple[str, ...]
    action: str
    #: the optimal command (privileged; a label only), None where the env gave none
    a_star: str | None
    #: what the writer consumed after this step (action, next observation)
    transition: Transition


@dataclass
class Trajectory:
    """A logged episode: prelude transitions and Phase-B decisions (see the module docstring)."""

    run: str
    seed: int
    history: str
    manual: str
    render_obs: Callable[[Observation], str]
    memory: Memory
    prelude: list[Transition] = field(default_factory=list)
    steps: list[Decision] = field(default_factory=list)
    #: the memory state in front of each prelude write (``prelude_states[i]`` is the input
    #: of the write consuming ``prelude[i]``); empty where the prelude was not rolled
    prelude_states: list[Any] = field(default_factory=list)
    #: the prelude index of the reveal (the cookbook read), None where the env has none
    reveal: int | None = None
    #: the privileged recipe's directions naming an ingredient (a label only, never prompted)
    directives: tuple[str, ...] = ()
    #: the stored run's spec (what a continuation rebuilds the episode from); None when
    #: constructed by hand
    spec: RunSpec | None = None

    def decision_points(self) -> list[int]:
        """Indices of the steps with an a* among the admissible commands."""
        return [i for i, d in enumerate(self.steps) if d.a_star and d.a_star in d.admissible]

    def input_state(self, phase: str, j: int) -> Any:
        """The writer's input state at write point ``(phase, j)``: in front of prelude write
        ``j`` (phase ``a``) or of the write after Phase-B step ``j`` (phase ``b``)."""
        return self.prelude_states[j] if phase == "a" else self.steps[j].state

    def transition(self, phase: str, j: int) -> Transition:
        """What the write at ``(phase, j)`` consumes."""
        return self.prelude[j] if phase == "a" else self.steps[j].transition

    def post_reveal(self, phase: str, j: int) -> bool:
        """Whether the write's input state comes after the reveal was written (every Phase-B
        write, and the Phase-A writes after the cookbook's); False without a reveal."""
        if self.reveal is None:
            return False
        return phase == "b" or j > self.reveal

    def holds_directive(self, phase: str, j: int) -> bool:
        """Whether the input state's rendering holds a recipe directive (case and spacing
        ignored)."""
        text = norm(self.memory.render(self.input_state(phase, j)))
        return any(norm(d) in text for d in self.directives)


def norm(text: str) -> str:
    """Lower case, runs of whitespace as one space (how directives are compared)."""
    return " ".join(text.lower().split())


def recipe_directives(recipe: Any) -> tuple[str, ...]:
    """The directions of a privileged recipe that name one of its ingredients ("slice the
    carrot", "fry the carrot"; not "prepare meal", which every recipe ends with), read as the
    leak check reads the recipe (:func:`statelab_seed003.analysis.leaks.privileged_strings`).
    The ingredient lines themselves are not directives: Phase A shows every ingredient before
    the reveal, so a state naming one says nothing about whether the recipe was kept."""
    if not isinstance(recipe, str) or "Directions:" not in recipe or "Ingredients:" not in recipe:
        return ()
    head, body = recipe.split("Ingredients:", 1)[1].split("Directions:", 1)
    foods = [norm(x) for x in head.splitlines() if x.strip()]
    directions = {ln.strip() for ln in body.splitlines() if ln.strip()}
    return tuple(
        s for s in privileged_strings({"recipe": recipe})
        if s in directions and any(f in norm(s) for f in foods)
    )  # fmt: skip


def reader_prompt(traj: Trajectory, history: str, obs: Observation) -> list[Message]:
    """The reader's messages for ``obs`` with ``history`` as the prompt's history part, as the
    episode composes them (the goal line unless the manual says it)."""
    goal = obs.goal
    if goal.strip().rstrip(".") in traj.manual:
        goal = ""
    view = compose_view(history, traj.render_obs(obs), goal)
    prompt = Prompt(manual=traj.manual, view=view, actions=obs.admissible, goal=obs.goal)
    return reader_messages(prompt)


def label(admissible: tuple[str, ...], action: str) -> str:
    """The reader's reply for ``action``: its labelled option (``"3. take carrot"``)."""
    return options(admissible)[admissible.index(action)]


async def decision_nll(
    reader: LLM, msgs: list[Message], admissible: tuple[str, ...], a_star: str
) -> float:
    """The reader's decision loss: -log p(a*) over the labelled options (nats)."""
    logprobs = normalise(list(await reader.score(msgs, options(admissible))))
    return -logprobs[admissible.index(a_star)]


def _runs(st: Store, runs: list[str] | None, histories: list[str] | None) -> list[str]:
    rows = sorted((r["run"], r["spec"]) for r in st.rows("runs", ["run", "spec"]))
    out = []
    for run, spec in rows:
        hist = json.loads(spec).get("history", "")
        if (runs is None or run in runs) and (histories is None or hist in histories):
            out.append(run)
    return out


def trajectories(
    store: str | Path,
    *,
    runs: list[str] | None = None,
    histories: list[str] | None = None,
    seeds: list[int] | None = None,
) -> Iterator[Trajectory]:
    """Every stored episode (rollout 0) of the chosen runs, re-simulated."""
    st = Store(store, readonly=True)
    try:
        chosen = _runs(st, runs, histories)
        plan: list[tuple[str, RunSpec, int]] = []
        for run in chosen:
            spec = spec_of({"spec": st.run_spec(run)})
            got = st.stored_seeds(run, rollout=0)
            plan += [(run, spec, s) for s in got if seeds is None or s in seeds]
    finally:
        st.close()
    for run, spec, seed in plan:
        yield load_trajectory(store, run, spec, seed)


def _prelude_replies(store: str | Path, run: str, seed: int) -> list[str]:
    """The writer replies the run stored for its prelude writes: the first step's calls after
    the agent's own (replay reads them so)."""
    st = Store(store, readonly=True)
    try:
        steps = st.episode_steps(run, seed, 0, ["t", "agent_calls"])
        if not steps:
            return []
        first = steps[0]
        texts = [
            c["text"] for c in st.episode_calls(run, seed, 0, ["t", "text"]) if c["t"] == first["t"]
        ]
    finally:
        st.close()
    return texts[int(first["agent_calls"] or 0) :]


def load_trajectory(store: str | Path, run: str, spec: RunSpec, seed: int) -> Trajectory:
    first = single(spec.env, seed, 0).env_seed  # rollout 0: the seed itself, both seeds
    c = Components.build(spec, first)
    obs, info = c.env.reset(seed=first)
    notes = [n for comp in c.hooked() if (n := comp.instructions())]
    priv = info.get("privileged") or {}
    phase_a = priv.get("phase_a") or {}
    reads = "reads-privileged" in c.memory.tags
    view = PrivilegedView(frozen_view(info), c.env.expert()) if reads else None
    # Phase A: roll the logged writer forward from its initial state with the stored replies
    prelude = [replace(tr, privileged=view) for tr in prelude_transitions(info)]
    stored = StoredReplies()
    stored.queue = _prelude_replies(store, run, seed)
    state = c.memory.init(obs, view)
    states: list[Any] = []
    loop = asyncio.new_event_loop()
    try:
        for tr in prelude:
            states.append(state)
            state, _ = loop.run_until_complete(c.memory.write(state, tr, stored))
    finally:
        loop.close()
    traj = Trajectory(
        run=run,
        seed=seed,
        history=spec.history,
        manual="\n\n".join([c.env.manual, *notes]),
        render_obs=c.render_obs,
        memory=c.memory,
        prelude=prelude,
        prelude_states=states,
        reveal=int(phase_a["reveal"]) if "reveal" in phase_a else None,
        directives=recipe_directives(priv.get("recipe")),
        spec=spec,
    )
    for s in replay(store, run, seed):
        a_star = s.privileged.get("a_star")
        traj.steps.append(
            Decision(
                t=s.t,
                observation=s.observation,
                state=s.state,
                memory=s.memory,
                admissible=tuple(s.admissible or ()),
                action=s.action,
                a_star=str(a_star) if a_star else None,
                transition=Transition(
                    t=s.t,
                    action=s.action,
                    reply=s.reply,
                    reward=s.reward,
                    observation=s.next_observation,
                    terminated=False,
                    truncated=False,
                ),
            )
        )
    if traj.steps and traj.steps[0].state != state:
        raise ReplayMismatch(
            f"{run} seed {seed}: the prelude rolled from the initial state does not end in the"
            " state replay gives the first decision"
        )
    return traj


def reader_examples(trajs: list[Trajectory]) -> list[tuple[list[Message], str]]:
    """Behaviour-cloning pairs: the reader's prompt at every decision point (the state the
    logged history held) -> the labelled a*."""
    out = []
    for traj in trajs:
        for i in traj.decision_points():
            d = traj.steps[i]
            assert d.a_star is not None
            msgs = reader_prompt(traj, d.memory, d.observation)
            out.append((msgs, label(d.admissible, d.a_star)))
    return out
