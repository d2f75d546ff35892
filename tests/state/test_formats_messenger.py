import pytest

from statelab.facts import MessengerFacts
from statelab.state import formats_for, render

START = MessengerFacts((5, 5), False, (("bird", (3, 5)), ("dog", (5, 9))))
HELD = MessengerFacts((2, 7), True, (("airplane", (7, 2)), ("queen", (2, 7))))
EMPTY = MessengerFacts((0, 0), True, ())


def grid(*marks: tuple[int, int, str]) -> str:
    rows = [["."] * 10 for _ in range(10)]
    for x, y, c in marks:
        rows[y][x] = c
    return "\n".join("".join(r) for r in rows)


def test_messenger_formats_that_apply():
    assert formats_for(MessengerFacts) == ["natural", "natural-pos", "coordinates", "symbolic"]


@pytest.mark.parametrize(
    ("fmt", "facts", "expected"),
    [
        (
            "natural",
            START,
            "You (agent) don't have the message.\n\n"
            "You see:\n- bird 2 steps to your west\n- dog 4 steps to your south",
        ),
        (
            "natural",
            HELD,
            "You (agent) already have the message.\n\n"
            "You see:\n- airplane 10 steps to your north-east\n- queen 0 steps with you",
        ),
        (
            "natural",
            EMPTY,
            "You (agent) already have the message.\n\nYou see nothing away from you.",
        ),
        (
            "natural-pos",
            START,
            "You (agent) don't have the message. You are at (5, 5).\n\n"
            "You see:\n- bird 2 steps to your west\n- dog 4 steps to your south",
        ),
        ("coordinates", START, "agent: (5, 5), without the message\nbird: (3, 5)\ndog: (5, 9)"),
        (
            "coordinates",
            HELD,
            "agent: (2, 7), with the message\nairplane: (7, 2)\nqueen: (2, 7)",
        ),
        (
            "symbolic",
            START,
            grid((5, 5, "A"), (3, 5, "B"), (5, 9, "D"))
            + "\nLegend: A = agent (without the message), B = bird, D = dog, . = empty",
        ),
        (
            "symbolic",
            HELD,
            grid((2, 7, "*"), (7, 2, "P"))
            + "\nLegend: A = agent (with the message), P = airplane, Q = queen,"
            " * = agent and queen at (2, 7), . = empty",
        ),
    ],
)
def test_exact_rendering(fmt, facts, expected):
    assert render(fmt, facts) == expected


def test_symbolic_rows_run_north_to_south():
    rows = render("symbolic", START).splitlines()
    assert rows[5] == "...B.A...." and rows[9] == ".....D...." and len(rows) == 11


def test_directions_cover_all_eight():
    names = ("airplane", "mage", "dog", "bird", "fish", "scientist", "thief", "ship")
    cells = ((5, 2), (7, 2), (7, 5), (7, 8), (5, 8), (2, 8), (2, 5), (2, 2))
    ents = tuple(zip(names, cells, strict=True))
    text = render("natural", MessengerFacts((5, 5), False, ents))
    for d in ("north", "north-east", "east", "south-east", "south", "south-west", "west",
              "north-west"):  # fmt: skip
        assert f"steps to your {d}\n" in text + "\n"
