"""Tool descriptions (exact geometry + the model's words) and the library's disk cache."""

from __future__ import annotations

import asyncio
import json

import pytest

from statelab.llm import ScriptedLLM
from statelab.tools.describe import (
    action_list_text,
    clean,
    describe,
    displacement_text,
    exact_text,
    library_text,
)
from statelab.tools.library import (
    LibrarySpec,
    build_geometry,
    build_library,
    cache_root,
    clear_memo,
    library_dir,
)

SMALL = LibrarySpec(n=40, k=3, seed=1)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STATELAB_CACHE", str(tmp_path))
    clear_memo()
    yield tmp_path
    clear_memo()


@pytest.mark.parametrize(
    ("tool", "text"),
    [
        ("WWWWW", "no movement"),
        ("UWWWW", "one row up, no sideways change"),
        ("LWWWW", "one column to the left, no row change"),
        ("RRRRR", "five columns to the right, no row change"),
        ("DDDDD", "five rows down, no sideways change"),
        ("DRDRD", "three rows down and two columns to the right"),
        ("DRRRR", "one row down and four columns to the right"),
        ("ULLUR", "two rows up and one column to the left"),
        ("UDWWW", "no movement"),
    ],
)
def test_displacement_is_exact(tool, text):
    assert displacement_text(tool) == text


def test_action_list_in_runs():
    assert action_list_text("DDRDD") == "down twice, then right once, then down twice"
    assert action_list_text("UWWWW") == "up once, then hold four steps"
    assert action_list_text("WWWWW") == "hold five steps"
    assert action_list_text("DRRRR") == "down once, then right four times"
    assert action_list_text("RRRRR") == "right five times"


def test_description_starts_with_exact_geometry_whatever_the_model_says():
    llm = ScriptedLLM(["bananas are yellow\nand long", "strategy: go right\nrisks: cars\nfoo"])
    out = asyncio.run(describe(["DRDRD", "RRRRR"], llm, "long"))
    assert out["DRDRD"] == (
        "total displacement: three rows down and two columns to the right\n"
        "action list: down once, then right once, then down once, then right once, then down "
        "once\nstrategy: bananas are yellow"
    )
    assert out["RRRRR"].startswith(exact_text("RRRRR") + "\n")
    assert out["RRRRR"].endswith("strategy: go right\nrisks: cars")
    # every request carries the geometry and a seed per tool
    assert "total displacement: five columns to the right" in llm.seen[1][1]["content"]


def test_clean_keeps_the_forms_fields():
    text = "Strategy: a staircase\n- Risks:  cars from below \nWhen to use: target down-right"
    assert clean(text, "long") == (
        "strategy: a staircase\nrisks: cars from below\nwhen to use: target down-right"
    )
    assert clean(text, "short") == "strategy: a staircase"
    assert clean("", "short") == "strategy: (no description)"
    rambling = clean("strategy: " + "a game-changer " * 40, "short")
    assert len(rambling) <= len("strategy: ") + 240 and rambling.endswith(" ...")


def test_library_text_lays_tools_out_as_the_seed():
    text = library_text(["WWWWW", "DRDRD"], {"WWWWW": "total displacement: no movement"})
    assert text.startswith("Each tool is a list of actions")
    assert "==================== tool WWWWW ====================\ntotal displacement" in text
    assert "==================== end description tool DRDRD ====================" in text
    assert "action list: down once, then right once" in text  # undescribed: exact text


def test_cache_root_follows_the_env_var(cache):
    assert cache_root() == cache / "tools"


def test_geometry_is_cached_on_disk_and_reloaded_identically(cache):
    g1 = build_geometry(SMALL)
    path = library_dir(SMALL) / "library.json"
    assert path.is_file() and path.parent.parent == cache / "tools"
    g2 = build_geometry(SMALL)
    assert g2.tools == g1.tools and g2.quantization == g1.quantization
    assert [x.window for x in g2.geodesics] == [x.window for x in g1.geodesics]
    assert len(g1.tools) == len(set(g1.tools)) and "WWWWW" in g1.tools


def test_second_build_makes_no_model_call():
    llm = ScriptedLLM(["strategy: move along"])
    lib = asyncio.run(build_library(SMALL, llm, "short"))
    assert llm.calls == len(lib.names)
    clear_memo()  # a new process: only the disk cache is left
    again = ScriptedLLM(["strategy: something else"])
    lib2 = asyncio.run(build_library(SMALL, again, "short"))
    assert again.calls == 0 and lib2.descriptions == lib.descriptions
    files = sorted(p.name for p in library_dir(SMALL).iterdir())
    assert files[0].startswith("descriptions-short-") and files[-1] == "library.json"
    stored = json.loads((library_dir(SMALL) / files[0]).read_text())
    assert stored["model"] == llm.model_id


def test_cache_is_keyed_by_model_and_form():
    a = ScriptedLLM(["strategy: a"], name="a")
    asyncio.run(build_library(SMALL, a, "short"))
    b = ScriptedLLM(["strategy: b"], name="b")
    lib_b = asyncio.run(build_library(SMALL, b, "short"))
    assert b.calls == len(lib_b.names)
    asyncio.run(build_library(SMALL, b, "long"))
    assert b.calls == 2 * len(lib_b.names)


def test_concurrent_builds_share_one():
    llm = ScriptedLLM(["strategy: x"])

    async def many() -> list:
        return await asyncio.gather(*(build_library(SMALL, llm, "long") for _ in range(4)))

    libs = asyncio.run(many())
    assert llm.calls == len(libs[0].names)
    assert all(lib is libs[0] for lib in libs)


def test_without_a_model_descriptions_are_the_geometry():
    lib = asyncio.run(build_library(SMALL, None))
    assert all(lib.descriptions[t] == exact_text(t) for t in lib.names)
