"""The first prompt of every seed-001/002 config row is the recorded one (see record.py)."""

from __future__ import annotations

import json

import pytest
from tests.golden.prompts.record import FIXTURE, cases, first_prompt, key

WANT = json.loads(FIXTURE.read_text())


def test_every_config_row_is_recorded():
    assert sorted(WANT) == sorted(key(c) for c in cases())


@pytest.mark.parametrize("case", cases(), ids=key)
def test_first_prompt_is_unchanged(case):
    if case[1] == "household":
        pytest.importorskip("textworld")
    assert first_prompt(*case[1:]) == WANT[key(case)]
