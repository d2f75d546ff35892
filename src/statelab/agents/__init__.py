"""Agent scaffolds (the ``agent`` axis). An agent never knows which env it is in."""

from __future__ import annotations

from statelab.agents._parse import parse_action
from statelab.agents._prompting import messages
from statelab.agents.act import ActAgent
from statelab.agents.adapt import AdaptAgent
from statelab.agents.adapt import parse_spelling as parse_adapt
from statelab.agents.expert import ExpertAgent
from statelab.agents.react import make_react
from statelab.agents.stateact import StateActAgent, Variant
from statelab.agents.tools import PlanAgent, ToolsAgent, parse_options
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


@AGENTS.register("tools", "tools[:cc+short|long+think[=N]+k=N+n=N+seed=N+cars=N]")
def _tools(arg: str | None, params: GenParams) -> Agent:
    return ToolsAgent(params, parse_options("tools", arg))


@AGENTS.register("plan", "plan[:k][+think[=N]]")
def _plan(arg: str | None, params: GenParams) -> Agent:
    return PlanAgent(params, parse_options("plan", arg))


@AGENTS.register("stateact", "stateact[:<goal+state+thought|none|all>][/text|json]")
def _stateact(arg: str | None, params: GenParams) -> Agent:
    return StateActAgent(params, Variant.parse(arg))


@AGENTS.register("react", "react[:text|json]")
def _react(arg: str | None, params: GenParams) -> Agent:
    return make_react(arg, params)


@AGENTS.register("adapt", "adapt[:<base agent>][@<d_max>[,<steps>]]")
def _adapt(arg: str | None, params: GenParams) -> Agent:
    base, d_max, steps = parse_adapt(arg)
    return AdaptAgent(make_agent(base, params), params, d_max=d_max, steps=steps)


def make_agent(spelling: str, params: GenParams) -> Agent:
    name, arg = AGENTS.split(spelling)
    return AGENTS.get(name)(arg, params)


def needs_model(agent: Agent) -> bool:
    return bool(getattr(agent, "needs_model", True))


__all__ = [
    "AGENTS",
    "ActAgent",
    "AdaptAgent",
    "ExpertAgent",
    "PlanAgent",
    "StateActAgent",
    "ToolsAgent",
    "Variant",
    "make_agent",
    "messages",
    "needs_model",
    "parse_action",
]
