"""Where a household task's object may start, and how likely each receptacle is: one
definition read by the game generator (:mod:`statelab.envs._household_gen`) and by the belief
world model (:mod:`statelab.worldmodels.adapters.household`), so the prior the world model
reports is the law the games were drawn from.

Every name here is lower case, as the game prints it ("cabinet 3" is of type "cabinet").

- **May hold** (:func:`allowed_types`): ALFWorld's ``VAL_RECEPTACLE_OBJECTS`` (receptacle type
  -> the object types it may hold), inverted.
- **Never starts in** (:func:`never_starts_in`): ALFWorld's task sampler
  (``alfworld.gen.game_states.task_game_state.TaskGameState.get_filter_crit`` and the planner's
  refusal of a goal already satisfied, ``alfworld.gen.agents.plan_agent``): a pick-and-place or
  pick-two object never starts in a receptacle of the goal's type (the game would be won, and
  pick-two says so outright); a clean / heat / cool object never starts in its appliance (the
  sink basin, microwave, fridge) but may start in the goal's type ("heat some egg and put it
  in garbagecan" may start in the garbage can); a look-at object may start anywhere it fits.
- **Uniform prior** (:func:`uniform_prior`): equal mass on every listed receptacle instance
  whose type may hold the object (a type with more instances carries more mass); no
  exclusion; all receptacles when none may (an unknown type, e.g. a desk lamp).
- **Zipf law** (seed 004, section 5.3; :func:`zipf_ranks`, :func:`zipf_type_weights`,
  :func:`zipf_prior`, :func:`draw`): per object type, the receptacle types that may hold it in
  one seeded shuffle (:data:`ZIPF_RANK_SEED`: object types visited in sorted order, each one's
  sorted types shuffled by a single ``random.Random``); rank ``k`` (its place in that full
  list) weighs ``k ** -1.25``; the types present in the scene and not excluded (the goal's
  type, except for look-at tasks) are renormalised; a type's mass is split evenly over its
  instances. A game's object is placed the same way: a type by these weights, then one of its
  instances uniformly.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from functools import cache

ZIPF_ALPHA = 1.25
#: the seed of the one shuffle that ranks every object type's receptacle types
ZIPF_RANK_SEED = 20260923
#: the appliance of each transform (lower case)
APPLIANCE = {"clean": "sinkbasin", "heat": "microwave", "cool": "fridge"}


def type_of(name: str) -> str:
    """'cabinet 3' -> 'cabinet' (a name without a number is its own type)."""
    head, _, tail = name.rpartition(" ")
    return head if head and tail.isdigit() else name


@cache
def allowed_types() -> dict[str, frozenset[str]]:
    """Object type -> the receptacle types that may hold it (ALFWorld's constraint)."""
    from alfworld.gen.constants import VAL_RECEPTACLE_OBJECTS

    inverse: dict[str, set[str]] = {}
    for rtype, otypes in VAL_RECEPTACLE_OBJECTS.items():
        for otype in otypes:
            inverse.setdefault(otype.lower(), set()).add(rtype.lower())
    return {o: frozenset(r) for o, r in inverse.items()}


def never_starts_in(act: str, dest: str) -> frozenset[str]:
    """The receptacle types a task's object never starts in, by ALFWorld's sampler. ``act``:
    ``pick_and_place``, ``picktwo``, ``clean``, ``heat``, ``cool`` or ``look``; ``dest`` the
    goal's receptacle type."""
    if act in APPLIANCE:
        return frozenset({APPLIANCE[act]})
    if act in ("pick_and_place", "picktwo"):
        return frozenset({dest.lower()})
    return frozenset()


def zipf_exclusions(act: str, dest: str) -> frozenset[str]:
    """The types the Zipf law drops: the goal's type, except for look-at tasks (whose
    "destination" is the lamp)."""
    return frozenset() if act == "look" or not dest else frozenset({dest.lower()})


@cache
def zipf_ranks(seed: int = ZIPF_RANK_SEED) -> dict[str, tuple[str, ...]]:
    """Object type -> the receptacle types that may hold it, most likely first."""
    rng = random.Random(seed)
    ranks: dict[str, tuple[str, ...]] = {}
    for otype, rtypes in sorted(allowed_types().items()):
        order = sorted(rtypes)
        rng.shuffle(order)
        ranks[otype] = tuple(order)
    return ranks


def zipf_type_weights(
    otype: str, present: Iterable[str], exclude: Iterable[str] = (), alpha: float = ZIPF_ALPHA
) -> dict[str, float]:
    """Normalised Zipf mass of the ``present`` receptacle types not in ``exclude``; rank
    ``k`` of :func:`zipf_ranks` weighs ``k ** -alpha``. Empty when none is left."""
    here, gone = set(present), set(exclude)
    kept = [
        (rtype, k ** (-alpha))
        for k, rtype in enumerate(zipf_ranks().get(otype.lower(), ()), start=1)
        if rtype in here and rtype not in gone
    ]
    total = sum(w for _, w in kept)
    return {rtype: w / total for rtype, w in kept} if kept else {}


def uniform_prior(otype: str, receptacles: Sequence[str]) -> dict[str, float]:
    """Equal mass on the ``receptacles`` (names) whose type may hold ``otype``; all of them
    when none may. Only positive entries, in the given order."""
    may = allowed_types().get(otype.lower(), frozenset())
    names = [r for r in receptacles if type_of(r) in may] or list(receptacles)
    return {r: 1.0 / len(names) for r in names} if names else {}


def zipf_prior(
    otype: str, receptacles: Sequence[str], exclude: Iterable[str] = ()
) -> dict[str, float]:
    """The Zipf law over receptacle instances: each type's mass split evenly over its
    instances. When no ranked type is left, equal mass on the receptacles not excluded."""
    by_type = instances_by_type(receptacles)
    weights = zipf_type_weights(otype, by_type, exclude)
    if not weights:
        gone = set(exclude)
        names = [r for r in receptacles if type_of(r) not in gone] or list(receptacles)
        return {r: 1.0 / len(names) for r in names} if names else {}
    share = {r: weights[t] / len(by_type[t]) for t in weights for r in by_type[t]}
    return {r: share[r] for r in receptacles if r in share}


def instances_by_type(receptacles: Iterable[str]) -> dict[str, list[str]]:
    """Receptacle type -> its instances (names), in the given order."""
    out: dict[str, list[str]] = {}
    for r in receptacles:
        out.setdefault(type_of(r), []).append(r)
    return out


def draw(
    rng: random.Random, weights: Mapping[str, float], by_type: Mapping[str, Sequence[str]]
) -> str:
    """A receptacle by the Zipf law: a type by ``weights`` (types in sorted order), then one
    of its instances uniformly (instances in sorted order)."""
    types = sorted(weights)
    rtype = rng.choices(types, weights=[weights[t] for t in types], k=1)[0]
    return rng.choice(sorted(by_type[rtype]))


__all__ = [
    "APPLIANCE",
    "ZIPF_ALPHA",
    "ZIPF_RANK_SEED",
    "allowed_types",
    "draw",
    "instances_by_type",
    "never_starts_in",
    "type_of",
    "uniform_prior",
    "zipf_exclusions",
    "zipf_prior",
    "zipf_ranks",
    "zipf_type_weights",
]
