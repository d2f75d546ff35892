import pytest

from statelab.core import ConfigError
from statelab.facts import PegFacts, check
from statelab.state import formats_for, render

START = PegFacts(((2, 1, 0), (), ()))
MID = PegFacts(((2,), (1,), (0,)))
TWO = PegFacts(((2, 1), (), (0,)))


def test_hanoi_formats_that_apply():
    assert formats_for(PegFacts) == ["natural", "tagged-list", "dict-list", "matrix"]


@pytest.mark.parametrize(
    ("fmt", "facts", "expected"),
    [
        ("natural", START, "Peg A has disks 2, 1, and 0 (bottom to top). Pegs B and C are empty."),
        ("natural", MID, "Peg A has disk 2. Peg B has disk 1. Peg C has disk 0."),
        (
            "natural",
            TWO,
            "Peg A has disks 2 and 1 (bottom to top). Peg C has disk 0. Peg B is empty.",
        ),
        (
            "tagged-list",
            START,
            "- A: |bottom, [2, 1, 0], top|\n- B: |bottom, [], top|\n- C: |bottom, [], top|",
        ),
        (
            "tagged-list",
            TWO,
            "- A: |bottom, [2, 1], top|\n- B: |bottom, [], top|\n- C: |bottom, [0], top|",
        ),
        ("dict-list", START, '{"A":[2,1,0], "B":[], "C":[]}'),
        ("dict-list", MID, '{"A":[2], "B":[1], "C":[0]}'),
        ("matrix", START, "[[2,1,0],\n[-1,-1,-1],\n[-1,-1,-1]]"),
        ("matrix", TWO, "[[2,1,-1],\n[-1,-1,-1],\n[0,-1,-1]]"),
    ],
)
def test_exact_rendering(fmt, facts, expected):
    assert render(fmt, facts) == expected


def test_format_mismatch_names_the_formats_that_apply():
    with pytest.raises(ConfigError) as e:
        check("coordinates", PegFacts, "hanoi")
    assert str(e.value) == (
        "format 'coordinates' does not apply to env 'hanoi'; formats that do: "
        "natural, tagged-list, dict-list, matrix"
    )
    with pytest.raises(ConfigError, match="unknown format 'json'; allowed: natural"):
        check("json", PegFacts, "hanoi")
