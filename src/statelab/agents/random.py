"""``random``: uniform over the admissible actions, no model. The floor row of every table.

A model's score reads against two references: the privileged expert above (the ceiling) and
this agent below (the floor). Each step it draws one of the observation's admissible actions
(the world model's extra actions excluded: a floor asks nothing) with a generator seeded from
the episode seed, the step and the number of proposals already rejected in it, so an episode
replays exactly and never reads the clock.
"""

from __future__ import annotations

import random

from statelab.core import LLM, Agent, ConfigError, Decision, StepContext


def draw(actions: tuple[str, ...], seed: int, step: int, attempt: int = 0) -> str:
    """The action the floor plays: uniform over ``actions``, seeded by (seed, step, attempt).

    A string seed is hashed by :class:`random.Random` with SHA-512, the same on every
    platform and Python run (``PYTHONHASHSEED`` does not enter)."""
    if not actions:
        raise ConfigError("agent 'random' needs at least one admissible action")
    return random.Random(f"statelab-random/{seed}/{step}/{attempt}").choice(actions)


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
        action = draw(tuple(actions), ctx.seed, ctx.step, len(ctx.rejected))
        return Decision(action, action)
