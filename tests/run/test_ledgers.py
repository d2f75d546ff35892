"""The ledgers beside the test-split ledger: an audit of a sealed test split is refused in one
line unless opened for it, refused before the split was opened, recorded when it runs and
refused a second time unless forced; amendments are recorded with how many openings preceded
them, and an id is recorded once."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.run.config import parse_experiment
from statelab.run.ledgers import (
    AMENDMENTS,
    AUDITS,
    LEDGER,
    add_amendment,
    amendments,
    audit_entries,
    record_audit,
)
from statelab.run.store import Store

pytest.importorskip("textworld")
runner = CliRunner()


def _cfg(tmp, seeds="test[:1]"):
    return {
        "name": "sealed",
        "random": False,
        "model": "scripted:none.json",
        "seeds": seeds,
        "grid": {"env": ["cooking"], "history": ["full"], "agent": ["reader"]},
        "out": str(tmp / "results"),
        "cache": None,
        "max_steps": 1,
        "expert": False,
    }


def _opened(tmp):
    """A ledger holding one opening of cooking's test split (as `statelab open-test` writes)."""
    out = tmp / "results"
    out.mkdir(parents=True, exist_ok=True)
    e = {"opened": "2026-01-01T00:00:00+00:00", "experiment": "sealed", "family": "cooking",
         "split": "test", "opening": 1}  # fmt: skip
    (out / LEDGER).write_text(json.dumps(e) + "\n")


def test_an_audit_of_a_sealed_split_is_refused_in_one_line_without_open_test(tmp_path):
    path = tmp_path / "sealed.yaml"
    path.write_text(yaml.safe_dump(_cfg(tmp_path)))
    _opened(tmp_path)
    res = runner.invoke(app, ["audit", str(path)])
    assert res.exit_code == 2
    line = res.output.strip()
    assert "\n" not in line and "--open-test" in line and "'test'" in line
    assert not (tmp_path / "results" / AUDITS).exists()  # refused: nothing recorded


def test_an_audit_needs_the_split_opened_first(tmp_path):
    exp = parse_experiment(_cfg(tmp_path))
    with pytest.raises(ConfigError, match="never opened"):
        record_audit(exp, open_test=True)
    assert audit_entries(tmp_path / "results") == []


def test_an_audit_is_recorded_once_and_a_second_is_refused_unless_forced(tmp_path):
    _opened(tmp_path)
    exp = parse_experiment(_cfg(tmp_path))
    first = record_audit(exp, open_test=True)
    assert [(e["split"], e["audit"], e["forced"]) for e in first] == [("test", 1, False)]
    with pytest.raises(ConfigError, match="audited 1 time"):
        record_audit(exp, open_test=True)
    again = record_audit(exp, open_test=True, force=True)
    assert [(e["audit"], e["forced"]) for e in again] == [(2, True)]
    got = audit_entries(tmp_path / "results")
    assert [(e["audit"], e["forced"]) for e in got] == [(1, False), (2, True)]
    st = Store(exp.out_dir / "store.sqlite", readonly=True)
    try:
        rows = st.rows("test_audits")
    finally:
        st.close()
    assert [(r["audit"], r["forced"]) for r in rows] == [(1, 0), (2, 1)]


def test_an_audit_off_the_sealed_split_needs_nothing_and_records_nothing(tmp_path):
    exp = parse_experiment(_cfg(tmp_path, seeds="validation[:1]"))
    assert record_audit(exp) == []
    assert not (tmp_path / "results" / AUDITS).exists()


def test_amendments_are_recorded_in_order_with_the_openings_before_them(tmp_path):
    out = tmp_path / "results"
    a1 = add_amendment(out, "A1", "recursive score  replaces\nthe fixed-state score",
                       stage="before writer training")  # fmt: skip
    assert a1["text"] == "recursive score replaces the fixed-state score"
    assert a1["openings_before"] == 0
    _opened(tmp_path)
    a5 = add_amendment(out, "A5", "aggregation pools three seeds")
    assert a5["openings_before"] == 1  # made after the test opening: it says so
    assert [a["id"] for a in amendments(out)] == ["A1", "A5"]
    with pytest.raises(ConfigError, match="recorded already"):
        add_amendment(out, "A5", "again")
    with pytest.raises(ConfigError, match="needs an id"):
        add_amendment(out, "A6", "  ")
    assert len((out / AMENDMENTS).read_text().splitlines()) == 2


def test_statelab_amend_records_one(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(_cfg(tmp_path, seeds="validation[:1]")))
    res = runner.invoke(app, ["amend", str(path), "A2", "filler after the reveal"])
    assert res.exit_code == 0, res.output
    assert "amendment A2 recorded" in res.output
    assert [a["id"] for a in amendments(tmp_path / "results")] == ["A2"]
    res = runner.invoke(app, ["amend", str(path), "A2", "again"])
    assert res.exit_code == 2 and "recorded already" in res.output
