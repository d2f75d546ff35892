"""The ScienceWorld expert's plans beyond the distilled gold path: the gold path without the
attempts its agent abandoned (:func:`without_retries`) or the watering self-watering pots do
not need (:func:`without_watering`) or with the sink left running between watering rounds
(:func:`with_sink_left_on`), and, as the last resort, a search over
the simulator's valid actions.

When neither the distilled gold path nor its repairs win within the budget, the object the
plan focuses on may be the wrong instance on replay (a bee that flies out of the inventory,
an animal that walks off): :func:`substitutions` offers the plan with its first ``focus on
X`` replaced by every other ``focus on Y`` the simulator lists as valid at that point, and
every later mention of X by Y (and the gold agent's unnamed pick-up, "ERROR FINDING UNIQUE
REFERENT ...", by ``pick up Y``). The env replays each from a fresh load (as it verifies every
candidate) and keeps the first that wins.
"""

from __future__ import annotations

from typing import Protocol

#: at most this many alternatives are replayed (the valid focus actions at that point)
MAX_SUBSTITUTIONS = 60
#: how the gold agent writes an object it could not name (its pick-up of the focused one)
_NO_REFERENT = "ERROR FINDING UNIQUE REFERENT"
#: only plans this short are searched (the find tasks' budget): each alternative is a replay
MAX_PLAN = 15


class _Sim(Protocol):
    def load(self, task: str, variation: int, simplifications: str, gold: bool) -> None: ...
    def reset(self) -> str: ...
    def step(self, action: str) -> tuple[str, int, bool]: ...
    def valid_actions(self) -> tuple[str, ...]: ...


def _retry_at(plan: list[str]) -> tuple[int, int] | None:
    """(start, end) of the first attempt the plan abandons, or None: where it moves the same
    thing into a device of the same name twice, the actions from the first move (and the
    device's opening just before it) up to the pick-up of that thing that ends the attempt."""
    for j, a in enumerate(plan):
        if not a.startswith("move ") or " to " not in a or a not in plan[:j]:
            continue
        i = plan.index(a)
        thing, _, device = a.removeprefix("move ").partition(" to ")
        ends = [k for k in range(i + 1, j) if plan[k] == f"pick up {thing}"]
        if ends:
            start = i - 1 if i > 0 and plan[i - 1] == f"open {device}" else i
            return start, ends[-1]
    return None


def without_retries(plan: list[str]) -> list[str]:
    """``plan`` without the attempts its gold agent abandoned, so it goes straight to what
    worked: the package's gold path for freezing mercury (freezing point -38.8 C) puts it in
    the kitchen's freezer and watches it for twenty rounds of examine, thermometer and
    ``wait`` (60 actions), then, as it stays liquid, carries it to the workshop's freezer
    (the same name), where it freezes. Each attempt is cut from its ``move X to D`` (with the
    ``open D`` before it) to the ``pick up X`` that ends it; a pick-up left twice in a row is
    kept once. The plan itself when it abandons nothing."""
    out = list(plan)
    while (cut := _retry_at(out)) is not None:
        start, end = cut
        out = out[:start] + out[end:]
        if start > 0 and out[start - 1] == out[start]:
            del out[start]
    return out


def without_watering(plan: list[str]) -> list[str]:
    """``plan`` without its watering rounds (from ``activate sink`` to ``deactivate sink``),
    for simplifications whose flower pots water themselves (``selfWateringFlowerPots``, part
    of ``easy``): the gold agent waters them anyway. grow-fruit variation 95: 39 steps
    instead of more than its 60."""
    out: list[str] = []
    skipping = False
    for a in plan:
        if a == "activate sink":
            skipping = True
        elif not skipping:
            out.append(a)
        elif a == "deactivate sink":
            skipping = False
    return out


def with_sink_left_on(plan: list[str]) -> list[str]:
    """``plan`` with the sink left running between its watering rounds: each ``deactivate
    sink`` that a later ``activate sink`` undoes is cut with it (the last one stays). grow-fruit
    variation 101 (pots that do not water themselves there): 59 steps instead of 63 against
    its 60."""
    out: list[str] = []
    i = 0
    while i < len(plan):
        if plan[i] == "deactivate sink" and "activate sink" in plan[i + 1 :]:
            j = plan.index("activate sink", i + 1)
            out += plan[i + 1 : j]
            i = j + 1
            continue
        out.append(plan[i])
        i += 1
    return out


def substitutions(sim: _Sim, plan: list[str], load: tuple[str, int, str]) -> list[list[str]]:
    """``plan`` with its first focused object replaced by each other object the simulator
    lets the agent focus on at that step (every later mention replaced too); [] when the
    plan focuses on nothing or is longer than :data:`MAX_PLAN`."""
    if len(plan) > MAX_PLAN:
        return []
    at = next((i for i, a in enumerate(plan) if a.startswith("focus on ")), None)
    if at is None:
        return []
    sim.load(*load, gold=False)
    sim.reset()
    for a in plan[:at]:
        sim.step(a)
    old = plan[at].removeprefix("focus on ")
    news = [v.removeprefix("focus on ") for v in sim.valid_actions() if v.startswith("focus on ")]
    out = []
    for new in sorted(n for n in set(news) if n != old)[:MAX_SUBSTITUTIONS]:
        rest = [f"pick up {new}" if a.startswith(_NO_REFERENT) else a.replace(old, new)
                for a in plan[at:]]  # fmt: skip
        out.append([*plan[:at], *rest])
    return out


__all__ = [
    "MAX_PLAN",
    "MAX_SUBSTITUTIONS",
    "substitutions",
    "with_sink_left_on",
    "without_retries",
    "without_watering",
]
