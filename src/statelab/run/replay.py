"""Replay a stored episode: re-simulate it from its actions through the env and check it.

``replay(store, run, seed)`` rebuilds the run's env and memory writer from the stored spec,
resets the env with the episode's seed, and steps it with the stored actions. After every step
the observation text and the reward must equal what was stored, or :class:`ReplayMismatch`
says where they part. Each step yields what the agent had in front of it: the observation, the
memory state (an immutable value), the admissible actions, the action taken, and the
privileged view (hidden truth, the expert's policy) — what writer training (seed 003) and
offline re-scoring of a representation stand on.

The memory is rewritten as the run wrote it: a model-written memory (``summary``) gets the
stored writer replies back, so its states are the run's own; pass ``writer=`` (any LLM) to
rewrite it with another model instead (then only the env is checked against the store).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from statelab.core import (
    LLM,
    Completion,
    GenParams,
    Message,
    Observation,
    PrivilegedView,
    Transition,
    Usage,
    frozen_view,
)
from statelab.run.components import Components, prelude_transitions
from statelab.run.seeding import EpisodeSeeds, stored_seeds
from statelab.run.spec import RunSpec
from statelab.run.store import Store


class ReplayMismatch(RuntimeError):
    """The env did not reproduce a stored step (a changed env, or a different version)."""


@dataclass(frozen=True)
class ReplayStep:
    """One stored step, as the agent faced it, plus what followed."""

    t: int
    observation: Observation
    #: the memory state before the action, and its rendering (the prompt's history part)
    state: Any
    memory: str
    admissible: tuple[str, ...] | None
    action: str
    reply: str
    privileged: PrivilegedView
    reward: float
    next_observation: Observation


class StoredReplies(LLM):
    """Answers a step's writer calls with the replies the run stored for them, in order."""

    model_id = "replay:stored"

    def __init__(self) -> None:
        self.queue: list[str] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        if not self.queue:
            raise ReplayMismatch("the memory asked for more writer calls than the run stored")
        return Completion(self.queue.pop(0), Usage(0, 0), cached=True)


def spec_of(row: dict[str, Any]) -> RunSpec:
    """The RunSpec of a stored run (its ``spec`` column; :meth:`RunSpec.from_stored`)."""
    return RunSpec.from_stored(row["spec"])


def replay(
    store: Store | str | Path,
    run: str,
    seed: int,
    rollout: int = 0,
    *,
    writer: LLM | None = None,
    history: str | None = None,
) -> Iterator[ReplayStep]:
    """Yield every step of the stored episode ``(run, seed, rollout)``, re-simulated.
    ``history`` re-simulates the memory as that history instead of the run's (e.g. ``full``
    for a memory whose writes score with the model, which stored replies cannot answer)."""
    own = not isinstance(store, Store)
    st = Store(store, readonly=True) if not isinstance(store, Store) else store
    try:
        spec = spec_of({"spec": st.run_spec(run)})
        if history is not None:
            spec = RunSpec.make(
                params=spec.params,
                max_steps=spec.max_steps,
                limits=spec.limits,
                replay=spec.replay,
                **{**spec.axes_values, "history": history},
            )
        cols = ["t", "action", "reply", "observation", "reward", "agent_calls"]
        steps = [tuple(r.values()) for r in st.episode_steps(run, seed, rollout, cols)]
        seeds = _seeds_of(st, spec, run, seed, rollout)
        calls = [
            tuple(r.values()) for r in st.episode_calls(run, seed, rollout, ["t", "i", "text"])
        ]
    finally:
        if own:
            st.close()
    if not steps:
        raise KeyError(f"no stored steps for run {run!r} seed {seed} rollout {rollout}")
    by_step: dict[int, list[str]] = {}
    for t, _i, text in calls:
        by_step.setdefault(int(t), []).append(text)
    yield from _simulate(spec, seeds, steps, by_step, writer)


def _seeds_of(st: Store, spec: RunSpec, run: str, seed: int, rollout: int) -> EpisodeSeeds:
    """The seeds the stored episode played (recorded, or scheme 1's for an older store)."""
    have = set(st.columns("episodes"))
    cols = [c for c in ("env_seed", "sampling_seed") if c in have]
    where = {"run": run, "seed": seed, "rollout": rollout}
    row = next(iter(st.rows("episodes", cols, where)), {}) if cols else {}
    return stored_seeds(spec.env, seed, rollout, spec.replay, row.get("env_seed"),
                        row.get("sampling_seed"))  # fmt: skip


def _simulate(
    spec: RunSpec,
    seeds: EpisodeSeeds,
    steps: list[tuple[Any, ...]],
    calls: dict[int, list[str]],
    writer: LLM | None,
) -> Iterator[ReplayStep]:
    first = seeds.env_seed
    c = Components.build(spec, seeds.sampling_seed)
    env, memory = c.env, c.memory
    expert = env.expert()
    stored = StoredReplies()
    model = writer or stored
    loop = asyncio.new_event_loop()
    try:
        obs, info = env.reset(seed=first)

        def view(info: dict[str, Any]) -> PrivilegedView:
            return PrivilegedView(frozen_view(info), expert)

        state = memory.init(obs, view(info) if "reads-privileged" in memory.tags else None)
        # the env's scripted prelude: its writer replies come first in the first step's calls
        t0, calls0 = int(steps[0][0]), int(steps[0][5] or 0)
        stored.queue = list(calls.get(t0, [])[calls0:])
        for tr in prelude_transitions(info):
            tr = replace(tr, privileged=view(info) if "reads-privileged" in memory.tags else None)
            state, _ = loop.run_until_complete(memory.write(state, tr, model))
        carried: list[str] | None = stored.queue
        for t, action, reply, observation, reward, agent_calls in steps:
            before, before_info = obs, info
            obs, r, terminated, truncated, info = env.step(action)
            if obs.text != observation or abs(float(r) - float(reward or 0.0)) > 1e-9:
                raise ReplayMismatch(
                    f"step {t}: the env gave {obs.text[:80]!r} (reward {r:g}); the store has "
                    f"{str(observation)[:80]!r} (reward {float(reward or 0):g})"
                )
            yield ReplayStep(
                t=int(t),
                observation=before,
                state=state,
                memory=memory.render(state),
                admissible=before.admissible,
                action=action,
                reply=reply or "",
                privileged=view(before_info),
                reward=float(r),
                next_observation=obs,
            )
            if carried is not None:  # the first step: what the prelude left
                stored.queue, carried = carried, None
            else:
                stored.queue = list(calls.get(int(t), [])[int(agent_calls or 0) :])
            tr = Transition(
                t=int(t),
                action=action,
                reply=reply or "",
                reward=float(r),
                observation=obs,
                terminated=terminated,
                truncated=truncated,
                valid=bool(info.get("valid", True)),
                privileged=view(info) if "reads-privileged" in memory.tags else None,
            )
            state, _ = loop.run_until_complete(memory.write(state, tr, model))
    finally:
        loop.close()
