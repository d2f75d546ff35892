"""``statelab cache``: stats per model, prune by age or model, clear; refusals in one line;
safe while a run holds the cache open and writes to it."""

from __future__ import annotations

import sqlite3

import yaml
from typer.testing import CliRunner

from statelab.cli import app
from statelab.cli._cache import parse_age
from statelab.llm.cache import ResponseCache, cache_stats, prune_cache

runner = CliRunner()


def _cache(path, entries):
    """entries: (key, model, kind, days old)."""
    c = ResponseCache(path)
    for key, model, kind, _ in entries:
        c.put(key, model, kind, '{"q": 1}', {"text": key})
    c.close()
    db = sqlite3.connect(path)
    for key, _, _, days in entries:
        db.execute("UPDATE completions SET created = julianday('now') - ? WHERE key=?",
                   (days, key))  # fmt: skip
    db.commit()
    db.close()
    return path


ENTRIES = [
    ("a1", "hf:smol", "complete", 40),
    ("a2", "hf:smol", "score", 1),
    ("b1", "openai-compat:http://h/v1#m", "complete", 40),
    ("b2", "openai-compat:http://h/v1#m", "complete", 2),
    ("b3", "openai-compat:http://h/v1#m", "complete", 0),
]


def _keys(path):
    db = sqlite3.connect(path)
    try:
        return sorted(k for (k,) in db.execute("SELECT key FROM completions"))
    finally:
        db.close()


def test_stats_count_each_model_and_kind(tmp_path):
    path = _cache(tmp_path / "c.sqlite", ENTRIES)
    rows = {r["model"]: r for r in cache_stats(path)}
    assert rows["hf:smol"]["entries"] == 2 and rows["hf:smol"]["kinds"] == {"complete": 1,
                                                                           "score": 1}  # fmt: skip
    assert rows["openai-compat:http://h/v1#m"]["entries"] == 3
    res = runner.invoke(app, ["cache", "stats", str(path)])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0].startswith(f"{path}: 5 entries, 2 model(s), file ")
    assert "  hf:smol: 2 (complete 1, score 1), " in res.output


def test_prune_by_age_by_model_and_both(tmp_path):
    path = _cache(tmp_path / "c.sqlite", ENTRIES)
    res = runner.invoke(app, ["cache", "prune", str(path), "--older-than", "30d"])
    assert res.exit_code == 0 and "pruned 2 entries, 3 left" in res.output
    assert _keys(path) == ["a2", "b2", "b3"]
    assert prune_cache(path, model="openai-compat:*", older_than_s=parse_age("36h")) == (1, 2)
    assert _keys(path) == ["a2", "b3"]
    res = runner.invoke(app, ["cache", "prune", str(path), "--model", "hf:*", "--vacuum"])
    assert res.exit_code == 0 and "pruned 1 entries, 1 left" in res.output
    assert "compacted" in res.output and _keys(path) == ["b3"]


def test_clear_needs_yes_and_refusals_are_one_line(tmp_path):
    path = _cache(tmp_path / "c.sqlite", ENTRIES)
    no = runner.invoke(app, ["cache", "clear", str(path)])
    assert no.exit_code == 2 and "--yes" in no.output and len(_keys(path)) == 5
    assert runner.invoke(app, ["cache", "clear", str(path), "--yes"]).exit_code == 0
    assert _keys(path) == []
    what = runner.invoke(app, ["cache", "prune", str(path)])
    assert what.exit_code == 2 and "--older-than" in what.output
    bad_age = runner.invoke(app, ["cache", "prune", str(path), "--older-than", "soon"])
    assert bad_age.exit_code == 2 and "unit" in bad_age.output
    other = tmp_path / "store.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE episodes (x)")
    db.close()
    wrong = runner.invoke(app, ["cache", "stats", str(other)])
    assert wrong.exit_code == 2 and "not a response cache" in wrong.output
    assert "no response cache" in runner.invoke(app, ["cache", "stats", str(tmp_path / "x")]).output
    for res in (no, what, bad_age, wrong):
        assert len(res.output.strip().splitlines()) == 1, res.output


def test_a_config_names_its_cache_and_one_with_the_cache_off_is_refused(tmp_path):
    path = _cache(tmp_path / "mine.sqlite", ENTRIES[:1])
    cfg = {"name": "x", "model": "scripted:r.json", "grid": {"env": ["hanoi"]},
           "cache": str(path), "out": str(tmp_path)}  # fmt: skip
    (tmp_path / "x.yaml").write_text(yaml.safe_dump(cfg))
    res = runner.invoke(app, ["cache", "stats", str(tmp_path / "x.yaml")])
    assert res.exit_code == 0 and res.output.startswith(f"{path}: 1 entries")
    (tmp_path / "off.yaml").write_text(yaml.safe_dump({**cfg, "cache": None}))
    off = runner.invoke(app, ["cache", "stats", str(tmp_path / "off.yaml")])
    assert off.exit_code == 2 and "cache is off" in off.output


def test_pruning_while_a_run_holds_the_cache_loses_nothing_written_after(tmp_path):
    path = _cache(tmp_path / "c.sqlite", ENTRIES)
    live = ResponseCache(path)  # a run's cache, open and writing
    try:
        assert live.get("a1") == {"text": "a1"}
        live.put("new", "hf:smol", "complete", "{}", {"text": "new"})
        live.flush()
        assert prune_cache(path, older_than_s=parse_age("30d")) == (2, 4)
        assert live.get("a1") is None  # deleted: the run would ask the model again
        live.put("newer", "hf:smol", "complete", "{}", {"text": "newer"})
        live.flush()
        assert live.get("new") == {"text": "new"} and live.get("newer") == {"text": "newer"}
        from statelab.llm.cache import vacuum_cache

        vacuum_cache(path)  # between the run's batches: compacted, the run goes on
        live.put("last", "hf:smol", "complete", "{}", {"text": "last"})
        live.flush()
        assert live.get("b3") == {"text": "b3"}
    finally:
        live.close()
    assert _keys(path) == ["a2", "b2", "b3", "last", "new", "newer"]
