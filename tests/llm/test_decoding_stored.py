"""Each stored call says how its reply was decoded, and the report warns, per run, where runs
decoded their actions differently or a server enforced nothing (issue 25)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from tests.llm._standins import StandIn

from statelab.analysis.caveats import decoding
from statelab.analysis.reporting import make_report
from statelab.llm import _constrain as constrain
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store


@pytest.fixture(autouse=True)
def _fresh():
    constrain.forget()
    yield
    constrain.forget()


def test_calls_store_their_decoding_and_the_report_says_it_per_run(tmp_path):
    held, free = StandIn("json_schema", strict=True), StandIn(None)
    try:
        exp = parse_experiment({
            "name": "dec", "seeds": [0], "max_steps": 3, "out": str(tmp_path / "r"),
            "grid": {"env": ["hanoi"], "history": ["full"],
                     "model": [f"openai-compat:{held.url}#a", f"openai-compat:{free.url}#b"]},
            "cache": None, "expert": False, "random": False, "concurrency": 1,
        })  # fmt: skip
        res = run_sync(exp, progress=None)
    finally:
        held.close()
        free.close()
    assert res.done == 2 and res.failed == 0
    store_path = exp.out_dir / "store.sqlite"
    store = Store(store_path)
    runs = store.runs_frame()
    spec = [json.loads(x).get("model", "") for x in runs["spec"]]
    by_model = dict(zip(runs["run"], spec, strict=True))
    calls = store.table("calls")
    got = {
        (by_model[r].rsplit("#", 1)[1], d)
        for r, d in zip(calls["run"], calls["decoding"], strict=True)
    }
    assert got == {("a", "json_schema"), ("b", "unenforced")}
    assert len(calls) == 6  # three steps, one acting call each, in both runs
    per_run = store.behaviour_frames()[1]
    modes = {
        by_model[r].rsplit("#", 1)[1]: d
        for r, d in zip(per_run["run"], per_run["decoding"], strict=True)
    }
    assert modes == {"a": "json_schema", "b": "unenforced"}

    report = make_report(store_path, tmp_path / "report")
    assert "Runs choose their actions by different decoding" in report.markdown
    assert "the server enforced no constrained form" in report.markdown


def test_an_old_store_without_the_column_opens_and_takes_it(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE calls (run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL"
        " DEFAULT 0, t INTEGER NOT NULL, i INTEGER NOT NULL, kind TEXT, messages_ref TEXT,"
        " text TEXT, input_tokens INTEGER, output_tokens INTEGER, latency REAL, cached INTEGER,"
        " PRIMARY KEY (run, seed, rollout, t, i));"
    )
    db.execute("INSERT INTO calls VALUES ('r',0,0,0,0,'act','','x',1,1,0.1,0)")
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()
    store = Store(path)  # opened for writing: the column is added, the old calls say nothing
    store.save_experiment("old", {})
    calls = store.table("calls")
    assert list(calls["decoding"]) == [None] and list(calls["text"]) == ["x"]


def test_one_decoding_for_every_run_warns_nothing():
    import pandas as pd

    same = pd.DataFrame({"run": ["a", "b"], "decoding": ["grammar", "grammar"],
                         "role": ["run", "run"]})  # fmt: skip
    assert decoding(same) == []
    mixed = same.assign(decoding=["trie", "grammar"])
    (found,) = decoding(mixed)
    assert found.figure == "grammar: b; trie: a"
