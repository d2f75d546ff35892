"""Issue 32 items 6 and 7: how an episode ended is stored. An episode ends ``done`` (the env's
end, its step budget, a stop: ``reason`` says which), ``truncated`` (a per-episode limit cut
it: ``reason`` names the limit) or ``failed`` (an error: the steps it played are kept).
Truncated episodes count as finished on resume; failed ones are played again, their stored
steps replaced, never duplicated. A store written before the ``reason`` column keeps its
statuses and reads."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from statelab.core import LLM, Completion, GenParams, Message, ModelError, Usage
from statelab.run._envcall import EnvCallError
from statelab.run.config import parse_experiment
from statelab.run.runner import failure_reason, run_sync
from statelab.run.store import Store

# an illegal move: the episode never ends by itself before max_steps
REPLY = "Action: Move the top disk of rod B to the top of rod A"


class FailsAfter(LLM):
    """Replies :data:`REPLY` ``ok`` times, then every call fails (a server gone down)."""

    model_id = "fails-after"

    def __init__(self, ok: int) -> None:
        self.ok = ok

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        if self.ok <= 0:
            raise ModelError("server went away")
        self.ok -= 1
        return Completion(REPLY, Usage(10, 5))


def _exp(tmp: Path, **over: Any) -> Any:
    script = tmp / "replies.json"
    script.write_text(json.dumps([REPLY]))
    data: dict[str, Any] = {
        "name": "ends", "random": False, "expert": False, "model": f"scripted:{script}",
        "seeds": [0], "grid": {"env": ["hanoi"]}, "out": str(tmp / "results"), "cache": None,
        "max_steps": 6, "concurrency": 1,
    }  # fmt: skip
    data.update(over)
    return parse_experiment(data)


def _episodes(exp: Any) -> list[dict[str, Any]]:
    st = Store(exp.out_dir / "store.sqlite", readonly=True)
    try:
        return st.rows("episodes", order="seed")
    finally:
        st.close()


def _steps(exp: Any, seed: int = 0) -> list[dict[str, Any]]:
    st = Store(exp.out_dir / "store.sqlite", readonly=True)
    try:
        return st.episode_steps(exp.runs()[0].key, seed, 0, ["t", "action"])
    finally:
        st.close()


def test_a_failed_episode_keeps_the_steps_it_played_and_a_rerun_replaces_them(
    tmp_path: Path,
) -> None:
    exp = _exp(tmp_path)
    res = run_sync(exp, progress=None, llm_factory=lambda spec: FailsAfter(3))
    assert (res.done, res.truncated, res.failed) == (0, 0, 1)
    [ep] = _episodes(exp)
    assert (ep["status"], ep["reason"], ep["error"]) == (
        "failed", "model", "ModelError: server went away"
    )  # fmt: skip
    # before: no step of a failed episode was stored (0); now the three it played
    assert [s["t"] for s in _steps(exp)] == [1, 2, 3] and ep["steps"] == 3
    assert ep["agent_in"] == 30 and ep["agent_calls"] == 3  # its counts are those steps'
    # a rerun plays the failed episode again (as before), replacing its steps
    again = run_sync(exp, progress=None)
    assert (again.skipped, again.done, again.failed) == (0, 1, 0)
    [ep] = _episodes(exp)
    assert (ep["status"], ep["reason"], ep["error"]) == ("done", "max_steps", None)
    assert [s["t"] for s in _steps(exp)] == [1, 2, 3, 4, 5, 6]  # six steps, none twice


def test_truncated_episodes_are_finished_on_a_rerun(tmp_path: Path) -> None:
    exp = _exp(tmp_path, seeds=[0, 1], limits={"wall_s": 1e-9})
    res = run_sync(exp, progress=None)
    assert (res.done, res.truncated, res.failed) == (0, 2, 0)
    assert [(e["status"], e["reason"], e["steps"]) for e in _episodes(exp)] == [
        ("truncated", "wall_s", 1)
    ] * 2
    again = run_sync(exp, progress=None)
    assert (again.skipped, again.done, again.truncated) == (2, 0, 0)
    assert [s["t"] for s in _steps(exp, 1)] == [1]


def test_whose_error_failed_an_episode() -> None:
    assert failure_reason(ModelError("x")) == "model"
    assert failure_reason(EnvCallError("step: boom")) == "env"
    assert failure_reason(ValueError("x")) == "error"


def test_a_store_without_reasons_keeps_its_statuses_and_resumes(tmp_path: Path) -> None:
    exp = _exp(tmp_path, seeds=[0, 1])
    run_sync(exp, progress=None)
    path = exp.out_dir / "store.sqlite"
    db = sqlite3.connect(path)  # the store as the release before the column wrote it
    db.execute("ALTER TABLE episodes DROP COLUMN reason")
    db.execute("DELETE FROM episodes WHERE seed = 1")
    db.commit()
    db.close()
    st = Store(path, readonly=True)
    try:
        frame = st.episodes_frame()
        assert list(frame["status"]) == ["done"] and "reason" not in frame
    finally:
        st.close()
    res = run_sync(exp, progress=None)  # resumes: the column is added, old rows keep theirs
    assert (res.skipped, res.done) == (1, 1)
    assert [(e["seed"], e["status"], e["reason"]) for e in _episodes(exp)] == [
        (0, "done", None),
        (1, "done", "max_steps"),
    ]
