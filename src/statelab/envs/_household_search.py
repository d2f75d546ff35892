"""A searching expert for household few-shot examples: it knows only what a player sees.

Seed 002's examples search (6-20 actions, 3-12 ``go to``s, with priors such as "a mug is more
likely to appear in countertop ..."); the env's own expert walks straight to the object. This
player reads the goal sentence, the room's list of receptacles, each observation and the
admissible commands (never the privileged state): it visits the receptacles that can hold the
object (ALFWorld's placement rules) in a plausible order (surfaces, then containers; numbers
ascending), opens closed ones, takes the object when it sees it, uses the appliance of a
clean / heat / cool task (or finds and switches on the lamp of a look-at task), and puts the
object on the first receptacle of the goal's type. Each action comes with a thought where the
plan moves on (the anchor writes a thought at those turns and ``None`` elsewhere).
"""

from __future__ import annotations

import re
from typing import Any

from statelab.core import Observation

_GOALS = (
    (r"^put a clean (?P<o>.+?) in (?P<r>.+)$", "clean"),
    (r"^clean some (?P<o>.+?) and put it in (?P<r>.+)$", "clean"),
    (r"^put a hot (?P<o>.+?) in (?P<r>.+)$", "heat"),
    (r"^heat some (?P<o>.+?) and put it in (?P<r>.+)$", "heat"),
    (r"^put a cool (?P<o>.+?) in (?P<r>.+)$", "cool"),
    (r"^cool some (?P<o>.+?) and put it in (?P<r>.+)$", "cool"),
    (r"^put two (?P<o>.+?) in (?P<r>.+)$", "puttwo"),
    (r"^find two (?P<o>.+?) and put them in (?P<r>.+)$", "puttwo"),
    (r"^look at (?P<o>.+?) under the (?P<r>.+)$", "examine"),
    (r"^examine the (?P<o>.+?) with the (?P<r>.+)$", "examine"),
    (r"^put (?:a|some) (?P<o>.+?) (?:in|on) (?P<r>.+)$", "put"),
)
APPLIANCE = {"clean": ("sinkbasin", "clean"), "heat": ("microwave", "heat"),
             "cool": ("fridge", "cool")}  # fmt: skip
#: receptacle types in the order a player looks (open surfaces first, then containers)
PRIOR = ("countertop", "diningtable", "sidetable", "desk", "coffeetable", "shelf", "dresser",
         "tvstand", "armchair", "sofa", "bed", "ottoman", "cabinet", "drawer", "fridge",
         "microwave", "sinkbasin", "bathtubbasin", "stoveburner", "garbagecan", "safe",
         "toilet", "laundryhamper", "cart", "coffeemachine", "toaster", "towelholder",
         "handtowelholder", "toiletpaperhanger")  # fmt: skip
_SEE = re.compile(r"you see (.+?)\.(?:\s|$)")
_ITEM = re.compile(r"(?:a|an|some)\s+([a-z]+ \d+)")


def parse_goal(goal: str) -> tuple[str, str, str] | None:
    """(task kind, object type, receptacle or lamp type) of a goal sentence."""
    text = " ".join(goal.lower().rstrip(".").split())
    for pattern, kind in _GOALS:
        m = re.match(pattern, text)
        if m:
            return kind, m["o"].replace(" ", ""), m["r"].replace(" ", "")
    return None


def _kind(name: str) -> str:
    return name.rsplit(" ", 1)[0]


def _seen(text: str) -> list[str]:
    out: list[str] = []
    for m in _SEE.finditer(text):
        out += _ITEM.findall(m.group(1))
    return out


def _holders(obj: str) -> set[str]:
    import alfworld.gen.constants as c

    return {r.lower() for r, objs in c.VAL_RECEPTACLE_OBJECTS.items()
            if obj in {o.lower() for o in objs}}  # fmt: skip


def _order(names: list[str]) -> list[str]:
    def key(n: str) -> tuple[int, int]:
        kind, _, num = n.rpartition(" ")
        rank = PRIOR.index(kind) if kind in PRIOR else len(PRIOR)
        return rank, int(num) if num.isdigit() else 0

    return sorted(names, key=key)


def _span(names: list[str]) -> str:
    """ "cabinet (1-4), countertop (1)" as the anchor's priors read."""
    by: dict[str, list[int]] = {}
    for n in names:
        kind, _, num = n.rpartition(" ")
        by.setdefault(kind, []).append(int(num) if num.isdigit() else 0)
    parts = []
    for kind, nums in by.items():
        lo, hi = min(nums), max(nums)
        parts.append(f"{kind} ({lo}-{hi})" if hi > lo else f"{kind} ({lo})")
    return ", ".join(parts)


class SearchingExpert:
    """A player that searches (see the module doc). ``act`` returns the next command;
    ``thought`` the thought that goes with it ("" where the plan goes on as it was)."""

    def __init__(self) -> None:
        self.plan: tuple[str, str, str] | None = None
        self.queue: list[str] = []
        self.lamp_queue: list[str] = []
        self.held: str | None = None
        self.placed = 0
        self.lamp: str | None = None
        self.at: str | None = None
        self.thought = ""
        self.pending: list[str] = []
        self.targets: list[str] = []
        #: instances of the object seen so far, and where (a second one is fetched from there)
        self.seen_at: dict[str, str] = {}
        self.done_items: set[str] = set()
        self._treated = False

    def _start(self, obs: Observation) -> None:
        self.plan = parse_goal(obs.goal) or ("put", "", "")
        kind, obj, target = self.plan
        room = _seen(obs.text)
        holders = _holders(obj)
        avoid = {target} | ({APPLIANCE[kind][0]} if kind in APPLIANCE else set())
        self.queue = _order([r for r in room if _kind(r) in holders and _kind(r) not in avoid])
        self.lamp_queue = _order([r for r in room if _kind(r) in ("desk", "sidetable",
                                  "dresser", "shelf", "nightstand", "coffeetable")])  # fmt: skip
        self.targets = _order([r for r in room if _kind(r) == target])

    def act(self, obs: Observation, info: dict[str, Any] | None = None) -> str:
        if self.plan is None:
            self._start(obs)
            assert self.plan is not None
            kind, obj, target = self.plan
            first = self.queue[0] if self.queue else "the room"
            task = {"clean": f"clean it with sinkbasin, then put it in/on {target}",
                    "heat": f"heat it with microwave, then put it in/on {target}",
                    "cool": f"cool it with fridge, then put it in/on {target}",
                    "examine": f"find and use a {target}",
                    "puttwo": f"put it in/on {target}, then find and put the other one",
                    "put": f"put it in/on {target}"}[kind]  # fmt: skip
            self.thought = (
                f"To solve the task, I need to find and take a {obj}, then {task}. First I "
                f"need to find a {obj}. A {obj} is more likely to appear in "
                f"{_span(self.queue)}. I can check one by one, starting with {first}."
            )
        else:
            self.thought = ""
        return self._next(obs)

    def _go(self, place: str) -> str:
        self.at = place
        return f"go to {place}"

    def _next(self, obs: Observation) -> str:
        assert self.plan is not None
        kind, obj, target = self.plan
        adm = list(obs.admissible or ())
        text = obs.text
        if self.pending:
            return self.pending.pop(0)
        if self.at is not None:
            for x in _seen(text):
                if _kind(x) == obj and x not in self.done_items:
                    self.seen_at.setdefault(x, self.at)
        if self.held is None:
            if self.at is not None and re.search(rf"\b{re.escape(self.at)} is closed", text):
                return f"open {self.at}"
            found = [x for x in _seen(text) if _kind(x) == obj]
            takes = [a for a in adm for x in found if a.startswith(f"take {x} from ")]
            if takes:
                self.held = takes[0][len("take ") :].split(" from ")[0]
                self.thought = f"Now I find a {obj} ({self.held}). Next, I need to take it."
                return takes[0]
            if not self.queue:
                return "look"
            return self._go(self.queue.pop(0))
        # holding the object
        if kind in APPLIANCE and self.placed == 0 and not self._treated:
            app, verb = APPLIANCE[kind]
            use = [a for a in adm if a.startswith(f"{verb} {self.held} with ")]
            if use:
                self._treated = True
                self.thought = f"Now I {verb} the {obj}. Next, I need to put it in/on {target}."
                return use[0]
            if self.at is None or _kind(self.at) != app:
                self.thought = f"Now I take a {obj}. Next, I need to go to {app} 1 and {verb} it."
                return self._go(f"{app} 1")
            return f"open {self.at}"
        if kind == "examine":
            uses = [a for a in adm if a.startswith("use ")]
            if uses:
                return uses[0]
            if not self.lamp_queue:
                return "look"
            if not self.thought:
                self.thought = f"Now I take a {obj}. Next, I need to find a {target}."
            return self._go(self.lamp_queue.pop(0))
        dest = self.targets[0] if self.targets else target
        moves = [a for a in adm if a.startswith(f"move {self.held} to ")]
        if moves and self.at == dest:
            self.placed += 1
            self.done_items.add(self.held)
            self.seen_at.pop(self.held, None)
            self.held = None
            self._treated = False
            if kind == "puttwo" and self.placed == 1:
                self.thought = f"Now I put the first {obj} in/on {dest}. Next, I need to find "
                self.thought += f"the second {obj}."
                back = [p for x, p in self.seen_at.items() if p != dest]
                self.queue = back[:1] + [q for q in self.queue if q != dest and q not in back]
            return moves[0]
        if self.at != dest:
            if not self.thought:
                self.thought = f"Now I have the {obj}. Next, I need to put it in/on {dest}."
            return self._go(dest)
        if re.search(rf"\b{re.escape(dest)} is closed", text):
            return f"open {dest}"
        return "look"
