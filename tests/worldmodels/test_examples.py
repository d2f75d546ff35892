"""Seed 004's in-context examples with a query: the registry and the stored household texts."""

import re

import pytest

from statelab.worldmodels import examples as ex
from statelab.worldmodels.examples import household as hh

TYPES = hh.TASK_TYPES


def test_query_variants_get_an_example_per_task_type_and_others_none():
    for t in TYPES:
        belief = ex.example_for("household", t, "belief")
        assert belief is not None and ex.example_for("household", t, "bbwm:zipf") == belief
        noprob = ex.example_for("household", t, "belief-noprob")
        assert noprob is not None and noprob != belief
        for text in (belief, noprob):
            obj = text.split("Action: query where is ", 1)[1].split("\n", 1)[0]
            answer = text.split("\nObservation: ", 1)[1].split("\n", 1)[0]
            assert "Your task is to: " in text.split("\nThought: ", 1)[0]
            assert f" {obj} " in f" {text.split('Your task is to: ', 1)[1].split(chr(10))[0]} "
            if text is belief:
                assert answer.startswith(f"{obj} is most likely at: ")
                assert re.search(r"\([01]\.\d\d\)", answer)
            else:
                assert not re.search(r"\([01]\.\d\d\)", answer) and answer.startswith(obj)
        for variant in ("memory", "walle", "none", "none:derail"):
            assert ex.example_for("household", t, variant) is None
    assert ex.example_for("babyai", "goto", "belief") is None
    assert ex.example_for("household", "no_such_type", "belief") is None


def test_register_example_adds_a_family():
    ex.register_example("toyworld", lambda t, v: f"{t}/{v}" if v == "belief" else None)
    try:
        assert ex.example_for("toyworld", "a", "belief") == "a/belief"
        assert ex.example_for("toyworld", "a", "walle") is None
    finally:
        ex._BUILDERS.pop("toyworld")
    assert ex.family_of("household:placement=zipf") == "household"
    assert ex.family_of("scienceworld/boil") == "scienceworld"


@pytest.mark.parametrize("mode", hh.MODES)
def test_regenerating_the_put_examples_gives_the_same_bytes(mode):
    pytest.importorskip("textworld")
    t = "pick_and_place_simple"
    assert hh.build(t, mode) == hh.stored(t, mode)


@pytest.mark.slow
@pytest.mark.parametrize("task_type", TYPES[1:])
def test_regenerating_every_example_gives_the_same_bytes(task_type):
    pytest.importorskip("textworld")
    for mode in hh.MODES:
        assert hh.build(task_type, mode) == hh.stored(task_type, mode)


def test_scienceworld_examples_are_registered_for_the_query_variants() -> None:
    """The seed-004 agent finds ScienceWorld's example through the registry: the query
    variants get the stored example (opening with the query), the others none."""
    from statelab.worldmodels.adapters._scienceworld_examples import scienceworld_wm_example
    from statelab.worldmodels.examples import example_for, family_of, task_of

    env = "scienceworld/boil:start=task"
    assert family_of(env) == "scienceworld"
    task = task_of(env, "Your task is to boil water.")
    assert task == "boil"
    for variant in ("belief", "bbwm", "belief-noprob", "bbwm:zipf"):
        got = example_for("scienceworld", task, variant)
        assert got is not None and "query where is" in got
        assert got == scienceworld_wm_example("boil", variant.split(":")[0])
    for variant in ("memory", "walle", "none"):
        assert example_for("scienceworld", task, variant) is None
