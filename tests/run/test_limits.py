"""Issue 25 item 4: limits per episode. An episode that reaches its wall-clock, token or dollar
limit ends after that step, truncated (issue 32 item 6: status ``truncated``, the limit its
``reason``), scored as it stands, the reason on its last step; an episode its step budget
ends is ``done`` (``max_steps``); runs without limits keep their keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statelab.core import ConfigError
from statelab.run.config import parse_experiment
from statelab.run.limits import limit_reached
from statelab.run.records import EpisodeRecord
from statelab.run.runner import run_sync
from statelab.run.store import Store

# an illegal move every step: the episode never ends by itself before max_steps
REPLY = "Action: Move the top disk of rod B to the top of rod A"


def _exp(tmp: Path, limits: dict | None, name: str = "lim") -> object:
    tmp.mkdir(parents=True, exist_ok=True)
    script = tmp / "replies.json"
    script.write_text(json.dumps([REPLY]))
    data = {
        "name": name, "random": False, "expert": False, "model": f"scripted:{script}",
        "seeds": [0, 1], "grid": {"env": ["hanoi"]}, "out": str(tmp / "results"),
        "cache": None, "max_steps": 10,
    }  # fmt: skip
    if limits is not None:
        data["limits"] = limits
    return parse_experiment(data)


def _steps(exp: object) -> list[dict]:
    st = Store(exp.out_dir / "store.sqlite", readonly=True)  # type: ignore[attr-defined]
    eps = st.table("episodes").to_dict("records")
    steps = st.table("steps")
    out = []
    for e in eps:
        last = steps[steps.seed == e["seed"]].sort_values("t").iloc[-1]
        out.append({**e, "last_meta": json.loads(last["meta"] or "{}")})
    return out


def test_a_token_limit_ends_the_episode_after_the_step_that_reached_it(tmp_path: Path) -> None:
    free = _exp(tmp_path / "free", None)
    assert run_sync(free, progress=None).done == 2
    unlimited = _steps(free)
    assert [e["steps"] for e in unlimited] == [10, 10]
    assert [(e["status"], e["reason"]) for e in unlimited] == [("done", "max_steps")] * 2
    st = Store(free.out_dir / "store.sqlite", readonly=True)  # type: ignore[attr-defined]
    steps = st.table("steps")
    seed0 = steps[steps.seed == 0].sort_values("t")
    used = (seed0["agent_in"] + seed0["agent_out"]).cumsum().tolist()
    cap = used[3] - 1  # more than 3 steps use, what 4 steps reach (both seeds alike)
    assert used[2] < cap
    exp = _exp(tmp_path / "lim", {"tokens": cap})
    res = run_sync(exp, progress=None)
    assert (res.done, res.truncated, res.failed) == (0, 2, 0)
    for e in _steps(exp):
        assert e["steps"] == 4 and (e["status"], e["reason"]) == ("truncated", "tokens")
        assert e["agent_in"] + e["agent_out"] >= cap
        assert e["last_meta"]["stopped"].startswith(f"limit: tokens {cap:,} reached (")


def test_a_wall_clock_limit_and_no_limit_in_the_key(tmp_path: Path) -> None:
    exp = _exp(tmp_path, {"wall_s": 1e-9})  # reached at the first step
    assert run_sync(exp, progress=None).truncated == 2
    for e in _steps(exp):
        assert e["steps"] == 1 and e["last_meta"]["stopped"].startswith("limit: wall_s")
        assert (e["status"], e["reason"]) == ("truncated", "wall_s")
    a, b = _exp(tmp_path, None).runs()[0], _exp(tmp_path, {}).runs()[0]  # type: ignore[attr-defined]
    c = exp.runs()[0]  # type: ignore[attr-defined]
    assert a.key == b.key != c.key  # a limit is part of the run; none keeps the old key


def test_dollars_count_only_priced_calls() -> None:
    ep = EpisodeRecord(run="r", seed=0, status="done", agent_in=10)
    assert limit_reached({"dollars": 0.01}, ep, 0.0) == ""  # no price known: never reached
    ep.cost = 0.02
    assert limit_reached({"dollars": 0.01}, ep, 0.0) == "limit: dollars 0.0100 reached (0.0200)"
    assert limit_reached({}, ep, 1e9) == ""


@pytest.mark.parametrize("bad", [{"tokens": 0}, {"wall_s": -1}, {"dollars": 0}, {"steps": 3}])
def test_bad_limits_are_one_line(tmp_path: Path, bad: dict) -> None:
    with pytest.raises(ConfigError) as e:
        _exp(tmp_path, bad)
    assert "limits" in str(e.value) and "\n" not in str(e.value)
