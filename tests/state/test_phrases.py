"""NO-HINT and the command-phrase fraction (seed 003, sections 5.3 and 5.5): NO-HINT is the
SUMMARY prompt without the retention hint; the fraction of a constructed state is the count of
its imperative clauses over its clauses, known by construction, and a store's runs get the mean
over their stored states."""

from __future__ import annotations

import pytest

from statelab.core import BuildContext, Observation, Transition
from statelab.facts import TextFacts
from statelab.state import HISTORIES
from statelab.state.bounded import FORMS, RETENTION_HINT, SYSTEMS
from statelab.state.phrases import clauses, command_fraction, mean_command_fraction, state_text


def _messages(form: str) -> list[dict]:
    memory = HISTORIES.build(f"bounded:{form}:64", BuildContext(seed=1))
    obs = Observation("A fridge.", TextFacts("A fridge."), ("open fridge",), "cook")
    state = memory.init(obs, None)
    return memory.messages(state, Transition(1, "look", "", 0.0, obs, False, False))


def test_nohint_is_summary_without_the_retention_hint():
    summary, nohint = _messages("summary"), _messages("nohint")
    assert nohint[1] == summary[1]  # the same instruction, word for word
    assert RETENTION_HINT in summary[0]["content"]
    assert RETENTION_HINT not in nohint[0]["content"]
    assert summary[0]["content"].replace(" " + RETENTION_HINT, "") == nohint[0]["content"]
    assert all(RETENTION_HINT in SYSTEMS[f] for f in FORMS if f != "nohint")
    built = HISTORIES.build("bounded:nohint:128", BuildContext())
    assert built.args["form"] == "nohint" and built.args["budget"] == 128  # declared params


def test_guide_puts_locations_and_room_connections_first():
    rules = FORMS["guide"]
    assert rules.index("(1) keep where each ingredient and tool was seen") < rules.index(
        "(2) keep the recipe"
    )
    assert "how the rooms connect" in rules.split("(2)")[0]
    assert "word for word" not in rules


@pytest.mark.parametrize(
    ("text", "fraction"),
    [
        # 2 commands of 4 clauses
        (
            "The carrot is in the fridge. Take carrot from fridge. Slice the carrot. "
            "The knife is on the counter.",
            2 / 4,
        ),
        # list marks, BELIEF tags and SLOTS labels do not hide a command: 3 of 5
        (
            "- [high] the fridge holds a carrot\n- [medium] go north to the corridor\n"
            "TASK: fry the carrot\nWORLD: the stove is in the kitchen\n1. then prepare meal",
            3 / 5,
        ),
        # facts about past actions are not commands: 0 of 3
        ("You took the carrot; the carrot was sliced, the stove is hot.", 0.0),
        ("Take carrot, dice carrot, fry carrot, prepare meal, eat meal", 1.0),
        ("", None),
        ("- \n ... \n", None),
    ],
)
def test_command_fraction_of_constructed_states(text, fraction):
    got = command_fraction(text)
    assert got == (pytest.approx(fraction) if fraction is not None else None)


def test_clauses_and_the_stored_header():
    assert clauses("A. B; c, d\ne!") == ["A", "B", "c", "d", "e"]
    assert state_text("Your state (at most 64 tokens):\nGo north.") == "Go north."
    assert state_text("Go north.\nTake carrot.") == "Go north.\nTake carrot."
    mean, n = mean_command_fraction(
        ["Your state (at most 64 tokens):\nGo north. The fridge is here.", "Take carrot.", ""]
    )
    assert (mean, n) == (pytest.approx((0.5 + 1.0) / 2), 2)
