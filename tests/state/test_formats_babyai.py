import pytest

from statelab.core import ConfigError
from statelab.facts import EgoViewFacts, check
from statelab.state import formats_for, render

WALL, EMPTY, UNSEEN = (2, 5, 0), (1, 0, 0), (0, 0, 0)
RED_BALL, LOCKED_BLUE_DOOR, GREEN_KEY = (6, 0, 0), (4, 2, 2), (5, 1, 0)

# a 3x3 view, the agent at the bottom middle carrying a green key
SMALL = EgoViewFacts(
    cells=(
        (WALL, RED_BALL, UNSEEN),
        (EMPTY, LOCKED_BLUE_DOOR, EMPTY),
        (EMPTY, GREEN_KEY, WALL),
    ),
    direction=0,
    mission="open the blue door",
    agent=(2, 1),
)
EMPTY_HANDED = EgoViewFacts(
    cells=((WALL, WALL, WALL), (EMPTY, RED_BALL, EMPTY), (EMPTY, EMPTY, EMPTY)),
    direction=3,
    agent=(2, 1),
)


def test_formats_that_apply():
    assert formats_for(EgoViewFacts) == ["natural", "matrix", "symbolic"]


def test_natural():
    assert render("natural", SMALL) == (
        "You carry a green key.\n"
        "a wall 1 step right\n"
        "a red ball 2 steps forward\n"
        "a locked blue door 1 step forward"
    )
    assert render("natural", EMPTY_HANDED) == "a red ball 1 step forward"


def test_symbolic():
    assert render("symbolic", SMALL) == (
        "#a?\n"
        ".b.\n"
        ".^#\n"
        "Legend: ^ you (facing up), # wall, . empty floor, ? unseen, "
        "a red ball, b locked blue door\n"
        "You carry a green key."
    )
    assert render("symbolic", EMPTY_HANDED) == (
        "###\n.a.\n.^.\nLegend: ^ you (facing up), # wall, . empty floor, a red ball"
    )


def test_matrix():
    assert render("matrix", SMALL) == (
        "Key: each cell is [object, colour, state]; object 0 unseen, 1 empty, 2 wall, "
        "4 door, 5 key, 6 ball, 7 box; colour 0 red, 1 green, 2 blue, 3 purple, 4 yellow, "
        "5 grey; state of a door 0 open, 1 closed, 2 locked; you are at row 3, column 2 "
        "(from 1), facing row 1, and your own cell holds what you carry.\n"
        "[[[2,5,0],[6,0,0],[0,0,0]],\n"
        "[[1,0,0],[4,2,2],[1,0,0]],\n"
        "[[1,0,0],[5,1,0],[2,5,0]]]"
    )


def test_same_description_same_letter():
    twins = EgoViewFacts(
        cells=((RED_BALL, EMPTY, RED_BALL), (GREEN_KEY, EMPTY, EMPTY)), direction=0, agent=(1, 1)
    )
    assert render("symbolic", twins).splitlines()[:2] == ["a.a", "b^."]


def test_other_formats_do_not_apply():
    with pytest.raises(ConfigError, match="formats that do: natural, matrix, symbolic"):
        check("dict-list", EgoViewFacts, "babyai/goto")
