"""World models (the ``worldmodel`` axis, seed 004): components that answer the agent's
questions during *decide*, may reject an action in *validate*, and update after each step.

- ``none``: answers nothing, accepts every action;
- ``memory``, ``belief``, ``belief-noprob``, ``walle``, ``bbwm`` (belief + walle): the
  belief-based world models of :mod:`statelab.worldmodels._model`; ``:zipf`` seeds the beliefs
  from the Zipf prior (``belief:zipf``).

The env-agnostic core is :mod:`~statelab.worldmodels.belief` (categorical beliefs),
:mod:`~statelab.worldmodels.memory` (the deterministic state) and
:mod:`~statelab.worldmodels.queries` (the query interface); one adapter per env
(:mod:`statelab.worldmodels.adapters`) turns observations into their updates.
"""

from __future__ import annotations

from statelab.core import Args, BuildContext, Param, Registry, WorldModel, choice
from statelab.worldmodels._model import DERAIL_LIMIT, BeliefWorldModel

WORLDMODELS: Registry[WorldModel] = Registry("worldmodel")


class NoWorldModel(WorldModel):
    """No world model: every query goes unanswered, every action is accepted."""

    name = "none"


_DERAIL = Param(
    "derail", str, False, "end after 10 no-ops or 10 format errors in a row (seed 004)",
    words={"derail": True}, named=False,
)  # fmt: skip
_PRIOR = Param(
    "prior", choice("uniform", "zipf"), "uniform", "the beliefs' prior", positional=True
)


@WORLDMODELS.register("none", "none[:derail]", params=(_DERAIL,))
def _none(args: Args, ctx: BuildContext) -> WorldModel:
    """``none:derail``: no world model, with seed 004's derail rule (the base rows of its
    figures end after 10 no-ops or 10 format errors in a row, as the world-model rows do;
    see :meth:`statelab.core.Env.outcome`)."""
    model = NoWorldModel()
    if args.derail:
        model.derail_limit = DERAIL_LIMIT
        model.label = "none (derail rule)"
    return model


#: name -> (what where-is may reveal, whether it checks actions, label)
VARIANTS: dict[str, tuple[str | None, bool, str]] = {
    "memory": ("memory", False, "Memory"),
    "belief": ("belief", False, "Belief"),
    "belief-noprob": ("noprob", False, "Belief-NoProb"),
    "walle": (None, True, "WALL-E"),
    "bbwm": ("belief", True, "BB-WM"),
}


def _variant(name: str) -> None:
    mode, rules, label = VARIANTS[name]
    tags = (("answers-queries",) if mode else ()) + (("validates",) if rules else ())

    def build(args: Args, ctx: BuildContext) -> WorldModel:
        model = BeliefWorldModel(mode, rules, args.prior)
        model.label = label + (" (Zipf prior)" if args.prior == "zipf" else "")
        return model

    WORLDMODELS.register(name, f"{name}[:uniform|zipf]", tags=tags, params=(_PRIOR,))(build)


for _name in VARIANTS:
    _variant(_name)

__all__ = ["DERAIL_LIMIT", "VARIANTS", "WORLDMODELS", "BeliefWorldModel", "NoWorldModel"]
