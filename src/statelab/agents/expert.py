"""``expert``: the env's own expert policy, no model. The ceiling row of every table."""

from __future__ import annotations

from typing import Any

from statelab.core import LLM, Agent, Decision, Prompt


class ExpertAgent(Agent):
    name = "expert"
    needs_model = False

    async def decide(self, prompt: Prompt, llm: LLM | None, **components: Any) -> Decision:
        action = components["expert"].act(components["obs"], components["info"])
        return Decision(action, action)
