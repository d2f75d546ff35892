"""A refactor changes no result: every golden episode replays identically."""

from __future__ import annotations

import pytest
from tests.golden._golden import all_cases, case_id, load
from tests.golden._play import play

GOLDEN = load()


@pytest.mark.parametrize(("case", "seed"), all_cases(), ids=[case_id(c, s) for c, s in all_cases()])
def test_golden_episode_is_unchanged(case, seed):
    if case[0] == "household":
        pytest.importorskip("textworld")
    want = GOLDEN[case_id(case, seed)]
    got = play(case, seed)
    assert got["score"] == want["score"]
    assert len(got["trajectory"]) == len(want["trajectory"])
    for g, w in zip(got["trajectory"], want["trajectory"], strict=True):
        for key in w:
            assert g[key] == w[key], f"step {w['t']}: {key} differs"
    assert got == want
