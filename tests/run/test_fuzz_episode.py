"""Any model reply goes through the whole episode loop and ends in a consistent store.

Arbitrary Unicode (lone surrogates, control and bidi characters, NULs), huge replies and
degenerate ones (blank lines, repeated markers) are fed by the scripted backend to every kind
of agent; no exception escapes the runner, every episode ends done or failed with a reason,
and the store holds exactly one record per episode (issue 10)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

DEGENERATE = st.sampled_from(
    [
        " \n" * 3000,
        "\n" * 5000,
        "Action:" * 2000,
        "action: " + "x" * 200_000,
        ">goal: " + " " * 20_000 + "y",
        "<think>" + "hmm " * 5000,
        "\ud800\udfff\x00\x1b[31m\u202e",
        '{"action": ' * 500,
        "Step 1: " + " " * 20_000 + "z",
        "",
    ]
)
REPLY = st.one_of(st.text(max_size=300), DEGENERATE)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(replies=st.lists(REPLY, min_size=1, max_size=4), case=st.integers(0, 10_000))
def test_any_reply_ends_every_episode_done_or_failed_with_a_reason(tmp_path, replies, case):
    out = tmp_path / f"c{case}"
    out.mkdir(exist_ok=True)
    script = out / "replies.json"
    script.write_text(json.dumps(replies))
    exp = parse_experiment(
        {
            "name": "fuzz",
            "random": False,
            "model": f"scripted:{script}",
            "seeds": [0],
            "grid": {
                "env": ["hanoi", "textcraft"],
                "agent": ["act", "react", "stateact", "adapt:react@2,2"],
                "history": ["full", "summary"],
            },
            "max_steps": 3,
            "out": str(out),
            "cache": str(out / "cache.sqlite"),
            "expert": False,
        }
    )
    for _ in range(2):  # the rerun replays from the cache and finds everything done
        res = run_sync(exp, progress=None)
    assert res.failed == 0 or all(r for r in res.failures)
    store = Store(exp.out_dir / "store.sqlite")
    try:
        eps = store.table("episodes")
        steps = store.table("steps")
    finally:
        store.close()
    assert len(eps) == 2 * 4 * 2 and not eps.duplicated(["run", "seed", "rollout"]).any()
    assert set(eps.status) <= {"done", "failed"}
    assert eps[eps.status == "failed"].error.map(bool).all()
    done = eps[eps.status == "done"]
    assert (done.steps >= 1).all()
    assert len(steps) == int(done.steps.sum())
