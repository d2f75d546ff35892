"""``react``: a thought, then the action (Yao et al. 2023, as seed 002 runs it).

ReAct is exactly the StateAct family's ``thought`` row (seed 002, Table 6: "Thought+Act
(ReAct)"), so ``react`` builds the same agent as ``stateact:thought``: one turn

    >thought: <reasoning>
    action: <action>

ReAct's original stop at ``"\\n"`` ends a thought in a two-call loop (thought, then action);
here one call writes both lines, so the reply is cut at the end of the action line instead.
``react:json`` is the ReAct row of Table 7 (``stateact:thought/json``).
"""

from __future__ import annotations

from statelab.agents.stateact import StateActAgent, Variant
from statelab.core import ConfigError, GenParams

REACT = Variant(("thought",))


def react_variant(arg: str | None) -> Variant:
    """``react[:text|json]`` as a StateAct variant."""
    if arg in (None, "", "text"):
        return REACT
    if arg == "json":
        return Variant(("thought",), "json")
    raise ConfigError(f"agent 'react:{arg}': allowed: react, react:text, react:json")


def make_react(arg: str | None, params: GenParams) -> StateActAgent:
    agent = StateActAgent(params, react_variant(arg))
    agent.name = "react"
    agent.label = agent.variant.label  # "Thought+Act (ReAct)", seed 002's row name
    return agent
