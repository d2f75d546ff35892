"""Episode continuations (seed 003's OUTCOME score and Figure 2's outcome).

The outcome of a candidate state at write point ``(phase, j)`` of a logged episode is the return
of that episode continued from the candidate: the env is **forked** at the write point by a
fresh reset with the episode's seed and the stored actions replayed up to it (the cooking env
plays its scripted Phase A inside the reset; the prelude it gives must equal the logged one,
action for action and observation for observation, and every replayed step's observation and
reward must equal the log, or :class:`~statelab.run.replay.ReplayMismatch` says where they
part); the candidate is installed as the writer's current state (for a Phase-A point the writer
first carries it through the rest of the prelude); then the frozen reader acts and the writer
carries the state on, each step as an episode plays it (:meth:`statelab.run.episode.Episode.
play_step`: its stages, the run's derail rule, fed the replayed prefix too, its per-episode
limits, counted over the continuation, and the live-progress hook), until the episode ends or
``steps`` continued actions (the horizon). The return is the
sum of the episode's rewards: the replayed prefix's (the same for every candidate of a point)
plus the continuation's.

The continuation of the state the logged writer wrote at that point, with the run's own models,
is the logged episode itself (the test of this module).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from statelab.core import FORMAT_ERROR, LLM, Memory, Transition
from statelab.run.components import prelude_transitions
from statelab.run.episode import Episode
from statelab.run.replay import ReplayMismatch
from statelab.run.spec import RunSpec
from statelab_seed003.train.data import Trajectory


@dataclass(frozen=True)
class Continuation:
    """A continued episode: its Phase-B actions, observation texts and rewards (the replayed
    prefix first), how many were continued, and the return."""

    actions: tuple[str, ...]
    observations: tuple[str, ...]
    rewards: tuple[float, ...]
    #: actions taken after the fork (the rest were replayed)
    continued: int
    #: whether the episode ended (by the env, the derail rule, a limit or the agent's stop)
    #: rather than at the horizon
    ended: bool
    success: bool

    @property
    def ret(self) -> float:
        """The episode's return: the sum of its rewards."""
        return float(sum(self.rewards))


def continuation_spec(spec: RunSpec, agent: str | None = "reader") -> RunSpec:
    """The logged run's spec with the acting agent ``agent`` (the frozen reader; None: the
    run's own agent)."""
    if agent is None or spec.agent == agent:
        return spec
    return RunSpec.make(
        params=spec.params,
        max_steps=spec.max_steps,
        limits=spec.limits,
        **{**spec.axes_values, "agent": agent},
    )


def _check_prelude(traj: Trajectory, info: dict[str, Any]) -> list[Transition]:
    got = prelude_transitions(info)
    want = [(tr.action, tr.observation.text) for tr in traj.prelude]
    if [(tr.action, tr.observation.text) for tr in got] != want:
        raise ReplayMismatch(
            f"{traj.run} seed {traj.seed}: the fresh reset's prelude differs from the logged one"
        )
    return got


async def _replay_to(ep: Episode, traj: Trajectory, upto: int) -> tuple[list[float], bool]:
    """Step the env with the logged actions of Phase-B steps 0..upto-1 (checked), telling
    every component but the memory (the candidate replaces what it would have written);
    the rewards, and whether the env ended."""
    rewards, done = [], False
    for i in range(upto):
        d = traj.steps[i]
        reward, terminated, truncated = await ep.step_env(d.action)
        want = d.transition.observation.text
        if ep.obs.text != want or abs(reward - d.transition.reward) > 1e-9:
            raise ReplayMismatch(
                f"{traj.run} seed {traj.seed} step {i}: the fork gave {ep.obs.text[:80]!r} "
                f"(reward {reward:g}); the log has {want[:80]!r} (reward {d.transition.reward:g})"
            )
        tr = replace(d.transition, reward=reward, terminated=terminated, truncated=truncated)
        ep.derail.see(ep.c.env.outcome(ep.info) if d.action.strip() else FORMAT_ERROR)
        for comp in ep.c.hooked():
            if comp is not ep.c.memory:
                comp.after_step(replace(tr, privileged=ep.privileged_for(comp)))
        rewards.append(reward)
        done = terminated or truncated
    return rewards, done


async def _install(
    ep: Episode, traj: Trajectory, phase: str, j: int, state: Any
) -> tuple[list[float], bool]:
    """Reset, fork at ``(phase, j)`` and make ``state`` the writer's current state."""
    ep.obs, ep.info = await ep.env("reset", ep.c.env.reset, seed=ep.env_seed)
    first = ep.compose()
    for comp in ep.c.hooked():
        comp.reset(ep.context(comp, first))
    prelude = _check_prelude(traj, ep.info)
    mem = ep.c.memory
    if phase == "a":
        ep.state = state
        for tr in prelude[j + 1 :]:
            ep.state, _ = await mem.write(
                ep.state, replace(tr, privileged=ep.privileged_for(mem)), ep.writer
            )
        rewards: list[float] = []
        done = False
    else:
        rewards, done = await _replay_to(ep, traj, j + 1)
        ep.state = state
    ep.history = mem.render(ep.state)
    return rewards, done


async def continue_episode(
    traj: Trajectory,
    phase: str,
    j: int,
    state: Any,
    writer: Memory,
    reader: LLM,
    writer_llm: LLM,
    *,
    steps: int | None = None,
    agent: str | None = "reader",
) -> Continuation:
    """The logged episode ``traj`` forked at write point ``(phase, j)`` with ``state`` as the
    state written there, continued with ``agent`` on ``reader`` acting and ``writer`` (a
    memory, on ``writer_llm``) carrying the state, for at most ``steps`` actions."""
    if traj.spec is None:
        raise ValueError(f"{traj.run}: a trajectory without its run's spec cannot be continued")
    ep = Episode(continuation_spec(traj.spec, agent), traj.seed, reader, writer=writer_llm)
    ep.c.parts["history"] = writer
    try:
        rewards, done = await _install(ep, traj, phase, j, state)
        prefix = [d.action for d in traj.steps[: len(rewards)]]
        observations = [d.transition.observation.text for d in traj.steps[: len(rewards)]]
        n = 0
        ep.started = time.perf_counter()  # per-episode limits count the continuation only
        while not done and (steps is None or n < steps):
            recorded = len(ep.record.trajectory)
            done = await ep.play_step()  # the run's derail rule, limits and hook included
            if len(ep.record.trajectory) == recorded:  # the agent stopped: no step
                break
            last = ep.record.trajectory[-1]
            prefix.append(last.action)
            observations.append(last.observation)
            rewards.append(last.reward)
            n += 1
    finally:
        with contextlib.suppress(Exception):
            await ep.env("close", ep.c.env.close)
    return Continuation(
        tuple(prefix), tuple(observations), tuple(rewards), n, done,
        bool(ep.info.get("success", False)),
    )  # fmt: skip


def outcome_of(
    traj: Trajectory,
    phase: str,
    j: int,
    writer: Memory,
    reader: LLM,
    writer_llm: LLM,
    *,
    steps: int | None = None,
) -> Callable[[Any], Awaitable[float]]:
    """The OUTCOME score of write point ``(phase, j)``: a candidate state -> the return of the
    episode continued from it (:func:`continue_episode`)."""

    async def ret(state: Any) -> float:
        got = await continue_episode(traj, phase, j, state, writer, reader, writer_llm, steps=steps)
        return got.ret

    return ret
