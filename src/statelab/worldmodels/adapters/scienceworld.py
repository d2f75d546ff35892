"""The ScienceWorld adapter: Appendix B of seed 004, room-level, as the authors' world
model reads the same observations.

It claims the envs of kind ``"scienceworld"``. It reads the env's text only (never
privileged info): the task description, and each step's action and answer.

The state and the beliefs are :class:`~._scienceworld_belief.RoomState`'s (its docstring
gives every update): the goal (the target and the room the task names for it, every other
subject the task places in a room, in the text's own words: "seeds", "animals", "boxes"), the
searched rooms and what their last look around listed, the containers' contents and each
object's (room, container), the agent's room, inventory (what it was seen to pick up) and
focus, and one room belief per tracked type: the target and every stated subject from the
start, any other type from the first query about it. Which rooms a type may start in is the
package's own table (``scienceworld_rooms.json``, derived from the starting world of every
variation by ``scripts/scienceworld_rooms.py``), for the task's form, else over all tasks.

Queries (B.5), in the authors' words: ``where is <obj>`` ("X is in the R, in the C." once
listed in a container; "The world model cannot help you with this query." for a type that
neither the task, the table nor the episode tells of; "X is most likely in: R (1.00)." once
located or carried; else the unsearched rooms by belief until 90%, "and other rooms (N%)"),
``what is in <room or container>``, ``searched <room>``, ``state``. Belief-NoProb names the
unsearched rooms without numbers (shuffled); Memory only what was observed.

The first observation: the env's look around, folded in; or, on the authors' start (the
env's ``start=task``: the observation is the task description), nothing is folded.

WALL-E: the seed's oracle (B.2, section 4.2: "we use the environment to check if the action
is valid"): :meth:`check` asks the env's oracle, which the episode hands to the validate
stage only (the ScienceWorld env's ``would_accept``: the simulator's parser, without running
the action).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from statelab.core import Observation
from statelab.worldmodels import queries as Q
from statelab.worldmodels.adapters import Adapter, register_adapter
from statelab.worldmodels.adapters._scienceworld_belief import RoomBelief, RoomState, type_matches
from statelab.worldmodels.adapters._scienceworld_rooms import ROOMS, candidate_rooms
from statelab.worldmodels.adapters._scienceworld_text import (
    Goal,
    parse_goal,
)
from statelab.worldmodels.belief import INVENTORY, Belief

#: a where-is of a type the world model knows nothing of (the authors' words)
CANNOT_HELP = "The world model cannot help you with this query."
#: the oracle's feedback on ``{action}`` (the seed gives "generic feedback and asks to retry"),
#: in the authors' words (``envs/walle_oracle_sciworld_env.py``, ``_emit_rejection``; BB-WM's
#: gate the same)
INVALID = (
    "The action '{action}' is not possible in the current state (the parser does not "
    "recognize it here). Choose a different action."
)

Oracle = Callable[[str], bool]


class ScienceWorldAdapter(Adapter):
    other = "rooms"

    def __init__(self, obs: Observation, prior: str = "uniform") -> None:
        super().__init__(obs, prior)
        self.goal = obs.goal
        self.parsed: Goal = parse_goal(obs.goal)
        self.target, self.named = self.parsed.target, self.parsed.named
        self.state = RoomState(self.parsed, self._table)
        if " ".join(obs.text.split()) != " ".join(obs.goal.split()):
            self.state.observe("look around", obs.text)
        # else the authors' start (the env's ``start=task``): the task description alone

    def _table(self, otype: str) -> tuple[str, ...]:
        return candidate_rooms(otype, self.parsed.form)

    # -- the prior ----------------------------------------------------------------------------
    def prior_for(self, otype: str) -> Belief:
        """The room prior of ``otype`` (B.4.2; :meth:`RoomBelief.prior`): a point mass on the
        room the task names for the target; 0.9 on the room it states for another subject;
        else uniform over the table's rooms (all ten for a type it does not know)."""
        forced = self.parsed.room if otype == self.target else None
        stated = None if otype == self.target else self.named.get(otype)
        return RoomBelief.prior(self._table(otype), forced, stated).value()

    def informed(self, otype: str) -> bool:
        """Whether the world model knows anything of ``otype``: stated by the task, carried,
        seen, or in the package's room table ("The world model cannot help you" otherwise)."""
        return self.state.informed(otype)

    def beliefs(self) -> dict[str, Belief]:
        return {t: b.value() for t, b in self.state.beliefs.items()}

    # -- updates ------------------------------------------------------------------------------
    def update(self, action: str, obs: Observation, valid: bool) -> None:
        # the authors' world model reads every answer; one the parser refused changes nothing
        self.state.observe(" ".join(action.lower().split()), obs.text)

    # -- queries ------------------------------------------------------------------------------
    def query_forms(self) -> tuple[str, ...]:
        tracked = list(dict.fromkeys([self.target, *self.named] if self.target else self.named))
        return (*[f"where is {t}" for t in tracked][:3], "state")

    def answer(self, q: str, mode: str, rng: random.Random) -> str:
        query = Q.parse(q)
        if query.kind == "where":
            return self.where(query.arg, mode, rng)
        if query.kind == "in":
            return self.contents(query.arg)
        if query.kind == "searched":
            room = query.arg
            if room not in ROOMS:
                return f"{room} is not a room. Rooms: {', '.join(ROOMS)}."
            return Q.searched(room, room in self.state.rooms)
        if query.kind == "state":
            return self.describe()
        return Q.help_text(("where is <object>", "what is in <room or container>",
                            "searched <room>", "state"))  # fmt: skip

    def contents(self, place: str) -> str:
        """What the last look around listed in a searched room, or a container holds."""
        known = self.state.rooms if place in ROOMS else self.state.containers
        got = known.get(place)
        return Q.contents(place, sorted(got) if got is not None else None)

    def describe(self) -> str:
        """The ``state`` answer: room, inventory (with what carried containers are known to
        hold), focus, searched rooms."""
        st = self.state

        def held(n: str) -> str:
            if n not in st.held:
                return n
            inside = st.held[n]
            if inside is None:
                return f"{n} (contents unknown)"
            return f"{n} (containing {', '.join(sorted(inside))})" if inside else f"{n} (empty)"

        inv = ", ".join(held(n) for n in sorted(st.inventory)) or "nothing"
        return (
            f"You are in the {st.location or 'unknown'}, holding {inv}, focused on "
            f"{st.focus or 'nothing'}. Rooms searched: {', '.join(sorted(st.rooms)) or 'none'}."
        )

    def _observed(self, otype: str) -> list[str]:
        """Where instances of ``otype`` were observed, in the deterministic state's words."""
        st = self.state
        if st.carried(otype):
            return [INVENTORY]
        inside = [(r, c) for n, (r, c) in st.object_locations.items() if type_matches(n, otype)]
        rooms = [r for r in st.listed_in(otype) if r not in {r for r, _ in inside}]
        return list(dict.fromkeys([f"{r} (in the {c})" for r, c in inside] + rooms))

    def where(self, otype: str, mode: str, rng: random.Random) -> str:
        """``where is`` in the authors' words (module docstring); ``memory``: what was
        observed only; ``noprob``: the unsearched rooms without numbers."""
        if otype in ROOMS:
            return (f"{otype} is a room, not an object. You can teleport to it, or try 'query "
                    f"what is in {otype}' / 'query searched {otype}'.")  # fmt: skip
        st = self.state
        if mode == "memory":
            seen = self._observed(otype)
            return Q.observed_at(otype, seen) if seen else Q.not_observed(otype, "rooms")
        inside = st.container_of(otype)
        if inside is not None:
            return f"{otype} is in the {inside[0]}, in the {inside[1]}."
        if not st.informed(otype):
            return CANNOT_HELP
        ranked = st.where_is(otype)
        if not ranked:
            return f"No candidate rooms remain for {otype} (all likely rooms searched)."
        located = st.carried(otype) or st.belief(otype).located_at is not None
        if mode == "noprob" and not located:
            return Q.may_be(otype, [r for r, _ in ranked], rng)
        return f"{otype} is most likely in: {Q.ranking(ranked, 'rooms')}."

    # -- WALL-E (the env's oracle) ------------------------------------------------------------
    def check(self, action: str, oracle: Oracle | None = None) -> str | None:
        if oracle is None or oracle(action):
            return None
        return INVALID.format(action=action)


register_adapter("scienceworld", ScienceWorldAdapter)  # the envs declaring kind "scienceworld"

__all__ = ["CANNOT_HELP", "ScienceWorldAdapter"]
