"""A store written with the old spelling of the conversation layout (the agent option
``seed004``, stored canonically as ``react:seed004``) keeps its runs: opening it moves each
run to the key of ``react:prompt=conversation/examples=seed004``, and the run resumes
instead of playing again; the old spelling itself reads no more."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from statelab.core import ConfigError
from statelab.run._rekey import renamed
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.spec import RunSpec
from statelab.run.store import Store

NEW = "react:prompt=conversation/examples=seed004"


def _config(tmp: Path, agent: str) -> dict[str, object]:
    script = tmp / "replies.json"
    script.write_text(json.dumps(["Action: Move the top disk of rod A to the top of rod C"]))
    return {
        "name": "renamed", "model": f"scripted:{script}", "seeds": [0, 1], "max_steps": 2,
        "expert": False, "random": False, "out": str(tmp / "out"),
        "cache": str(tmp / "cache.sqlite"), "grid": {"env": ["hanoi:3"], "agent": [agent]},
    }  # fmt: skip


def test_the_rename_rewrites_only_the_old_option() -> None:
    for old, new in (("react:seed004", NEW), ("reflact:/seed004", f"reflact:/{NEW[6:]}"),
                     ("stateact:goal/json/seed004", f"stateact:goal/json/{NEW[6:]}"),
                     ("adapt:react:seed004@2", f"adapt:{NEW}@2")):  # fmt: skip
        assert json.loads(renamed(json.dumps({"agent": old})))["agent"] == new
    same = json.dumps({"agent": "react:/anchor", "env": "seed004x"})
    assert renamed(same) == same


def test_a_store_written_with_seed004_moves_to_the_new_key_and_resumes(tmp_path: Path) -> None:
    data = _config(tmp_path, f"react:/{NEW[6:]}")
    exp = parse_experiment(data)
    assert run_sync(exp, progress=None).done == 2
    (spec,) = exp.runs()
    assert spec.agent == NEW
    old = RunSpec(
        tuple((a, "react:seed004" if a == "agent" else v) for a, v in spec.values),
        spec.params, spec.max_steps,
    )  # fmt: skip
    assert old.key != spec.key
    path = exp.out_dir / "store.sqlite"
    db = sqlite3.connect(path)  # the store as the old option wrote it
    for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
        if "run" in [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')]:
            db.execute(f'UPDATE "{t}" SET run=? WHERE run=?', (old.key, spec.key))
    stored = json.loads(db.execute("SELECT spec FROM runs").fetchone()[0])
    stored["agent"] = "react:seed004"
    db.execute("UPDATE runs SET spec=?, label=?, agent=?",
               (json.dumps(stored, sort_keys=True), old.label, old.agent))  # fmt: skip
    db.commit()
    db.close()
    again = run_sync(parse_experiment(data), progress=None)
    assert again.skipped == again.total == 2 and again.model_calls == 0
    store = Store(path, readonly=True)
    try:
        runs = store.table("runs")
        assert list(runs.run) == [spec.key] and list(runs.agent) == [NEW]
        assert NEW in runs.spec.iloc[0] and set(store.table("episodes").run) == {spec.key}
    finally:
        store.close()
    # the old spelling is refused in one line that names the new one
    with pytest.raises(ConfigError, match="unknown option 'seed004'") as e:
        parse_experiment(_config(tmp_path, "react:/seed004"))
    new = "'react:/prompt=conversation/examples=seed004'"
    assert f"'react:/seed004' was renamed: write {new}" in str(e.value)
    assert "\n" not in str(e.value)
