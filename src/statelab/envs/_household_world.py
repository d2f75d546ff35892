"""The true state of a ``household`` game, read from TextWorld's facts, and the expert's plan.

:class:`World` is a snapshot of what matters in the ALFRED PDDL state (where the agent stands,
what it holds, where every object is, which receptacles are open, which objects are clean,
hot, cool or switched on). :func:`plan` is the expert: a scripted policy over that truth that
fetches the task's object (go to its receptacle, open it if closed, take it), cleans / heats /
cools it at the sink basin / microwave / fridge when the task asks, and brings it to a
receptacle of the target type (go, open, move), twice for pick-two tasks (both into the same
receptacle, as the goal requires); for look-at tasks it takes the object to the desk lamp and
switches the lamp on. It plans by simulating its own commands on a copy of the world, with the
effects the PDDL domain gives them, so a plan is known whole before it is played.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

#: ALFWorld's appliance verb by task type index (see ``_household_gen.TASK_TYPES``)
VERB = {2: "clean", 3: "heat", 4: "cool"}
APPLIANCE = {2: "SinkBasin", 3: "Microwave", 4: "Fridge"}
MIDDLE = "middle of room"


@dataclass(frozen=True)
class Task:
    """A game's task, from the generator's metadata (names as the game prints them)."""

    kind: int  # index into TASK_TYPES
    object_type: str
    receptacle_type: str
    lamp: str | None
    receptacles: dict[str, str]  # receptacle name -> type
    objects: dict[str, str]  # object name -> type
    can_contain: dict[str, list[str]]  # receptacle type -> object types

    @classmethod
    def from_meta(cls, meta: dict[str, Any], kind: int) -> Task:
        return cls(kind, meta["object_type"], meta["receptacle_type"], meta["lamp"],
                   meta["receptacles"], meta["objects"], meta["can_contain"])  # fmt: skip

    def of_type(self, rtype: str) -> list[str]:
        return sorted(r for r, t in self.receptacles.items() if t == rtype)


@dataclass(frozen=True)
class World:
    """A snapshot of the true state; ``at`` is the receptacle the agent went to last."""

    at: str | None
    loc: str
    holding: tuple[str, ...]
    inside: dict[str, str]  # object -> receptacle
    rec_loc: dict[str, str]  # receptacle -> location
    openable: frozenset[str]
    opened: frozenset[str]
    clean: frozenset[str] = field(default_factory=frozenset)
    hot: frozenset[str] = field(default_factory=frozenset)
    cool: frozenset[str] = field(default_factory=frozenset)
    toggled: frozenset[str] = field(default_factory=frozenset)

    def near(self, receptacle: str) -> bool:
        """Whether the agent stands where ``receptacle`` is (instances may share a place)."""
        return self.rec_loc.get(receptacle) == self.loc

    def reachable(self, receptacle: str) -> bool:
        return receptacle not in self.openable or receptacle in self.opened


def read_world(facts: Iterable[Any], at: str | None) -> World:
    """The world from TextWorld's ``facts`` (Propositions whose variables carry the names the
    game prints, e.g. ``inreceptacle(apple 1, fridge 1)``)."""
    sets: dict[str, set[str]] = {k: set() for k in ("opened", "openable", "isclean", "ishot",
                                                    "iscool", "istoggled", "holds")}  # fmt: skip
    inside: dict[str, str] = {}
    rec_loc: dict[str, str] = {}
    loc = ""
    for f in facts:
        args = [v.name.strip() for v in f.arguments]
        if f.name == "inreceptacle":
            inside[args[0]] = args[1]
        elif f.name == "receptacleatlocation":
            rec_loc[args[0]] = args[1]
        elif f.name == "atlocation":
            loc = args[1]
        elif f.name in sets:
            sets[f.name].add(args[-1])
    return World(
        at, loc, tuple(sorted(sets["holds"])), inside, rec_loc, frozenset(sets["openable"]),
        frozenset(sets["opened"]), frozenset(sets["isclean"]), frozenset(sets["ishot"]),
        frozenset(sets["iscool"]), frozenset(sets["istoggled"]),
    )  # fmt: skip


def apply(w: World, command: str) -> World:
    """The world after one of the expert's commands, with the PDDL domain's effects."""
    verb, _, rest = command.partition(" ")
    if verb == "go":
        r = rest.removeprefix("to ")
        return replace(w, at=r, loc=w.rec_loc[r])
    if verb in ("open", "close"):
        return replace(w, opened=w.opened | {rest} if verb == "open" else w.opened - {rest})
    if verb == "take":
        obj = rest.partition(" from ")[0]
        return replace(w, inside={o: r for o, r in w.inside.items() if o != obj}, holding=(obj,))
    if verb == "move":
        obj, _, r = rest.partition(" to ")
        return replace(w, inside={**w.inside, obj: r}, holding=())
    if verb == "use":
        return replace(w, toggled=w.toggled | {rest})
    obj = rest.partition(" with ")[0]
    if verb == "clean":
        return replace(w, clean=w.clean | {obj})
    if verb == "heat":
        return replace(w, hot=w.hot | {obj}, cool=w.cool - {obj})
    if verb == "cool":
        return replace(w, cool=w.cool | {obj}, hot=w.hot - {obj})
    return w


def _prop(w: World, t: Task, obj: str) -> bool:
    return {2: obj in w.clean, 3: obj in w.hot, 4: obj in w.cool}.get(t.kind, True)


def _visit(w: World, r: str) -> str | None:
    """The command that brings the agent to ``r`` and opens it, or None once it is reachable."""
    if not w.near(r):
        return f"go to {r}"
    return None if w.reachable(r) else f"open {r}"


def placed(w: World, t: Task) -> list[str]:
    """Objects of the task's type already where the goal wants them (with the property)."""
    return sorted(
        o for o, r in w.inside.items()
        if t.objects.get(o) == t.object_type and t.receptacles.get(r) == t.receptacle_type
        and _prop(w, t, o)
    )  # fmt: skip


def _fetch(w: World, t: Task, skip: list[str]) -> str | None:
    candidates = [
        o for o, r in w.inside.items() if t.objects.get(o) == t.object_type and o not in skip
    ]
    if not candidates:
        return None
    obj = min(candidates, key=lambda o: (not w.near(w.inside[o]), o))
    return _visit(w, w.inside[obj]) or f"take {obj} from {w.inside[obj]}"


def _drop(w: World, t: Task, obj: str) -> str:
    """Put a held object that is not wanted back somewhere that may hold it."""
    otype = t.objects.get(obj, "")
    ok = [r for r, rt in t.receptacles.items() if otype in t.can_contain.get(rt, [])]
    r = min(ok, key=lambda r: (not w.near(r), not w.reachable(r), r))
    return _visit(w, r) or f"move {obj} to {r}"


def next_command(w: World, t: Task) -> str | None:
    """The expert's next command, or None when the task is done (or cannot be done)."""
    held = w.holding[0] if w.holding else None
    if t.kind == 1:  # look at the object under the lamp
        if held is None:
            return _fetch(w, t, [])
        if t.objects.get(held) != t.object_type:
            return _drop(w, t, held)
        assert t.lamp is not None
        lamp_at = w.inside[t.lamp]
        if not w.near(lamp_at):
            return f"go to {lamp_at}"
        return None if t.lamp in w.toggled else f"use {t.lamp}"
    done = placed(w, t)
    if len(done) >= (2 if t.kind == 5 else 1):
        return None
    if held is None:
        return _fetch(w, t, done)
    if t.objects.get(held) != t.object_type:
        return _drop(w, t, held)
    if t.kind in VERB and not _prop(w, t, held):
        appliance = t.of_type(APPLIANCE[t.kind])[0]
        if not w.near(appliance):
            return f"go to {appliance}"
        return f"{VERB[t.kind]} {held} with {appliance}"
    targets = t.of_type(t.receptacle_type)
    # pick-two: both objects must end in the same receptacle
    target = w.inside[done[0]] if done else min(targets, key=lambda r: (not w.near(r), r))
    return _visit(w, target) or f"move {held} to {target}"


def plan(w: World, t: Task, limit: int = 60) -> list[str]:
    """The expert's commands from ``w`` to the goal, found by simulating them."""
    out: list[str] = []
    while len(out) < limit and (cmd := next_command(w, t)) is not None:
        out.append(cmd)
        w = apply(w, cmd)
    return out


def describe(w: World, t: Task) -> str:
    """The true state in words, for oracle summaries: where the agent is, what it holds, and
    where each object of the task's type (and the lamp) is, with its state."""

    def state(o: str) -> str:
        tags = [n for n, s in (("clean", w.clean), ("hot", w.hot), ("cool", w.cool)) if o in s]
        tags += ["on"] if o in w.toggled else []
        return f" ({', '.join(tags)})" if tags else ""

    where = f"You are at {w.at}." if w.at else "You are in the middle of the room."
    held = ", ".join(o + state(o) for o in w.holding) or "nothing"
    lines = [where, f"You are holding {held}."]
    relevant = sorted(o for o, ot in t.objects.items() if ot == t.object_type)
    relevant += [t.lamp] if t.lamp else []
    for o in relevant:
        if o in w.inside:
            r = w.inside[o]
            shut = " (closed)" if r in w.openable and r not in w.opened else ""
            lines.append(f"The {o}{state(o)} is in/on the {r}{shut}.")
    if t.kind in APPLIANCE:
        lines.append(f"Appliance to use: {', '.join(t.of_type(APPLIANCE[t.kind]))}.")
    if t.kind != 1:
        lines.append(f"Target receptacles: {', '.join(t.of_type(t.receptacle_type))}.")
    return "\n".join(lines)


def placements(w: World) -> dict[str, str]:
    """Every object not held -> the receptacle it is in/on."""
    return dict(sorted(w.inside.items()))


def location(w: World) -> str:
    return w.at or MIDDLE
