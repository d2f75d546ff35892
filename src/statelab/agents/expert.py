"""``expert``: the env's own expert policy, no model. The ceiling row of every table."""

from __future__ import annotations

from statelab.core import LLM, Agent, ConfigError, Decision, StepContext


class ExpertAgent(Agent):
    """Reads the privileged view (the tag gives it one) and asks the env's expert."""

    name = "expert"
    label = "expert (privileged)"
    tags = frozenset({"reads-privileged", "expert"})

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        view = ctx.privileged
        if view is None or view.expert is None:
            raise ConfigError("agent 'expert' needs the env's privileged view")
        action = view.expert.act(ctx.observation, dict(view.info))
        return Decision(action, action)
