"""Logged episodes as training material: trajectories from a store, the reader's prompt.

A :class:`Trajectory` is one stored episode re-simulated with :func:`statelab.replay`: the env's
scripted prelude (the cooking env's Phase A, as transitions), then every Phase-B decision with
what the reader had in front of it (the observation, the memory state and its rendering, the
admissible commands), the action taken, a* from the privileged view, and the transition the
writer consumed after it. Training reads a* only as a label; no prompt built here carries a
privileged field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statelab.agents.reader import normalise, options, reader_messages
from statelab.core import LLM, Memory, Message, Observation, Prompt, Transition
from statelab.run.components import Components, prelude_transitions
from statelab.run.config import RunSpec
from statelab.run.replay import replay, spec_of
from statelab.run.spec import env_seed
from statelab.run.store import Store
from statelab.state.view import compose_view


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

    def decision_points(self) -> list[int]:
        """Indices of the steps with an a* among the admissible commands."""
        return [i for i, d in enumerate(self.steps) if d.a_star and d.a_star in d.admissible]


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
    rows = st.db.execute("SELECT run, spec FROM runs ORDER BY run").fetchall()
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
    st = Store(store)
    try:
        chosen = _runs(st, runs, histories)
        plan: list[tuple[str, RunSpec, int]] = []
        for run in chosen:
            spec_row = st.db.execute("SELECT spec FROM runs WHERE run=?", (run,)).fetchone()
            spec = spec_of({"spec": spec_row[0]})
            got = st.db.execute(
                "SELECT DISTINCT seed FROM steps WHERE run=? AND rollout=0 ORDER BY seed", (run,)
            ).fetchall()
            plan += [(run, spec, int(s)) for (s,) in got if seeds is None or int(s) in seeds]
    finally:
        st.close()
    for run, spec, seed in plan:
        yield load_trajectory(store, run, spec, seed)


def load_trajectory(store: str | Path, run: str, spec: RunSpec, seed: int) -> Trajectory:
    first = env_seed(spec.env, seed, 0)
    c = Components.build(spec, first)
    _, info = c.env.reset(seed=first)
    notes = [n for comp in c.hooked() if (n := comp.instructions())]
    traj = Trajectory(
        run=run,
        seed=seed,
        history=spec.history,
        manual="\n\n".join([c.env.manual, *notes]),
        render_obs=c.render_obs,
        memory=c.memory,
        prelude=prelude_transitions(info),
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
