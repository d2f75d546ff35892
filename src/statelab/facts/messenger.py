"""Formats of :class:`MessengerFacts` (seed 000, Table 6, section 4.2.2).

Positions are (x, y): x the column from the west edge, y the row from the north edge, as the
Messenger manual says. Examples for an agent at (5, 5) without the message, a bird at (3, 5)
and a dog at (5, 9):

- ``natural`` (SmartPlay's default)::

      You (agent) don't have the message.

      You see:
      - bird 2 steps to your west
      - dog 4 steps to your south

- ``natural-pos``: the same with "You are at (5, 5)." after the message status.
- ``coordinates``: ``agent: (5, 5), without the message`` then ``bird: (3, 5)`` ...
- ``symbolic``: the grid, north row first, one character per cell, then a legend
  (``A`` the agent, a fixed capital per entity, ``*`` a cell holding several things).
"""

from __future__ import annotations

from dataclasses import dataclass

from statelab.facts._formats import coordinates, natural, natural_pos, symbolic


@dataclass(frozen=True)
class MessengerFacts:
    """An agent and named entities on a grid (Messenger).

    Positions are ``(x, y)``: ``x`` is the column counted from the west edge, ``y`` the row
    counted from the north edge, so ``(0, 0)`` is the north-west corner and moving south adds
    1 to ``y``. ``entities`` lists ``(name, (x, y))`` in an order that never depends on the
    entities' roles (which the manual alone tells). ``size`` is ``(width, height)``.
    """

    agent: tuple[int, int]
    has_message: bool
    entities: tuple[tuple[str, tuple[int, int]], ...]
    size: tuple[int, int] = (10, 10)


#: one fixed character per entity (the agent is A), so a legend never changes mid-episode
SYMBOLS = {
    "airplane": "P", "mage": "M", "dog": "D", "bird": "B", "fish": "F", "scientist": "S",
    "thief": "T", "ship": "H", "ball": "L", "robot": "R", "queen": "Q", "sword": "W",
}  # fmt: skip


def _direction(agent: tuple[int, int], other: tuple[int, int]) -> str:
    parts = []
    if other[1] != agent[1]:
        parts.append("north" if other[1] < agent[1] else "south")
    if other[0] != agent[0]:
        parts.append("west" if other[0] < agent[0] else "east")
    return "-".join(parts)


def _status(f: MessengerFacts) -> str:
    have = "already have" if f.has_message else "don't have"
    return f"You (agent) {have} the message."


def _seen(f: MessengerFacts) -> str:
    lines = []
    for name, (x, y) in f.entities:
        d = abs(x - f.agent[0]) + abs(y - f.agent[1])
        where = f"{d} steps to your {_direction(f.agent, (x, y))}" if d else "0 steps with you"
        lines.append(f"- {name} {where}")
    return "You see:\n" + "\n".join(lines) if lines else "You see nothing away from you."


def _xy(p: tuple[int, int]) -> str:
    return f"({p[0]}, {p[1]})"


@natural.register
def _(f: MessengerFacts) -> str:
    """SmartPlay's text: message status, a blank line, then one line per entity."""
    return f"{_status(f)}\n\n{_seen(f)}"


@natural_pos.register
def _(f: MessengerFacts) -> str:
    """Natural, plus the agent's own position after the message status."""
    return f"{_status(f)} You are at {_xy(f.agent)}.\n\n{_seen(f)}"


@coordinates.register
def _(f: MessengerFacts) -> str:
    """'agent: (5, 5), without the message' then 'bird: (3, 5)', one line per entity."""
    held = "with the message" if f.has_message else "without the message"
    return "\n".join([f"agent: {_xy(f.agent)}, {held}"] + [f"{n}: {_xy(p)}" for n, p in f.entities])


@symbolic.register
def _(f: MessengerFacts) -> str:
    """Rows north to south, '.' empty, 'A' the agent, capitals for entities, '*' overlaps."""
    width, height = f.size
    cells: dict[tuple[int, int], list[str]] = {f.agent: ["agent"]}
    for name, p in f.entities:
        cells.setdefault(p, []).append(name)
    rows = []
    for y in range(height):
        row = ""
        for x in range(width):
            here = cells.get((x, y))
            row += "." if not here else "*" if len(here) > 1 else SYMBOLS.get(here[0], "A")
        rows.append(row)
    held = "with the message" if f.has_message else "without the message"
    legend = [f"A = agent ({held})"] + [f"{SYMBOLS[n]} = {n}" for n, _ in f.entities]
    legend += [
        f"* = {' and '.join(here)} at {_xy(p)}"
        for p, here in sorted(cells.items(), key=lambda c: (c[0][1], c[0][0]))
        if len(here) > 1
    ]
    return "\n".join(rows) + "\nLegend: " + ", ".join([*legend, ". = empty"])
