"""Runner behaviour: cache replay, resume after a kill, failures recorded, bad replies."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from statelab.core import LLM, Completion, GenParams, Message, ModelError, Usage
from statelab.llm import ScriptedLLM, make_llm
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

REPLIES = [
    "Action: Move the top disk of rod A to the top of rod C",
    "Action: Move the top disk of rod A to the top of rod B",
    "I would rather not say",
    "Action: Move the top disk of rod C to the top of rod B",
]


def experiment(tmp: Path, **over):
    script = tmp / "replies.json"
    script.write_text(json.dumps(REPLIES))
    data = {
        "name": "t",
        "random": False,
        "model": f"scripted:{script}",
        "seeds": [0, 1],
        "grid": {"env": ["hanoi"], "history": ["full", "summary"], "format": ["tagged-list"]},
        "baseline": {"history": "full"},
        "out": str(tmp / "results"),
        "cache": str(tmp / "cache.sqlite"),
        "max_steps": 6,
    }
    data.update(over)
    return parse_experiment(data)


def trajectories(store_path: Path) -> list[tuple]:
    s = Store(store_path)
    try:
        steps = s.table("steps").sort_values(["run", "seed", "t"])
        return list(
            steps[["run", "seed", "t", "view", "reply", "action", "reward"]].itertuples(index=False)
        )
    finally:
        s.close()


def test_cache_hit_replays_identical_episodes_with_zero_model_calls(tmp_path):
    exp = experiment(tmp_path)
    first = run_sync(exp, progress=None)
    assert first.done == 6 and first.failed == 0 and first.model_calls > 0
    # same config, same cache, fresh store: every reply comes from the cache
    exp2 = experiment(tmp_path, out=str(tmp_path / "again"))
    calls = []

    def factory(spec: str) -> LLM:
        inner = make_llm(spec, cache=exp2.cache)
        calls.append(inner)
        return inner

    second = run_sync(exp2, progress=None, llm_factory=factory)
    assert second.model_calls == 0
    assert second.cached_calls == first.model_calls + first.cached_calls
    assert calls[0].inner.inner.calls == 0  # the scripted backend (in the wrapper) never asked
    assert trajectories(exp.out_dir / "store.sqlite") == trajectories(exp2.out_dir / "store.sqlite")


def test_unparseable_reply_is_an_invalid_action_not_a_crash(tmp_path):
    run_sync(experiment(tmp_path, seeds=[0]), progress=None)
    s = Store(tmp_path / "results" / "t" / "store.sqlite")
    steps = s.table("steps")
    bad = steps[steps.reply == "I would rather not say"]
    assert len(bad) >= 1
    assert (bad.parsed == 0).all() and (bad.valid == 0).all() and (bad.reward == -1.0).all()


class Broken(LLM):
    model_id = "broken"

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        raise ModelError("server at 127.0.0.1:9 is down (after 5 retries)")


def test_failing_model_records_failed_episodes_and_run_goes_on(tmp_path):
    exp = experiment(tmp_path)
    res = run_sync(exp, progress=None, llm_factory=lambda spec: Broken())
    assert res.failed == 4 and res.done == 2  # the expert episodes still run
    df = Store(exp.out_dir / "store.sqlite").episodes_frame()
    failed = df[df.status == "failed"]
    assert set(failed.error) == {"ModelError: server at 127.0.0.1:9 is down (after 5 retries)"}
    # a rerun retries the failed episodes (and only them)
    res2 = run_sync(exp, progress=None)
    assert res2.skipped == 2 and res2.done == 4 and res2.failed == 0
    df = Store(exp.out_dir / "store.sqlite").episodes_frame()
    assert len(df) == 6 and (df.status == "done").all()


SLOW_RUN = textwrap.dedent("""
    import asyncio, json, sys
    from statelab.core import LLM, Completion, Usage
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    class Slow(LLM):
        model_id = "slow"
        async def complete(self, messages, params):
            await asyncio.sleep(0.05)
            return Completion("Action: Move the top disk of rod A to the top of rod C", Usage(1, 1))

    exp = parse_experiment(json.loads(sys.argv[1]))
    res = run_sync(exp, progress=None, llm_factory=lambda spec: Slow())
    print(json.dumps({"done": res.done, "skipped": res.skipped, "failed": res.failed,
                      "reasons": dict(res.reasons)}))
""")


def test_resume_after_kill_finishes_the_rest_without_duplicates(tmp_path):
    data = {
        "name": "k",
        "model": "scripted:x",
        "seeds": list(range(6)),
        "expert": False,
        "random": False,
        "grid": {"env": ["hanoi"], "history": ["full"]},
        "max_steps": 4,
        "out": str(tmp_path),
        "cache": None,
        "concurrency": 1,
    }
    store_path = tmp_path / "k" / "store.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_RUN, json.dumps(data)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 60
    n_done = 0
    while time.monotonic() < deadline and n_done < 2:
        time.sleep(0.05)
        if store_path.exists():
            try:
                n_done = len(Store(store_path, readonly=True).table("episodes"))
            except Exception:  # the writer may hold the file for a moment
                n_done = 0
    assert n_done >= 2, "the run did not commit episodes in time"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    killed_at = Store(store_path, readonly=True).table("episodes")
    assert 2 <= len(killed_at) < 6
    out = subprocess.run(
        [sys.executable, "-c", SLOW_RUN, json.dumps(data)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    res = json.loads(out.stdout)
    assert res["skipped"] == len(killed_at) and res["done"] == 6 - len(killed_at), res
    final = Store(store_path).table("episodes")
    assert sorted(final.seed) == list(range(6))  # each seed once
    steps = Store(store_path).table("steps")
    assert len(steps) == 6 * 4 and not steps.duplicated(["run", "seed", "t"]).any()
    # episodes from before the kill were kept as they were
    before = killed_at.set_index("seed")["finished"]
    assert (final.set_index("seed").loc[before.index, "finished"] == before).all()


def test_bounded_concurrency_per_model(tmp_path):
    state = {"now": 0, "peak": 0}

    class Counting(LLM):
        model_id = "counting"
        max_concurrency = 2

        async def complete(self, messages: list[Message], params: GenParams) -> Completion:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            await asyncio.sleep(0.01)
            state["now"] -= 1
            return Completion("Action: Move the top disk of rod A to the top of rod C", Usage(1, 1))

    exp = experiment(tmp_path, seeds=list(range(6)), concurrency=8)
    res = run_sync(exp, progress=None, llm_factory=lambda s: Counting())
    assert res.done == 18 and state["peak"] == 2


def test_scripted_model_is_deterministic_per_call():
    llm = ScriptedLLM(["a", "b"])
    out = [
        asyncio.run(llm.complete([{"role": "user", "content": "x"}], GenParams())).text
        for _ in range(3)
    ]
    assert out == ["a", "b", "b"]
    with pytest.raises(Exception, match="no replies"):
        ScriptedLLM([])


def test_rollouts_are_averaged_per_seed_in_the_report(tmp_path):
    from statelab.analysis.reporting import make_report

    exp = experiment(
        tmp_path,
        rollouts=3,
        seeds=[0, 1],
        grid={"env": ["hanoi"], "history": ["full"]},
        baseline=None,
    )
    # (seed, rollout); a rollout of a seed outside every split plays seed * 1000 + rollout
    assert exp.episodes("hanoi") == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    res = run_sync(exp, progress=None)
    assert res.done == 12  # 6 acting + 6 expert episodes
    store = exp.out_dir / "store.sqlite"
    eps = Store(store).episodes_frame()
    assert sorted(set(eps.grp)) == [0, 1] and len(eps) == 12
    rep = make_report(store, tmp_path / "rep")
    row = next(r for r in rep.data["runs"] if r["agent"] == "act")
    acting = eps[eps.agent == "act"]
    by_seed = acting.groupby("grp").score.mean()
    assert row["n"] == 2 and row["mean"] == pytest.approx(by_seed.mean())


def test_credentials_in_a_model_url_never_reach_the_store(tmp_path):
    """A password in the model URL is used for requests but never stored (issue 10.16)."""
    exp = experiment(tmp_path, seeds=[0], grid={"env": ["hanoi"]}, baseline=None)
    secret_spec = "openai-compat:http://user:s3cr3t-pw@127.0.0.1:9/v1#m"
    exp = exp.model_copy(update={"model": secret_spec})
    llm = ScriptedLLM(REPLIES)
    run_sync(exp, progress=None, llm_factory=lambda spec: llm)
    blob = (exp.out_dir / "store.sqlite").read_bytes()
    for wal in exp.out_dir.glob("store.sqlite*"):
        blob += wal.read_bytes()
    assert b"s3cr3t-pw" not in blob
    s = Store(exp.out_dir / "store.sqlite")
    try:
        runs = s.runs_frame()
    finally:
        s.close()
    assert "openai-compat:http://127.0.0.1:9/v1#m" in set(runs.model)


def test_scripted_replies_are_keyed_per_episode_resumed_and_concurrent_runs_match(tmp_path):
    """Every episode reads the script from its first reply, so a resumed or concurrent run
    replays exactly like an uninterrupted one (issue 10.7)."""
    def exp(out: str, **over):
        return experiment(tmp_path, out=str(tmp_path / out), cache=None, **over)

    whole = exp("a", seeds=[0, 1, 2, 3], concurrency=1)
    run_sync(whole, progress=None)
    run_sync(exp("b", seeds=[0, 1], concurrency=4), progress=None)
    rest = exp("b", seeds=[0, 1, 2, 3], concurrency=4)
    res = run_sync(rest, progress=None)
    assert res.skipped == 2 * 3  # 2 seeds x (2 histories + expert) already done
    assert trajectories(whole.out_dir / "store.sqlite") == trajectories(
        rest.out_dir / "store.sqlite"
    )


def test_rollouts_of_split_seeds_stay_in_the_split():
    """With seeds: test and 3 rollouts, every Textcraft episode plays a test goal (before:
    222/300 played train goals, two of them the few-shot traces' own) (issue 9.13); with
    room in the split, each rollout plays a test goal no other episode plays (issue 33)."""
    from statelab.envs import env_class
    from statelab.run.seeding import seeding_for, single

    test = env_class("textcraft").splits["test"]
    some = seeding_for("textcraft", tuple(test[:20]), 3)
    envs = [x.env_seed for x in some.episodes.values()]
    assert all(s in test for s in envs) and len(set(envs)) == 60 and not some.notes
    assert [some.of(s, 0).env_seed for s in test[:20]] == list(test[:20])
    every = seeding_for("textcraft", tuple(test), 3)  # no room: rollouts replay their goal
    assert {x.env_seed for x in every.episodes.values()} == set(test) and every.notes
    assert single("hanoi", 7, 2).env_seed == single("hanoi", 7, 2).env_seed  # deterministic
