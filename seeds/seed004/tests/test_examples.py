"""Seed 004's few-shot example sets: registered by the plugin with the lab's registry
(``statelab.agents.example_sets``), the world-model variants' sets and the plain one, and the
stored household texts regenerate byte for byte."""

import re

import pytest

from statelab.agents.example_sets import example_set_names, example_text
from statelab_seed004.examples import household as hh

TYPES = hh.TASK_TYPES


def test_the_plugin_registers_the_plain_set_and_one_per_query_variant():
    names = set(example_set_names())
    assert {"seed004", "worldmodel:belief", "worldmodel:bbwm", "worldmodel:belief-noprob"} <= names
    assert not {"worldmodel:memory", "worldmodel:walle"} & names


def test_query_variants_get_an_example_per_task_type_and_others_none():
    for t in TYPES:
        belief = example_text("worldmodel:belief", "household", t)
        assert belief is not None and example_text("worldmodel:bbwm", "household", t) == belief
        noprob = example_text("worldmodel:belief-noprob", "household", t)
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
        plain = example_text("seed004", "household", t)
        assert plain is not None and "query" not in plain
    assert example_text("worldmodel:belief", "babyai", "goto") is None
    assert example_text("worldmodel:belief", "household", "no_such_type") is None
    assert example_text("worldmodel:belief", "household", None) is None
    assert example_text("seed004", "scienceworld", "boil") is None


def test_scienceworld_examples_are_registered_for_the_query_variants() -> None:
    from statelab_seed004.examples.scienceworld import scienceworld_wm_example

    for variant in ("belief", "bbwm", "belief-noprob"):
        got = example_text(f"worldmodel:{variant}", "scienceworld", "boil")
        assert got is not None and "query where is" in got
        assert got == scienceworld_wm_example("boil", variant)


@pytest.mark.parametrize("mode", hh.MODES)
def test_regenerating_the_put_examples_gives_the_same_bytes(mode):
    pytest.importorskip("textworld")
    t = "pick_and_place_simple"
    assert hh.build(t, mode) == hh.stored(t, mode)


def test_regenerating_the_plain_put_example_gives_the_same_bytes():
    pytest.importorskip("textworld")
    t = "pick_and_place_simple"
    assert hh.build(t, hh.PLAIN) == hh.stored(t, hh.PLAIN)


@pytest.mark.slow
@pytest.mark.parametrize("task_type", TYPES[1:])
def test_regenerating_every_example_gives_the_same_bytes(task_type):
    pytest.importorskip("textworld")
    for mode in (*hh.MODES, hh.PLAIN):
        assert hh.build(task_type, mode) == hh.stored(task_type, mode)
