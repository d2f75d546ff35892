"""A test opening after the selection it is registered for (``after_selection``): the
selection is recorded with its validation store's fingerprint and the gates evaluated on it
(``<out>/selections.jsonl``), and ``statelab open-test`` refuses, in one line, an opening
before it, before a gate was evaluated on it, or after its validation store changed; a
``--force``-d one is recorded with why."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.run.config import parse_experiment
from statelab.run.ledgers import (
    LEDGER,
    SELECTIONS,
    latest_selection,
    ledger_entries,
    record_selection,
    selections,
    store_fingerprint,
)
from statelab.run.provenance import guard
from statelab.run.records import EpisodeRecord
from statelab.run.store import Store

runner = CliRunner()


def _validation_store(path, wins):
    """A store with one run of four episodes, ``wins`` of them won."""
    path.parent.mkdir(parents=True, exist_ok=True)
    st = Store(path, ("env",))
    st.save_run("r", "r", {"env": "cooking"}, {"env": "cooking"}, {})
    for g in range(4):
        st.commit_episode(EpisodeRecord("r", 1000 + g, "done", success=g < wins))
    st.close()
    return path


def test_the_fingerprint_follows_the_episodes_and_nothing_else(tmp_path):
    a = _validation_store(tmp_path / "a" / "store.sqlite", 1)
    b = _validation_store(tmp_path / "b" / "store.sqlite", 1)
    c = _validation_store(tmp_path / "c" / "store.sqlite", 2)
    fa = store_fingerprint(a)
    assert fa == store_fingerprint(b) and fa.endswith("/4") and fa.startswith("sha256:")
    assert store_fingerprint(c) != fa  # one outcome differs
    st = Store(a)
    st.append({"test_openings": [{"opened": "t", "experiment": "x", "config_hash": "h",
                                  "env": "cooking", "split": "test", "seeds": "[]",
                                  "opening": 1, "forced": 0, "writers": "[]"}]})  # fmt: skip
    st.close()
    assert store_fingerprint(a) == fa  # another table's rows: the same outcomes
    st = Store(a)
    st.commit_episode(EpisodeRecord("r", 1004, "done", success=False))
    st.close()
    assert store_fingerprint(a) != fa and store_fingerprint(a).endswith("/5")


def test_a_selection_is_recorded_once_and_not_changed_after_the_opening(tmp_path):
    out = tmp_path / "results"
    val = _validation_store(tmp_path / "val" / "store.sqlite", 1)
    g1 = [{"id": "G1a", "verdict": "fail"}]
    e, wrote = record_selection(out, "plan", "A4 round 2", store=val, evaluated=g1, by="cmd")
    assert wrote and e["source"]["fingerprint"] == store_fingerprint(val)
    _, again = record_selection(out, "plan", "A4 round 2", store=val, evaluated=g1, by="cmd")
    assert not again and len(selections(out)) == 1
    # before any opening a new selection replaces it (the last one counts)
    record_selection(out, "plan", "K=1 round 1", store=val, evaluated=g1)
    assert latest_selection(out, "plan")["selected"] == "K=1 round 1"
    (out / LEDGER).write_text(json.dumps({"opened": "t", "experiment": "x", "family": "cooking",
                                          "split": "test", "opening": 1}) + "\n")  # fmt: skip
    with pytest.raises(ConfigError, match="before the test opening"):
        record_selection(out, "plan", "A4 round 2", store=val, evaluated=g1)
    assert latest_selection(out, "plan")["selected"] == "K=1 round 1"


def _config(tmp_path, script, **kw):
    cfg = {"name": "sealed", "random": False, "model": f"scripted:{script}",
           "seeds": "test[:1]", "grid": {"env": ["cooking"], "history": ["full"],
                                         "agent": ["reader"]},
           "out": str(tmp_path / "results"), "cache": None, "max_steps": 1, "expert": False,
           **kw}  # fmt: skip
    path = tmp_path / "sealed.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, cfg


def test_after_selection_on_a_split_that_is_not_sealed_is_refused(tmp_path):
    _, cfg = _config(tmp_path, tmp_path / "s.json", after_selection="plan")
    with pytest.raises(ConfigError, match="touch no sealed test split"):
        guard(parse_experiment({**cfg, "seeds": "validation[:1]"}))


def test_open_test_waits_for_the_evaluated_selection_on_an_unchanged_store(tmp_path):
    pytest.importorskip("textworld")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["look"]))
    path, _ = _config(tmp_path, script, after_selection="plan")
    out = tmp_path / "results"
    val = _validation_store(tmp_path / "val" / "store.sqlite", 1)

    def opens(*extra):
        return runner.invoke(app, ["open-test", str(path), "--quiet", *extra])

    refused = opens()
    assert refused.exit_code == 2 and "not recorded" in refused.output
    assert "\n" not in refused.output.strip() and "'plan'" in refused.output
    record_selection(out, "plan", "K=1 round 1", store=val, evaluated=[])
    assert "no gate evaluated" in opens().output
    record_selection(out, "plan", "K=1 round 1", store=val,
                     evaluated=[{"id": "G1a", "verdict": "pass"}])  # fmt: skip
    _validation_store(val, 2)  # the validation episodes were rerun since: another outcome
    stale = opens()
    assert stale.exit_code == 2 and "changed since" in stale.output
    assert not ledger_entries(out)  # nothing was opened by the refusals
    record_selection(out, "plan", "K=1 round 1", store=val,
                     evaluated=[{"id": "G1a", "verdict": "pass"}])  # fmt: skip
    ok = opens()
    assert ok.exit_code == 0, ok.output
    assert "after the selection 'plan': K=1 round 1" in ok.output
    (entry,) = [json.loads(x) for x in (out / LEDGER).read_text().splitlines()]
    assert entry["selection"]["selected"] == "K=1 round 1" and not entry["forced"]
    assert entry["selection"]["fingerprint"] == store_fingerprint(val)
    assert (out / SELECTIONS).is_file()


def test_a_forced_opening_before_the_selection_is_recorded_as_such(tmp_path):
    pytest.importorskip("textworld")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["look"]))
    path, _ = _config(tmp_path, script, after_selection="plan")
    res = runner.invoke(app, ["open-test", str(path), "--quiet", "--force"])
    assert res.exit_code == 0, res.output
    assert "(forced: " in res.output and "not recorded" in res.output
    (entry,) = [json.loads(x) for x in (tmp_path / "results" / LEDGER).read_text().splitlines()]
    assert entry["forced"] and entry["selection"] is None
    assert "not recorded" in entry["selection_forced"]
