"""``statelab run --ray``: the same episodes on a local Ray instance as in a local run (issue
13.3). A small Ray (two CPUs, so two episode workers) is started once for the module."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

ray = pytest.importorskip("ray")
from statelab.run.on_ray import run_on_ray_sync  # noqa: E402

REPLIES = [
    "Action: Move the top disk of rod A to the top of rod C",
    "Action: Move the top disk of rod A to the top of rod B",
    "I would rather not say",
    "Action: Move the top disk of rod C to the top of rod B",
]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def config(tmp: Path, out: str, cache: str | None, **over) -> dict:
    script = tmp / "replies.json"
    script.write_text(json.dumps(REPLIES))
    data = {
        "name": "t",
        "model": f"scripted:{script}",
        "seeds": [0, 1, 2],
        "grid": {"env": ["hanoi"], "history": ["full", "summary"], "format": ["tagged-list"]},
        "baseline": {"history": "full"},
        "out": str(tmp / out),
        "cache": str(tmp / cache) if cache else None,
        "max_steps": 6,
        "concurrency": 2,
        "random": False,
    }
    data.update(over)
    return data


def per_episode(store_path: Path) -> tuple[list[tuple], list[tuple]]:
    """Every episode's result and every step's view, reply, action, observation and reward
    (timings, which differ between any two runs, left out)."""
    ep_cols = ["run", "seed", "rollout", "status", "score", "success", "steps", "reward"]
    ep_cols += ["agent_calls", "agent_in", "agent_out", "aux_in", "aux_out"]
    step_cols = ["run", "seed", "rollout", "t", "view", "reply", "action", "observation"]
    step_cols += ["reward", "memory", "valid"]
    s = Store(store_path)
    try:
        eps = s.table("episodes").sort_values(["run", "seed", "rollout"])
        steps = s.table("steps").sort_values(["run", "seed", "rollout", "t"])
        return (
            list(eps[ep_cols].itertuples(index=False)),
            list(steps[step_cols].itertuples(index=False)),
        )
    finally:
        s.close()


def test_ray_run_plays_the_same_episodes_as_a_local_run(tmp_path):
    local = parse_experiment(config(tmp_path, "local", None))
    on_ray = parse_experiment(config(tmp_path, "ray", None))
    a = run_sync(local, progress=None)
    b = run_on_ray_sync(on_ray, "auto", progress=None)
    assert (a.done, a.failed) == (9, 0)  # 3 seeds x (2 histories + the expert)
    assert (b.done, b.failed, b.skipped) == (9, 0, 0)
    assert b.model_calls == a.model_calls > 0 and b.tokens_in == a.tokens_in
    eps_a, steps_a = per_episode(local.out_dir / "store.sqlite")
    eps_b, steps_b = per_episode(on_ray.out_dir / "store.sqlite")
    assert len(eps_b) == 9 and len(steps_b) == len(steps_a) > 9
    assert eps_b == eps_a
    assert steps_b == steps_a


def test_ray_workers_share_the_response_cache_with_a_local_run(tmp_path):
    """The workers write their answers into the configured cache; a local run with that
    cache then asks the model nothing and stores the very same episodes. (A scripted
    model's reply depends on its place in the script, not on the request, so which episode
    answers a repeated request first decides what the cache holds: the comparison is of two
    runs over one cache.)"""
    on_ray = parse_experiment(config(tmp_path, "ray", "cache.sqlite"))
    b = run_on_ray_sync(on_ray, "auto", progress=None)
    assert (b.done, b.failed) == (9, 0) and b.model_calls > 0
    local = parse_experiment(config(tmp_path, "local", "cache.sqlite"))
    a = run_sync(local, progress=None)
    assert (a.done, a.model_calls, a.cached_calls) == (9, 0, b.model_calls + b.cached_calls)
    assert per_episode(local.out_dir / "store.sqlite") == per_episode(
        on_ray.out_dir / "store.sqlite"
    )


def test_ray_run_resumes_a_local_run_and_skips_what_is_done(tmp_path):
    whole = parse_experiment(config(tmp_path, "whole", None))
    run_sync(whole, progress=None)
    # two seeds locally, then all three on Ray into the same store: only seed 2 is played
    run_sync(parse_experiment(config(tmp_path, "mixed", None, seeds=[0, 1])), progress=None)
    mixed = parse_experiment(config(tmp_path, "mixed", None))
    res = run_on_ray_sync(mixed, "auto", progress=None)
    assert (res.skipped, res.done, res.failed) == (6, 3, 0)
    assert per_episode(mixed.out_dir / "store.sqlite") == per_episode(
        whole.out_dir / "store.sqlite"
    )
    # nothing left: no episode is played twice (nor stored twice)
    res = run_on_ray_sync(mixed, "auto", progress=None)
    assert (res.skipped, res.done) == (9, 0)
    assert len(per_episode(mixed.out_dir / "store.sqlite")[0]) == 9


def test_cli_ray_flag_runs_on_the_cluster_it_finds(tmp_path):
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(yaml.safe_dump(config(tmp_path, "cli", None, seeds=[0])))
    out = CliRunner().invoke(app, ["run", str(cfg), "--ray", "auto", "--quiet"])
    assert out.exit_code == 0, out.output
    assert "t: 3 episodes done, 0 failed, 0 already done" in out.output


def test_without_ray_installed_the_flag_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as when not installed
    exp = parse_experiment(config(tmp_path, "none", None, seeds=[0]))
    with pytest.raises(ConfigError, match=r"--ray needs Ray: pip install 'statelab\[ray\]'"):
        run_on_ray_sync(exp, "auto", progress=None)
