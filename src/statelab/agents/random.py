"""``random``: uniform over the admissible actions, no model. The floor row of every table.

A model's score reads against two references: the privileged expert above (the ceiling) and
this agent below (the floor). Each step it draws one of the observation's admissible actions
(the world model's extra actions excluded: a floor asks nothing) from the episode's own
sampling stream: the episode's sampling seed (rollout included: every (seed, rollout) pair
of a run has its own, :mod:`statelab.run.seeding`), spawned by NumPy's
:class:`~numpy.random.SeedSequence` per step and per proposal already rejected in it. Streams
of different keys are independent by construction, an episode replays exactly, and nothing
reads the clock.
"""

from __future__ import annotations

import numpy as np

from statelab.core import LLM, Agent, ConfigError, Decision, StepContext

#: the first word of every floor stream's SeedSequence entropy (keeps it apart from others)
FLOOR_WORD = 0xF100


def draw(actions: tuple[str, ...], seed: int, step: int, attempt: int = 0) -> str:
    """The action the floor plays: uniform over ``actions``, from the stream of sampling
    seed ``seed`` spawned for (``step``, ``attempt``) (``SeedSequence((FLOOR_WORD, seed),
    spawn_key=(step, attempt))``, PCG64, an unbiased integer draw)."""
    if not actions:
        raise ConfigError("agent 'random' needs at least one admissible action")
    stream = np.random.SeedSequence((FLOOR_WORD, seed), spawn_key=(step, attempt))
    return actions[int(np.random.Generator(np.random.PCG64(stream)).integers(len(actions)))]


class RandomAgent(Agent):
    """Plays a uniformly drawn admissible action each step; never calls a model."""

    name = "random"
    label = "random (floor)"
    tags = frozenset({"floor"})

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        actions = ctx.observation.admissible
        if actions is None:
            raise ConfigError(
                f"agent 'random' needs admissible actions; env {ctx.env or '?'!r} lists none"
            )
        action = draw(tuple(actions), ctx.sampling_seed, ctx.step, len(ctx.rejected))
        return Decision(action, action)
