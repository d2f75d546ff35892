"""Agent scaffolds (the ``agent`` axis). An agent never knows which env it is in."""

from __future__ import annotations

from statelab.agents._parse import parse_action
from statelab.agents._prompting import messages
from statelab.agents.act import ActAgent
from statelab.agents.adapt import AdaptAgent
from statelab.agents.adapt import parse_spelling as parse_adapt
from statelab.agents.expert import ExpertAgent
from statelab.agents.random import RandomAgent
from statelab.agents.react import make_react
from statelab.agents.reader import ReaderAgent
from statelab.agents.reflact import ReflActAgent
from statelab.agents.stateact import StateActAgent, Variant
from statelab.agents.stateact import parse_spelling as parse_stateact
from statelab.agents.tools import PlanAgent, ToolsAgent, parse_options
from statelab.core import Agent, BuildContext, ConfigError, GenParams, Registry
from statelab.facts import TrafficFacts

AGENTS: Registry[Agent] = Registry("agent")


@AGENTS.register("act", "act[:grammar|logprob|free]", tags=("needs-model",))
def _act(arg: str | None, ctx: BuildContext) -> Agent:
    return ActAgent(ctx.params, decode=arg or "auto")


@AGENTS.register("expert", "expert", tags=("reads-privileged", "expert"))
def _expert(arg: str | None, ctx: BuildContext) -> Agent:
    return ExpertAgent()


@AGENTS.register("random", "random", tags=("floor",))
def _random(arg: str | None, ctx: BuildContext) -> Agent:
    from statelab.envs import env_class

    if ctx.env and not env_class(ctx.env).lists_actions:
        raise ConfigError(
            f"agent 'random' draws from the admissible actions; env {ctx.env!r} lists none"
        )
    return RandomAgent()


@AGENTS.register("tools", "tools[:cc+short|long+think[=N]+k=N+n=N+seed=N+cars=N]")
def _tools(arg: str | None, ctx: BuildContext) -> Agent:
    if ctx.facts_type not in (object, TrafficFacts):
        raise ConfigError(
            f"agent 'tools' needs the moving-car grid (env traffic): its tools are geodesics of "
            f"that grid, not of {ctx.env!r}"
        )
    return ToolsAgent(ctx.params, parse_options("tools", arg))


@AGENTS.register("plan", "plan[:k][+think[=N]]")
def _plan(arg: str | None, ctx: BuildContext) -> Agent:
    return PlanAgent(ctx.params, parse_options("plan", arg))


@AGENTS.register("reader", "reader", tags=("needs-model",))
def _reader(arg: str | None, ctx: BuildContext) -> Agent:
    return ReaderAgent()


@AGENTS.register(
    "stateact",
    "stateact[:<goal+state+thought|none|all>][/text|json][/anchor|transcript|nolist|strict"
    "|repeats=N|calls=N|chars=N]",
)
def _stateact(arg: str | None, ctx: BuildContext) -> Agent:
    variant, options = parse_stateact(arg)
    return StateActAgent(ctx.params, variant, options=options)


@AGENTS.register("react", "react[:text|json|original][/<stateact options>]")
def _react(arg: str | None, ctx: BuildContext) -> Agent:
    return make_react(arg, ctx.params)


@AGENTS.register("reflact", "reflact[:text|json]", tags=("needs-model", "thinks"))
def _reflact(arg: str | None, ctx: BuildContext) -> Agent:
    if arg not in (None, "", "text", "json"):
        raise ConfigError(f"agent 'reflact:{arg}': allowed: reflact, reflact:text, reflact:json")
    return ReflActAgent(ctx.params, arg or "text")


@AGENTS.register("adapt", "adapt[:<base agent>][@<d_max>[,<steps>]]")
def _adapt(arg: str | None, ctx: BuildContext) -> Agent:
    base, d_max, steps = parse_adapt(arg)
    return AdaptAgent(AGENTS.build(base, ctx), ctx.params, d_max=d_max, steps=steps)


def make_agent(spelling: str, params: GenParams | None = None) -> Agent:
    """Build an agent outside an episode (tests, notebooks): stamped like the runner's."""
    return AGENTS.build(spelling, BuildContext(params=params or GenParams()))


__all__ = [
    "AGENTS",
    "ActAgent",
    "AdaptAgent",
    "ExpertAgent",
    "PlanAgent",
    "RandomAgent",
    "ReaderAgent",
    "ReflActAgent",
    "StateActAgent",
    "ToolsAgent",
    "Variant",
    "make_agent",
    "messages",
    "parse_action",
]
