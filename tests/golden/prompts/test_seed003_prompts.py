"""The seed-003 prompts (writers, read-time compressor, reader) are the recorded ones."""

from __future__ import annotations

import json

from tests.golden.prompts.seed003 import FIXTURE, prompts


def test_seed003_prompts_are_the_recorded_ones():
    recorded = json.loads(FIXTURE.read_text())
    now = json.loads(json.dumps(prompts()))
    assert sorted(now) == sorted(recorded)
    for name, msgs in recorded.items():
        assert now[name] == msgs, name
