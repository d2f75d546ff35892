"""The household (ALFWorld text) adapter: Appendix A of seed 004.

It claims the envs of kind ``"household"``. It reads the receptacles from the first
observation ("Looking quickly around you, you see ..."), the goal from its task line, and
every later observation into the deterministic memory (arrivals, what is on / in a
receptacle, open / closed, pick up, move, heat / cool / clean, inventory).

Beliefs: one per object instance the goal needs (two for "put two"), over the receptacle
instances of the scene, seeded from the placement rules the household generator uses
(:mod:`statelab.envs._household_gen`: ALFWorld's ``VAL_RECEPTACLE_OBJECTS``, the desk lamp on
a desk / side table / dresser, and the target never starting in a receptacle of the goal's
type or in the task's appliance). ``prior="zipf"`` ranks the allowed receptacles with
:func:`statelab.envs._household_gen.zipf_order` and weights rank k by ``1 / k**1.25``.
A receptacle whose contents were seen without the object is ruled out; a sighting is a point
mass. Other object types get the same placement prior over unsearched receptacles at query
time (A.5).

WALL-E rules (:data:`statelab.worldmodels.rules.HOUSEHOLD_RULES`): hand-written
preconditions of the ALFRED PDDL domain, checked against the memory only. Receptacles that
share a place in the scene cannot be told apart from the text, so "you are not at R" may
reject an action the game would accept there.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from statelab.core import Observation
from statelab.envs import _household_gen as gen
from statelab.envs.household import normalise
from statelab.worldmodels import queries as Q
from statelab.worldmodels.adapters import Adapter, register_adapter
from statelab.worldmodels.belief import INVENTORY, Belief, mixture, uniform, zipf
from statelab.worldmodels.memory import WorldMemory
from statelab.worldmodels.rules import APPLIANCE, HOUSEHOLD_RULES, first_failure, kind_of

_NAME = r"[a-z]+ \d+"
_ITEM = re.compile(rf"\b(?:a|an) ({_NAME})")
_SCENE = re.compile(r"Looking quickly around you, you see (.+?)\.\s*(?:\n|$)")
_TASK = re.compile(r"Your task is to: (.+?)\.?\s*$", re.MULTILINE)
_GOALS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("clean", re.compile(r"^(?:put a clean (\w+) in|clean some (\w+) and put it in) (\w+)$")),
    ("heat", re.compile(r"^(?:put a hot (\w+) in|heat some (\w+) and put it in) (\w+)$")),
    ("cool", re.compile(r"^(?:put a cool (\w+) in|cool some (\w+) and put it in) (\w+)$")),
    ("picktwo", re.compile(r"^(?:put two (\w+) in|find two (\w+) and put them in) (\w+)$")),
    ("look", re.compile(r"^(?:look at (\w+) under the|examine the (\w+) with the) (\w+)$")),
    ("pick_and_place", re.compile(r"^(?:put a (\w+) in|put some (\w+) on) (\w+)$")),
)
STATE_WORD = {"clean": "clean", "heat": "heated", "cool": "cooled"}


def parse_goal(text: str) -> dict[str, str]:
    """The goal as A.4.1's (act, target_type, transform, dest_recep_type, count)."""
    goal = text.strip().rstrip(".").lower()
    for act, pat in _GOALS:
        m = pat.match(goal)
        if m:
            target = m.group(1) or m.group(2)
            dest = m.group(3)
            out = {"act": act, "target_type": target, "count": "2" if act == "picktwo" else "1"}
            if act == "look":
                out["toggle"] = dest
            else:
                out["dest_recep_type"] = dest
            if act in APPLIANCE:
                out["transform"] = act
            return out
    return {"act": "unknown", "text": goal}


def _types(names: list[str]) -> dict[str, str]:
    """lower-case type -> ALFWorld type."""
    return {t.lower(): t for t in names}


class HouseholdAdapter(Adapter):
    other = "receptacles"

    def __init__(self, obs: Observation, prior: str = "uniform") -> None:
        super().__init__(obs, prior)
        c = gen._constants()
        self._rtype = _types(list(c.RECEPTACLES))
        self._otype = _types([*c.OBJECTS, gen.LAMP, gen.FLOOR_LAMP])
        self._val: dict[str, tuple[str, ...]] = {
            k: tuple(v) for k, v in c.VAL_RECEPTACLE_OBJECTS.items()
        }
        self._openable = set(c.OPENABLE_CLASS_LIST)
        self.mem = WorldMemory(location="middle of room")
        scene = _SCENE.search(obs.text)
        for name in _ITEM.findall(scene.group(1)) if scene else []:
            p = self.mem.place(name, kind_of(name))
            p.open = False if self._rtype.get(p.kind, "") in self._openable else None
        task = _TASK.search(obs.text)
        self.mem.goal = parse_goal(task.group(1) if task else obs.goal)
        self.target = self.mem.goal.get("target_type", "")
        n = int(self.mem.goal.get("count", "0")) if self.target else 0
        self._beliefs = [self.prior_for(self.target, target=True) for _ in range(n)]
        self._instance: list[str | None] = [None] * n

    # -- the prior ------------------------------------------------------------------------
    def allowed(self, otype: str, target: bool = False) -> list[str]:
        """Receptacle instances the generator may place an object of ``otype`` in."""
        t = self._otype.get(otype, otype)
        if t == gen.LAMP:
            types = {r.lower() for r in gen.LAMP_RECEPTACLES}
        elif t == gen.FLOOR_LAMP:  # the test split's floor lamps (scene 219)
            types = {r.lower() for r in gen.FLOOR_LAMP_RECEPTACLES}
        else:
            types = {r.lower() for r, held in self._val.items() if t in held}
        if target:  # never in the goal's receptacle type nor in the task's appliance
            types -= {
                self.mem.goal.get("dest_recep_type", ""),
                APPLIANCE.get(self.mem.goal.get("act", ""), ""),
            }
        names = [n for n, p in self.mem.places.items() if p.kind in types]
        return names or list(self.mem.places)

    def prior_for(self, otype: str, target: bool = False) -> Belief:
        names = self.allowed(otype, target)
        if self.prior == "zipf":
            kinds = {n: self._rtype.get(kind_of(n), kind_of(n)) for n in names}
            return zipf(gen.zipf_order(self._otype.get(otype, otype), kinds))
        return uniform(names)

    def beliefs(self) -> dict[str, Belief]:
        return {f"{self.target} #{i + 1}": b for i, b in enumerate(self._beliefs)}

    # -- updates ----------------------------------------------------------------------------
    def update(self, action: str, obs: Observation, valid: bool) -> None:
        if not valid:
            return
        text = obs.text
        m = re.search(rf"You arrive at ({_NAME})\.", text)
        if m:
            self.mem.location = m.group(1)
        for m in re.finditer(rf"The ({_NAME}) is (open|closed)\.", text):
            self.mem.place(m.group(1), kind_of(m.group(1))).open = m.group(2) == "open"
        for m in re.finditer(rf"You (open|close) the ({_NAME})\.", text):
            self.mem.place(m.group(2), kind_of(m.group(2))).open = m.group(1) == "open"
        for m in re.finditer(rf"On the ({_NAME}), you see ([^.]*)\.", text):
            self._searched(m.group(1), _ITEM.findall(m.group(2)))
        for m in re.finditer(rf"The ({_NAME}) is open\. In it, you see ([^.]*)\.", text):
            self._searched(m.group(1), _ITEM.findall(m.group(2)))
        m = re.search(rf"You pick up the ({_NAME}) from the ({_NAME})\.", text)
        if m:
            self.mem.take(m.group(1), kind_of(m.group(1)))
            self._located(m.group(1), INVENTORY)
        m = re.search(rf"You (?:move|put) the ({_NAME}) (?:to|in|on) the ({_NAME})\.", text)
        if m:
            self.mem.put(m.group(1), kind_of(m.group(1)), m.group(2))
            self._located(m.group(1), m.group(2))
        m = re.search(rf"You (heat|cool|clean) the ({_NAME}) using the ({_NAME})\.", text)
        if m:
            t = self.mem.thing(m.group(2), kind_of(m.group(2)))
            t.states.add(STATE_WORD[m.group(1)])
            if m.group(1) in ("heat", "cool"):
                t.states.discard("cooled" if m.group(1) == "heat" else "heated")

    def _searched(self, place: str, names: list[str]) -> None:
        self.mem.saw_contents(place, names, {n: kind_of(n) for n in names})
        found = [n for n in names if kind_of(n) == self.target]
        for n in found:
            self._located(n, place)
        for i, b in enumerate(self._beliefs):
            if self._instance[i] is None:
                self._beliefs[i] = b.absent([place])

    def _located(self, name: str, atom: str) -> None:
        if kind_of(name) != self.target:
            return
        if name in self._instance:
            i = self._instance.index(name)
        elif None in self._instance:
            i = self._instance.index(None)
            self._instance[i] = name
        else:
            return
        self._beliefs[i] = self._beliefs[i].seen(atom)

    # -- queries ----------------------------------------------------------------------------
    def query_forms(self) -> tuple[str, ...]:
        return (f"where is {self.target}", "state") if self.target else ("state",)

    def answer(self, q: str, mode: str, rng: random.Random) -> str:
        query = Q.parse(q)
        if query.kind == "where":
            return self.where(query.arg, mode, rng)
        if query.kind == "in":
            p = self.mem.places.get(query.arg)
            if p is None:
                return f"{query.arg} is not a receptacle here."
            return Q.contents(p.name, sorted(p.contents) if p.searched else None)
        if query.kind == "searched":
            p = self.mem.places.get(query.arg)
            return Q.searched(query.arg, bool(p and p.searched))
        if query.kind == "state":
            return self.state()
        return Q.help_text(("where is <object>", "what is in <receptacle>",
                            "searched <receptacle>", "state"))  # fmt: skip

    def state(self) -> str:
        m = self.mem
        inv = ", ".join(sorted(m.inventory)) or "nothing"
        known = sorted(m.things)
        return (
            f"You are at {m.location or 'unknown'}, holding {inv}. "
            f"Known objects: {', '.join(known) or 'none'}. "
            f"Searched receptacles: {', '.join(m.searched()) or 'none'}."
        )

    def where(self, arg: str, mode: str, rng: random.Random) -> str:
        words = arg.split()
        if words and words[-1].isdigit() and len(words) > 1:  # one instance: memory only
            name = " ".join(words)
            t = self.mem.things.get(name)
            if t is None or t.location is None:
                return f"{name} has not been located yet."
            return (
                f"You are holding {name}."
                if t.location == INVENTORY
                else f"{name} is at {t.location}."
            )
        otype = words[0] if words else ""
        if otype in {p.kind for p in self.mem.places.values()}:
            return (f"{otype} is a receptacle, not an object. Try 'query what is in {otype} 1' "
                    f"or 'query searched {otype} 1'.")  # fmt: skip
        seen = [t.location for t in self.mem.located(otype) if t.location]
        if mode == "memory":
            if not seen:
                return Q.not_observed(otype)
            return Q.observed_at(otype, list(dict.fromkeys(seen)))
        belief = self.belief_of(otype, seen)
        if belief.empty:
            return Q.no_candidates(otype)
        if mode == "noprob":
            return Q.may_be(otype, [a for a, _ in belief.dist], rng)
        return Q.most_likely(otype, belief.ranked(), self.other)

    def belief_of(self, otype: str, seen: list[str]) -> Belief:
        """The type-level belief a where-is query reads."""
        if otype == self.target and self._beliefs:
            return mixture(self._beliefs)
        if seen:
            return uniform(seen)
        unsearched = [n for n in self.allowed(otype) if not self.mem.places[n].searched]
        prior = self.prior_for(otype)
        return prior.absent(set(prior.support) - set(unsearched))

    # -- WALL-E ---------------------------------------------------------------------------
    def check(self, action: str, oracle: Callable[[str], bool] | None = None) -> str | None:
        return first_failure(HOUSEHOLD_RULES, self, normalise(action))

    def at(self, place: str) -> bool:
        return self.mem.location == place

    def holding(self) -> list[str]:
        return self.mem.inventory


register_adapter("household", HouseholdAdapter)  # the envs declaring kind "household"

__all__ = ["HouseholdAdapter", "parse_goal"]
