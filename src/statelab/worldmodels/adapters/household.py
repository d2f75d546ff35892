"""The household (ALFWorld text) adapter: Appendix A of seed 004, as its authors ran it
(``wm/belief.py``, ``wm/query.py``, ``wm/affinity_prior.py`` of skumar-ml/belief-world-models).

It claims the envs of kind ``"household"``. It reads the receptacles from the first
observation ("Looking quickly around you, you see ..."), the goal from its task line, and
every later observation into the deterministic memory (arrivals, what is on / in a
receptacle, open / closed, pick up, move, heat / cool / clean, inventory).

Beliefs: one per object instance the goal needs (two for "put two"), over the receptacle
instances of the room, in name order (ties are ranked by name). The prior is
:mod:`statelab.envs._household_prior`'s, the one the generator draws the games from:
``uniform`` equal mass on every instance whose type may hold the object (the goal's type and
the appliance included, as the authors' prior: ALFWorld's clean / heat / cool games may start
the object in the goal's type); ``zipf`` the authors' Zipf law over receptacle types (the
goal's type dropped except for look-at tasks, a type's mass split over its instances).
A receptacle whose contents were seen without the object rules it out; a sighting binds the
first unbound instance belief to that object and collapses it there, where it stays (picking
the object up or moving it changes the memory, not the belief). A type-level ``where is``
of the target reads the first instance belief not yet located, else the located ones; of
any other type, the uniform prior over the receptacles not yet searched. Memory answers from
sightings only; a held object is not "observed at" anywhere.

WALL-E (:data:`statelab.worldmodels.rules.HOUSEHOLD_RULES`): WALL-E's released ALFWorld
rules over the :class:`~statelab.worldmodels.rules.HouseholdRuleState` kept from accepted
steps.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable

from statelab.core import Observation
from statelab.envs import _household_prior as prior
from statelab.envs._household_layout import constants as layout_constants
from statelab.envs.household import normalise
from statelab.worldmodels import queries as Q
from statelab.worldmodels.adapters import Adapter, register_adapter
from statelab.worldmodels.belief import INVENTORY, Belief
from statelab.worldmodels.memory import WorldMemory
from statelab.worldmodels.rules import APPLIANCE, HouseholdRuleState, household_failure, kind_of

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
        self.mem = WorldMemory()
        scene = _SCENE.search(obs.text)
        openable = {t.lower() for t in layout_constants().OPENABLE_CLASS_LIST}
        listed = _ITEM.findall(scene.group(1)) if scene else []
        for name in listed:
            p = self.mem.place(name, kind_of(name))
            p.open = False if p.kind in openable else None
        self.walle = HouseholdRuleState(reachable=list(listed))
        task = _TASK.search(obs.text)
        self.mem.goal = parse_goal(task.group(1) if task else obs.goal)
        self.target = self.mem.goal.get("target_type", "")
        n = int(self.mem.goal.get("count", "0")) if self.target else 0
        self._beliefs = [self.prior_for(self.target, target=True) for _ in range(n)]
        self._instance: list[str | None] = [None] * n

    # -- the prior ------------------------------------------------------------------------
    def receptacles(self) -> list[str]:
        """The room's receptacles, in the order the room lists them."""
        return list(self.mem.places)

    def prior_for(self, otype: str, target: bool = False) -> Belief:
        """The target's prior (:data:`prior` chooses uniform or Zipf), or a non-target's
        (uniform: only the target is Zipf-placed in the games). A lamp, which ALFWorld's
        placement table does not cover, gets equal mass everywhere (as the authors' prior)."""
        names = self.receptacles()
        if target and self.prior == "zipf":
            goal = self.mem.goal
            gone = prior.zipf_exclusions(goal.get("act", ""), goal.get("dest_recep_type", ""))
            return _exact(prior.zipf_prior(otype, names, gone))
        return _exact(prior.uniform_prior(otype, names))

    def beliefs(self) -> dict[str, Belief]:
        return {f"{self.target} #{i + 1}": b for i, b in enumerate(self._beliefs)}

    # -- updates ----------------------------------------------------------------------------
    def update(self, action: str, obs: Observation, valid: bool) -> None:
        cmd = normalise(action)
        if cmd.startswith("go to "):  # the authors' state reports the last go-to tried
            self.mem.location = cmd.removeprefix("go to ")
        if not valid:
            return
        self._update_walle(cmd, obs.text)
        text = obs.text
        for f in re.finditer(rf"The ({_NAME}) is (open|closed)\.", text):
            self.mem.place(f.group(1), kind_of(f.group(1))).open = f.group(2) == "open"
        for f in re.finditer(rf"You (open|close) the ({_NAME})\.", text):
            self.mem.place(f.group(2), kind_of(f.group(2))).open = f.group(1) == "open"
        for f in re.finditer(rf"On the ({_NAME}), you see ([^.]*)\.", text):
            self._searched(f.group(1), _ITEM.findall(f.group(2)))
        for f in re.finditer(rf"The ({_NAME}) is open\. In it, you see ([^.]*)\.", text):
            self._searched(f.group(1), _ITEM.findall(f.group(2)))
        m = re.search(rf"You pick up the ({_NAME}) from the ({_NAME})\.", text)
        if m:
            self.mem.take(m.group(1), kind_of(m.group(1)))
        m = re.search(rf"You (?:move|put) the ({_NAME}) (?:to|in|on) the ({_NAME})\.", text)
        if m:
            self.mem.put(m.group(1), kind_of(m.group(1)), m.group(2))
        m = re.search(rf"You (heat|cool|clean) the ({_NAME}) using the ({_NAME})\.", text)
        if m:
            t = self.mem.thing(m.group(2), kind_of(m.group(2)))
            t.states.add(STATE_WORD[m.group(1)])
            if m.group(1) in ("heat", "cool"):
                t.states.discard("cooled" if m.group(1) == "heat" else "heated")

    def _update_walle(self, cmd: str, text: str) -> None:
        """WALL-E's state after an accepted step ``cmd`` that showed ``text``."""
        w = self.walle
        m = re.match(rf"^go to ({_NAME})$", cmd)
        if m:
            w.position, w.status = m.group(1), "closed" if "closed" in text else "null"
        m = re.match(rf"^open ({_NAME})$", cmd)
        if m and m.group(1) in text:
            w.position, w.status = m.group(1), "open"
        seen = re.search(rf"(?:On the ({_NAME}), you see|The ({_NAME}) is open\. In it, you see)"
                         r"([^.]*)\.", text)  # fmt: skip
        if seen:
            w.seen[seen.group(1) or seen.group(2)] = _ITEM.findall(seen.group(3))
        m = re.match(rf"^take ({_NAME}) from ({_NAME})$", cmd)
        if m:
            w.in_hand = m.group(1)
            if m.group(1) in w.seen.get(m.group(2), []):
                w.seen[m.group(2)].remove(m.group(1))
        m = re.match(rf"^move ({_NAME}) to ({_NAME})$", cmd)
        if m:
            w.in_hand = None
            w.seen.setdefault(m.group(2), []).append(m.group(1))

    def _searched(self, place: str, names: list[str]) -> None:
        self.mem.saw_contents(place, names, {n: kind_of(n) for n in names})
        found = [n for n in names if kind_of(n) == self.target]
        for i, b in enumerate(self._beliefs):
            if b.located_at is not None:
                continue
            free = [n for n in found if n not in self._instance]
            if free:
                self._instance[i] = free[0]
                self._beliefs[i] = b.seen(place)
            else:  # renormalised even when ``place`` held no mass, as the authors' update
                out = b.absent([place])
                self._beliefs[i] = Belief.from_weights(b.dist) if out is b else out

    # -- queries ----------------------------------------------------------------------------
    def query_forms(self) -> tuple[str, ...]:
        return (f"where is {self.target}", "state") if self.target else ("state",)

    def query_help(self, mode: str) -> tuple[tuple[str, str], ...]:
        """The authors' four queries (their instruction's list), in our words."""
        where = {
            "belief": "the receptacles where <object> most likely is, with probabilities "
            "(receptacles already searched are left out)",
            "noprob": "the receptacles where <object> may be, in no particular order "
            "(receptacles already searched are left out)",
            "memory": "the receptacles where <object> has been seen",
        }[mode]
        return (
            ("where is <object>", where),
            ("what is in <receptacle>", "the objects seen in it, or that it is not searched yet"),
            ("searched <receptacle>", "whether you have already looked in it"),
            ("state", "where you are, what you hold, the objects seen, the receptacles searched"),
        )

    def answer(self, q: str, mode: str, rng: random.Random) -> str:
        query = Q.parse(q)
        if query.kind == "where":
            return self.where(query.arg, mode, rng)
        if query.kind == "in":
            p = self.mem.places.get(query.arg)
            return Q.contents(query.arg, sorted(p.contents) if p and p.searched else None)
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
        otype = words[0] if words else ""
        # a receptacle's type, with or without a number ('where is toilet 1'), is refused
        # before an instance is looked up, as the authors' answer_query (wm/query.py) does
        if otype in {p.kind for p in self.mem.places.values()}:
            return (f"{otype} is a receptacle, not an object. Try 'query what is in {otype} 1' "
                    f"or 'query searched {otype} 1'.")  # fmt: skip
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
        if mode == "memory":
            seen = [t.location for t in self.mem.things.values()
                    if t.kind == otype and t.location not in (None, INVENTORY)]  # fmt: skip
            if not seen:
                return Q.not_observed(otype)
            return Q.observed_at(otype, list(dict.fromkeys(s for s in seen if s)))
        ranked = self.ranking(otype)
        if not ranked:
            return Q.no_candidates(otype)
        if mode == "noprob":
            return Q.may_be(otype, [a for a, _ in ranked], rng)
        return Q.most_likely(otype, ranked, self.other)

    def ranking(self, otype: str) -> list[tuple[str, float]]:
        """The ranked receptacles a type-level where-is reads (best first, ties by name):
        the first target instance not yet located (else the located ones at 1.0); for any
        other type, its prior's mass on the receptacles not yet searched (not renormalised,
        as the authors' answer)."""
        searched = set(self.mem.searched())
        if otype == self.target and self._beliefs:
            for b in self._beliefs:
                if b.located_at is None:
                    return _by_mass(b.absent(searched).dist)
            return [(b.located_at, 1.0) for b in self._beliefs if b.located_at]
        return _by_mass([(a, p) for a, p in self.prior_for(otype).dist if a not in searched])

    # -- WALL-E ---------------------------------------------------------------------------
    def check(self, action: str, oracle: Callable[[str], bool] | None = None) -> str | None:
        return household_failure(self.walle, normalise(action))


def _exact(weights: dict[str, float]) -> Belief:
    """A belief holding ``weights`` (already normalised) as they are: renormalising again
    would move the last bits, and the answers' 90% cut-off with them."""
    return Belief(tuple((a, p) for a, p in weights.items() if p > 0))


def _by_mass(dist: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """Atoms by decreasing probability, ties by name."""
    return sorted(dist, key=lambda ap: (-ap[1], ap[0]))


register_adapter("household", HouseholdAdapter)  # the envs declaring kind "household"

__all__ = ["HouseholdAdapter", "parse_goal"]
