"""Agent scaffolds (the ``agent`` axis). An agent never knows which env it is in.

Each agent registers with its declared parameters; the registry parses a spelling into them
(``tools:cc+think`` -> ``collision_check=True, think=1024``) and the factories below only
build from those values.
"""

from __future__ import annotations

from statelab.agents import adapt, react, reflact
from statelab.agents._anchor import anchor_options
from statelab.agents._parse import parse_action
from statelab.agents._stateact_variants import PARAMS as STATEACT_PARAMS
from statelab.agents._stateact_variants import Variant, variant_of
from statelab.agents._tool_options import PLAN_PARAMS, TOOLS_PARAMS, options_of
from statelab.agents.act import ActAgent
from statelab.agents.adapt import AdaptAgent
from statelab.agents.expert import ExpertAgent
from statelab.agents.random import RandomAgent
from statelab.agents.react import make_react
from statelab.agents.reader import ReaderAgent
from statelab.agents.reflact import ReflActAgent
from statelab.agents.stateact import StateActAgent
from statelab.agents.tools import PlanAgent, ToolsAgent
from statelab.core import (
    Agent,
    Args,
    BuildContext,
    ConfigError,
    GenParams,
    Param,
    Registry,
    choice,
)
from statelab.facts import TrafficFacts
from statelab.state.prompt import messages

AGENTS: Registry[Agent] = Registry("agent")

_DECODE = Param(
    "decode", choice("auto", "grammar", "logprob", "free"), "auto",
    "how the action is chosen (auto: constrained where the backend can)", positional=True,
)  # fmt: skip


@AGENTS.register("act", "act[:grammar|logprob|free]", tags=("needs-model",), params=(_DECODE,))
def _act(args: Args, ctx: BuildContext) -> Agent:
    return ActAgent(ctx.params, decode=args.decode)


@AGENTS.register("expert", "expert", tags=("reads-privileged", "expert"))
def _expert(arg: None, ctx: BuildContext) -> Agent:
    return ExpertAgent()


@AGENTS.register("random", "random", tags=("floor",))
def _random(arg: None, ctx: BuildContext) -> Agent:
    from statelab.envs import env_class

    if ctx.env and not env_class(ctx.env).lists_actions:
        raise ConfigError(
            f"agent 'random' draws from the admissible actions; env {ctx.env!r} lists none"
        )
    return RandomAgent()


@AGENTS.register(
    "tools",
    "tools[:cc+short|long+think[=N]+json+visible+random+kin+k=N+n=N+seed=N+cars=N]",
    params=TOOLS_PARAMS,
)
def _tools(args: Args, ctx: BuildContext) -> Agent:
    if ctx.facts_type not in (object, TrafficFacts):
        raise ConfigError(
            f"agent 'tools' needs the moving-car grid (env traffic): its tools are geodesics of "
            f"that grid, not of {ctx.env!r}"
        )
    return ToolsAgent(ctx.params, options_of("tools", args))


@AGENTS.register("plan", "plan[:k][+think[=N]][+kin][+wait]", params=PLAN_PARAMS)
def _plan(args: Args, ctx: BuildContext) -> Agent:
    return PlanAgent(ctx.params, options_of("plan", args))


@AGENTS.register("reader", "reader", tags=("needs-model",))
def _reader(arg: None, ctx: BuildContext) -> Agent:
    return ReaderAgent()


@AGENTS.register(
    "stateact",
    "stateact[:<goal+state+thought|none|all>][/text|json][/anchor|transcript|nolist|strict"
    "|repeats=N|calls=N|chars=N|prompt=view|conversation|examples=<set>]",
    params=STATEACT_PARAMS,
)
def _stateact(args: Args, ctx: BuildContext) -> Agent:
    return StateActAgent(ctx.params, variant_of(args), options=anchor_options(args))


@AGENTS.register("react", "react[:text|json|original][/<stateact options>]", params=react.PARAMS)
def _react(args: Args, ctx: BuildContext) -> Agent:
    return make_react(args, ctx.params)


@AGENTS.register(
    "reflact", "reflact[:text|json][/prompt=view|conversation][/examples=<set>]",
    tags=("needs-model", "thinks"),
    params=reflact.PARAMS,
)  # fmt: skip
def _reflact(args: Args, ctx: BuildContext) -> Agent:
    return ReflActAgent(ctx.params, args.format, options=anchor_options(args))


@AGENTS.register("adapt", "adapt[:<base agent>][@<d_max>[,<steps>]]", params=adapt.PARAMS)
def _adapt(args: Args, ctx: BuildContext) -> Agent:
    if AGENTS.split(args.base)[0] == "adapt":
        raise ConfigError(f"agent 'adapt:{args.base}': the base agent cannot be adapt itself")
    return AdaptAgent(AGENTS.build(args.base, ctx), ctx.params, d_max=args.d_max, steps=args.steps)


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
