"""A run's identity is its components' canonical arguments, never their spelling (issue 32
item 2): ``hanoi:4``, ``hanoi:disks=4``, ``hanoi:4+feedback=on`` and the mapping ``{name:
hanoi, disks: 4}`` are one run, with one key, one label and one cache; a grid that lists two
of them lists one value twice; a store written before, under the spelling's own key, is moved
to the canonical key and resumes instead of playing again."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from statelab.core import ConfigError
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.spec import RunSpec
from statelab.run.store import Store

SPELLINGS = ("hanoi:4", "hanoi:disks=4", "hanoi:4+feedback=on")
MOVES = [f"Action: Move the top disk of rod {a} to the top of rod {b}" for a, b in ("AB", "AC")]


def _spec(env: Any, **axes: Any) -> RunSpec:
    return RunSpec.make(model="scripted:r.json", env=env, **axes)


def test_three_spellings_of_one_env_are_one_run_with_one_key_and_label() -> None:
    specs = [_spec(s) for s in (*SPELLINGS, {"name": "hanoi", "disks": 4})]
    assert len({s.key for s in specs}) == 1  # three keys before
    assert {s.env for s in specs} == {"hanoi:4"}
    assert len({s.label for s in specs}) == 1
    # the order of the options and the default's spelling do not matter on any axis
    assert _spec("hanoi", agent="tools:cc+think").key == _spec("hanoi", agent="tools:think+cc").key
    assert _spec("hanoi:disks=3").key == _spec("hanoi").key
    assert _spec("hanoi", history="window:k=5").history == "window:5"


def test_a_canonical_spelling_keeps_the_key_it_always_had() -> None:
    # these keys are what statelab gave before spellings were canonical (stores hold them)
    assert _spec("hanoi:4").key == "b9bb6609e1591f9c"
    assert _spec("hanoi", history="window:5", format="tagged-list").key == "1f970b9c0ff4e85a"


def test_model_options_in_any_order_are_one_model() -> None:
    a = RunSpec.make(env="hanoi", model="openai-compat:http://h:8000/v1#m?timeout=30&retries=2")
    b = RunSpec.make(env="hanoi", model="openai-compat:http://h:8000/v1#m?retries=2&timeout=30")
    assert a.key == b.key and a.model == b.model


def _config(tmp: Path, **over: Any) -> dict[str, Any]:
    script = tmp / "replies.json"
    script.write_text(json.dumps(MOVES))
    data: dict[str, Any] = {
        "name": "ident",
        "model": f"scripted:{script}",
        "seeds": [0, 1],
        "max_steps": 3,
        "expert": False,
        "random": False,
        "out": str(tmp / "out"),
        "cache": str(tmp / "cache.sqlite"),
        "grid": {"env": ["hanoi:4"]},
    }
    data.update(over)
    return data


def test_two_spellings_of_one_value_in_one_grid_are_one_run_said_in_one_line(
    tmp_path: Path,
) -> None:
    grid = {"env": ["hanoi:4", "hanoi:disks=4", {"name": "hanoi", "disks": 4}]}
    exp = parse_experiment(_config(tmp_path, grid=grid))
    assert [r.env for r in exp.runs()] == ["hanoi:4"]
    notes = [n for n in exp.notes() if n.startswith("grid.env")]
    assert len(notes) == 2 and all("\n" not in n and n.endswith(": one run") for n in notes)
    assert "grid.env: 'hanoi:disks=4' is 'hanoi:4', listed already as 'hanoi:4'" in notes[0]


def test_a_grid_value_may_be_a_mapping_of_name_and_arguments(tmp_path: Path) -> None:
    grid = {"env": [{"name": "hanoi", "disks": 4, "feedback": False}], "history": "window:k=2"}
    exp = parse_experiment(_config(tmp_path, grid=grid))
    (run,) = exp.runs()
    assert run.env == "hanoi:4+feedback=off" and run.history == "window:2"
    with pytest.raises(ConfigError, match="unknown argument 'disc'") as e:
        parse_experiment(_config(tmp_path, grid={"env": [{"name": "hanoi", "disc": 4}]}))
    assert "\n" not in str(e.value)


def test_per_env_settings_and_the_baseline_read_the_canonical_env(tmp_path: Path) -> None:
    exp = parse_experiment(
        _config(
            tmp_path,
            grid={"env": ["hanoi:4", "messenger"]},
            rollouts={"hanoi:disks=4": 2},
            max_steps={"hanoi:4+feedback=on": 5},
            baseline={"env": "hanoi:disks=4"},
        )
    )
    assert exp.n_rollouts("hanoi:4") == 2 and exp.budget("hanoi:4") == 5
    assert exp.baseline == {"env": "hanoi:4"}


def _age(path: Path, new: str, old: RunSpec) -> None:
    """Make the store what statelab wrote before spellings were canonical: the run under the
    key of its spelling as written, with that spelling in its spec, label and env column."""
    db = sqlite3.connect(path)
    for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
        if "run" in [r[1] for r in db.execute(f"PRAGMA table_info({t})")]:
            db.execute(f"UPDATE {t} SET run=? WHERE run=?", (old.key, new))
    spec = json.loads(db.execute("SELECT spec FROM runs WHERE run=?", (old.key,)).fetchone()[0])
    spec["env"] = old.env
    db.execute(
        "UPDATE runs SET spec=?, label=?, env=? WHERE run=?",
        (json.dumps(spec, sort_keys=True), old.label, old.env, old.key),
    )
    db.commit()
    db.close()


def _written_before(spelling: str, model: str) -> RunSpec:
    """The spec old statelab made of ``spelling``: its values as written."""
    canonical = RunSpec.make(env=spelling, model=model, format="tagged-list")
    values = tuple((a, spelling if a == "env" else v) for a, v in canonical.values)
    return RunSpec(values, canonical.params, canonical.max_steps)


def test_a_store_written_before_moves_to_the_canonical_key_and_resumes(tmp_path: Path) -> None:
    data = _config(tmp_path, grid={"env": ["hanoi:disks=4"], "format": ["tagged-list"]})
    exp = parse_experiment(data)
    first = run_sync(exp, progress=None)
    assert first.done == 2
    path = exp.out_dir / "store.sqlite"
    (new,) = [s.key for s in exp.runs()]
    old = _written_before("hanoi:disks=4", exp.model)
    old = RunSpec(old.values, exp.runs()[0].params, exp.runs()[0].max_steps)
    assert old.key != new
    _age(path, new, old)
    again = run_sync(parse_experiment(data), progress=None)
    assert again.skipped == again.total == 2 and again.model_calls == 0  # nothing played again
    store = Store(path, readonly=True)
    try:
        runs = store.table("runs")
        assert list(runs.run) == [new] and list(runs.env) == ["hanoi:4"]
        assert "hanoi:4" in runs.label.iloc[0] and "disks" not in runs.spec.iloc[0]
        assert set(store.table("episodes").run) == {new}
        assert set(store.table("steps").run) == {new}
    finally:
        store.close()


def test_two_old_runs_that_are_one_run_now_merge(tmp_path: Path) -> None:
    data = _config(tmp_path, grid={"env": ["hanoi:4"], "format": ["tagged-list"]})
    exp = parse_experiment(data)
    run_sync(exp, progress=None)
    path = exp.out_dir / "store.sqlite"
    spec = exp.runs()[0]
    a = RunSpec(_written_before("hanoi:disks=4", exp.model).values, spec.params, spec.max_steps)
    _age(path, spec.key, a)
    # a second old run of the same run: a copy of the first under another spelling's key
    b = RunSpec(
        _written_before("hanoi:4+feedback=on", exp.model).values, spec.params, spec.max_steps
    )
    db = sqlite3.connect(path)
    for t in ("runs", "episodes", "steps", "calls", "queries"):
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
        picked = ", ".join("?" if c == "run" else f'"{c}"' for c in cols)
        db.execute(f"INSERT INTO {t} SELECT {picked} FROM {t} WHERE run=?", (b.key, a.key))
    stored = json.loads(db.execute("SELECT spec FROM runs WHERE run=?", (b.key,)).fetchone()[0])
    stored["env"] = b.env
    db.execute(
        "UPDATE runs SET spec=?, label=?, env=? WHERE run=?",
        (json.dumps(stored, sort_keys=True), b.label, b.env, b.key),
    )
    db.commit()
    steps = db.execute("SELECT count(*) FROM steps WHERE run=?", (a.key,)).fetchone()[0]
    db.close()
    store = Store(path, readonly=False)
    try:
        moved = store.rekey_runs(RunSpec.from_stored)
        assert moved == {a.key: spec.key, b.key: spec.key}
        assert list(store.table("runs").run) == [spec.key]
        episodes = store.table("episodes")
        assert sorted(episodes.seed) == [0, 1] and set(episodes.run) == {spec.key}
        assert len(store.table("steps")) == steps  # each episode once
        assert store.rekey_runs(RunSpec.from_stored) == {}  # a second pass: nothing to do
    finally:
        store.close()


def test_a_stored_run_without_a_model_reads_back_with_its_own_key() -> None:
    from statelab.run.components import spec_dict

    expert = RunSpec.make(env="hanoi:disks=4", model="-", agent="expert")
    stored = json.dumps(spec_dict(expert))  # "-" on every model axis
    assert RunSpec.from_stored(stored).key == expert.key
    assert RunSpec.from_stored(stored, as_written=True).key == expert.key
