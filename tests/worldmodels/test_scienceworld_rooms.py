"""ScienceWorld's object -> starting-room table (``scienceworld_rooms.json``): its lookups,
and a sample of it against the package (the starting worlds of a few variations, read from
the simulator's object tree as ``scripts/scienceworld_rooms.py`` reads every one)."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import pytest

from statelab.worldmodels.adapters._scienceworld_rooms import (
    ALL,
    ROOMS,
    candidate_rooms,
    room_table,
)

SCRIPT = Path(__file__).parents[2] / "scripts" / "scienceworld_rooms.py"


def test_the_table_covers_every_task_form_and_names_rooms_only():
    table = room_table()
    assert set(table) == {
        ALL, "chemistry", "conductivity", "find", "grow", "lifespan", "measure", "paint",
        "power", "stages", "state",
    }  # fmt: skip
    for form, names in table.items():
        assert names, form
        assert all(set(rooms) <= set(ROOMS) and rooms for rooms in names.values()), form


def test_lookups_by_form_then_over_all_and_by_the_name_without_its_leading_words():
    assert candidate_rooms("thermometer", "measure") == ("kitchen",)
    assert candidate_rooms("caesium", "state") == ("workshop",)
    # a form's own entry before the table over all tasks
    assert set(candidate_rooms("lead", "state")) < set(candidate_rooms("lead"))
    # 'salt water' is made, never found: the lookup drops leading words ('water')
    assert candidate_rooms("salt water", "chemistry") == candidate_rooms("water", "chemistry")
    assert candidate_rooms("no such thing at all") == ()
    # the find tasks' categories the package's referents name; no object is called 'animal':
    # an animal is a living thing, so it starts where living things start
    assert candidate_rooms("living thing", "find") == ("greenhouse", "outside")
    assert candidate_rooms("plant", "find") == ("greenhouse",)
    assert "animal" not in room_table()["find"]
    assert candidate_rooms("animal", "find") == ("greenhouse", "outside")
    assert candidate_rooms("lead", "state") == ("workshop",)


def _script():
    spec = importlib.util.spec_from_file_location("scienceworld_rooms_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(
    ("task", "variations"),
    [("find-non-living-thing", (0, 225, 299)), ("lifespan-longest-lived", (3, 93))],
)
def test_a_sample_of_the_table_matches_the_packages_starting_worlds(task, variations):
    pytest.importorskip("scienceworld")
    from statelab.envs import _scienceworld_server as server

    script = _script()
    table = room_table()
    sw = server.acquire()
    try:
        sim = server.Simulator(sw)
        with tempfile.TemporaryDirectory() as tmp:
            for var in variations:
                world = script.starting_rooms(sim, task, var, tmp)
                assert world["form"] in table
                seen = 0
                for room, names in world["rooms"].items():
                    for name in names:
                        assert room in table[world["form"]][name], (task, var, name, room)
                        assert room in table[ALL][name]
                        seen += 1
                assert seen > 50
    finally:
        server.release(sw)
