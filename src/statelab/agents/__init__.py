"""Agent scaffolds (the ``agent`` axis). An agent never knows which env it is in."""

from __future__ import annotations

from statelab.agents._parse import parse_action
from statelab.agents._prompting import messages
from statelab.agents.act import ActAgent
from statelab.agents.expert import ExpertAgent
from statelab.core import Agent, ConfigError, GenParams, Registry

AGENTS: Registry[Agent] = Registry("agent")


@AGENTS.register("act", "act[:grammar|logprob|free]")
def _act(arg: str | None, params: GenParams) -> Agent:
    return ActAgent(params, decode=arg or "auto")


@AGENTS.register("expert", "expert")
def _expert(arg: str | None, params: GenParams) -> Agent:
    if arg:
        raise ConfigError(f"agent 'expert' takes no argument, got 'expert:{arg}'")
    return ExpertAgent()


def make_agent(spelling: str, params: GenParams) -> Agent:
    name, arg = AGENTS.split(spelling)
    return AGENTS.get(name)(arg, params)


def needs_model(agent: Agent) -> bool:
    return bool(getattr(agent, "needs_model", True))


__all__ = [
    "AGENTS",
    "ActAgent",
    "ExpertAgent",
    "make_agent",
    "messages",
    "needs_model",
    "parse_action",
]
