"""Issue 23, round two: what an env echoes of a reply is capped where the loop sends the
action (item 3); an env whose construction hangs fails its own episode in one line while the
others play (item 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from statelab.run._episode_parts import MAX_ACTION
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store


def _experiment(tmp: Path, replies: list[str], **over: Any):
    script = tmp / "replies.json"
    script.write_text(json.dumps(replies))
    data: dict[str, Any] = {
        "name": "r2",
        "random": False,
        "expert": False,
        "model": f"scripted:{script}",
        "seeds": [0],
        "grid": {"env": ["hanoi"], "history": ["full"]},
        "out": str(tmp / "results"),
        "cache": None,
        "max_steps": 3,
    }
    data.update(over)
    return parse_experiment(data)


def test_an_unparsed_reply_reaches_the_env_and_its_echo_cut_to_max_action(tmp_path):
    # a 100,000-character one-line reply is under the model's reply cap (131,072), parses
    # onto no move, and is the action: Hanoi echoes it ("You tried to ...") into each step's
    # observation, which a full history then repeats in every later prompt
    reply = "y" * 100_000
    exp = _experiment(tmp_path, [reply])
    res = run_sync(exp, progress=None)
    assert (res.done, res.failed) == (1, 0), res.failures
    store = Store(exp.out_dir / "store.sqlite", readonly=True)
    try:
        steps = store.table("steps", ["t", "action", "observation", "meta"])
    finally:
        store.close()
    assert len(steps) == 3
    assert (steps.action.str.len() == MAX_ACTION).all()
    # the echo: "You tried to <action>. That is not a valid action ..." and the pegs
    assert (steps.observation.str.len() < MAX_ACTION + 300).all()
    assert steps.observation.str.startswith("You tried to yyy").all()
    assert [json.loads(m)["action-cut"] for m in steps.meta] == [100_000] * 3


def test_a_short_action_is_sent_as_it_is(tmp_path):
    move = "Action: Move the top disk of rod A to the top of rod C"
    exp = _experiment(tmp_path, [move], max_steps=1)
    res = run_sync(exp, progress=None)
    assert res.done == 1, res.failures
    store = Store(exp.out_dir / "store.sqlite", readonly=True)
    try:
        steps = store.table("steps", ["action", "meta"])
    finally:
        store.close()
    assert steps.action.tolist() == ["Move the top disk of rod A to the top of rod C"]
    assert "action-cut" not in (steps.meta[0] or "")
