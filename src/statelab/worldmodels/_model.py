"""The belief-family world models (seed 004) as one component: what it may reveal
(``mode``) and whether it checks actions (``rules``) are its configuration.

=================  ============  =======  ==============================================
spelling           mode          rules    what the agent gets
=================  ============  =======  ==============================================
``memory``         memory        no       observed facts only; unseen: "not yet observed"
``belief``         belief        no       locations with probabilities (90% mass)
``belief-noprob``  noprob        no       the same support, shuffled, no numbers
``walle``          (none)        yes      no queries; a failing action is rejected
``bbwm``           belief        yes      belief + walle
=================  ============  =======  ==============================================

``:zipf`` (``belief:zipf``, ``bbwm:zipf`` ...) seeds the beliefs from the Zipf prior instead
of the uniform one (section 5.3).

Queries come on the action channel (``query <q>``): :meth:`intercept` answers them instead of
the env, :meth:`extra_actions` offers the forms worth asking to constrained decoding,
:meth:`instructions` tells the agent the interface. The same answers reach ``ctx.world.ask``
(:meth:`answer`). The adapter is the one claiming the env's declared kind (``Env.kind``,
:func:`adapter_for`); on an env no adapter claims, the model answers that it has no model
of it and checks nothing.
"""

from __future__ import annotations

import random
from typing import Any

from statelab.agents.example_sets import example_text
from statelab.core import ConfigError, StepContext, Transition, WorldModel
from statelab.worldmodels import queries as Q
from statelab.worldmodels.adapters import Adapter, adapter_for

#: no-ops, format errors or queries in a row after which an episode ends (section 5)
DERAIL_LIMIT = 10
#: WALL-E's retry budget (the authors' ``walle_max_retries``): after 5 rejections in a row
#: the next proposal goes to the env unchecked
MAX_REJECTIONS = 5
#: how a rejection reads, as the world model's observation of the action (no env step)
REJECTED = "[World model] {feedback}"
UNKNOWN_ENV = "The world model has no model of this environment."
#: (mode, rules) -> the variant whose in-context example opens with a query
EXAMPLE_VARIANTS = {("belief", False): "belief", ("belief", True): "bbwm",
                    ("noprob", False): "belief-noprob"}  # fmt: skip
#: (mode, rules) -> the variant's spelling (``WorldHandle.variant``)
VARIANTS = {("memory", False): "memory", ("belief", False): "belief",
            ("noprob", False): "belief-noprob", ("", True): "walle",
            ("belief", True): "bbwm"}  # fmt: skip
#: the example sets a variant's examples are read from: this prefix and the variant's name
EXAMPLE_SET = "worldmodel:"

QUERY_NOTE = (
    "You can also query a world model that tracks what you have observed{belief}. Instead of "
    "an environment action, write 'query <question>' as your action; the answer comes back as "
    "the next observation and costs no step. Questions: {forms}."
)
QUERY_LIST = (
    "You can also consult a world model that tracks what you have observed{belief}. A query "
    "costs no step and changes nothing: write 'query <question>' as your action and the "
    "answer comes back as the next observation. The queries:{forms}\n"
    "The world model only informs you; you choose the action. When you are stuck or unsure "
    "(you cannot find an object, your actions keep doing nothing, you have lost track of "
    "where things are), query it before you act."
)
WALLE_NOTE = (
    "A world model checks each action before it runs; if it predicts the action would fail, "
    "its feedback comes back as the observation (marked [World model]), no step is used, and "
    "you choose again."
)


def env_kind(env: str) -> str:
    """The world family env spelling ``env`` declares ("" outside an env, or for one
    declaring none)."""
    if not env:
        return ""
    from statelab.envs import env_class

    try:
        return env_class(env).kind
    except (ConfigError, KeyError):
        return ""


class BeliefWorldModel(WorldModel):
    """A belief-based world model; see the module doc for its variants."""

    name = "belief"
    derail_limit: int | None = DERAIL_LIMIT
    max_rejections: int | None = MAX_REJECTIONS

    def __init__(self, mode: str | None, rules: bool, prior: str = "uniform") -> None:
        self.mode, self.rules, self.prior = mode, rules, prior
        self.tags = frozenset(
            ({"answers-queries"} if mode else set()) | ({"validates"} if rules else set())
        )
        self.adapter: Adapter | None = None
        self.rng = random.Random(0)

    @property
    def variant(self) -> str:
        """This model's spelling (``memory``, ``belief``, ``belief-noprob``, ``walle``,
        ``bbwm``; the prior does not change it)."""
        return VARIANTS.get((self.mode or "", self.rules), "belief")

    # -- hooks ----------------------------------------------------------------------------
    def reset(self, ctx: StepContext) -> None:
        self.adapter = adapter_for(env_kind(ctx.env), ctx.observation, self.prior)
        self.rng = random.Random(f"worldmodel-{ctx.seed}")

    def after_step(self, transition: Transition) -> None:
        if self.adapter is not None:
            self.adapter.update(transition.action, transition.observation, transition.valid)

    def answer(self, query: str, ctx: Any) -> str | None:
        if not self.mode:
            return None
        if self.adapter is None:
            return UNKNOWN_ENV
        q = Q.query_text(query)
        return self.adapter.answer(q if q is not None else query, self.mode, self.rng)

    def intercept(self, action: str, ctx: Any) -> str | None:
        """A ``query <q>`` action is answered here; the env is not stepped."""
        if not self.mode or Q.query_text(action) is None:
            return None
        return self.answer(action, ctx)

    def validate(self, action: str, ctx: Any) -> str | None:
        if not self.rules or self.adapter is None or Q.query_text(action) is not None:
            return None
        feedback = self.adapter.check(action, getattr(ctx, "oracle", None))
        return None if feedback is None else REJECTED.format(feedback=feedback)

    def in_context_example(self, ctx: Any) -> str | None:
        """The example with a query for this variant on the episode's task: the text of the
        context's task family and task in the example set ``worldmodel:<variant>``
        (:mod:`statelab.agents.example_sets`, filled by plugins); None for Memory and WALL-E
        (they answer no opening query) and where the set has none."""
        variant = EXAMPLE_VARIANTS.get((self.mode or "", self.rules))
        if variant is None:
            return None
        return example_text(f"{EXAMPLE_SET}{variant}", ctx.task_family, ctx.task)

    def extra_actions(self) -> tuple[str, ...]:
        if not self.mode or self.adapter is None:
            return ()
        return tuple(f"query {f}" for f in self.adapter.query_forms())

    def instructions(self) -> str:
        parts = []
        if self.mode and self.adapter is not None:
            belief = "" if self.mode == "memory" else " and where unseen objects are likely to be"
            helps = self.adapter.query_help(self.mode)
            if all(what for _, what in helps):  # numbered, each with what it answers
                forms = "".join(
                    f"\n{i}. query {q}: {what}." for i, (q, what) in enumerate(helps, start=1)
                )
                parts.append(QUERY_LIST.format(belief=belief, forms=forms))
            else:
                forms = ", ".join(f"'query {q}'" for q, _ in helps)
                parts.append(QUERY_NOTE.format(belief=belief, forms=forms))
        if self.rules and self.adapter is not None:
            parts.append(WALLE_NOTE)
        return "\n".join(parts)
