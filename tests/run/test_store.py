"""The store's layouts and guards (issue 23): each distinct text once, old stores still read,
a damaged or newer store refused for writing, readers that never write, and the registered
tables of other modules (issue 19: analysis reads through the store)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from statelab.analysis.reporting import make_report
from statelab.core import ConfigError
from statelab.run._reading import register_table
from statelab.run._texts import DamagedText, TextReader, TextWriter, shared_prefix
from statelab.run.axes import NAMES
from statelab.run.config import parse_experiment
from statelab.run.export import export_store
from statelab.run.records import EpisodeRecord, StepRecord
from statelab.run.replay import replay
from statelab.run.runner import run_sync
from statelab.run.store import Store
from statelab.viewer import write_viewer


def _viewer_data(store: Path, out: Path) -> dict[str, str]:
    """The viewer's data scripts for ``store`` (the page itself holds a fresh nonce)."""
    page = write_viewer(store, out).page
    files = sorted(page.parent.rglob("*.js"))
    return {str(p.relative_to(page.parent)): p.read_text() for p in files}


# the store's DDL as statelab wrote it before schema 2 (copied from that release, verbatim)
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS experiment (
    name TEXT PRIMARY KEY, config TEXT NOT NULL, updated REAL DEFAULT (julianday('now'))
);
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY, label TEXT NOT NULL, spec TEXT NOT NULL,
    components TEXT, tags TEXT
);
CREATE TABLE IF NOT EXISTS episodes (
    run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL DEFAULT 0,
    env_seed INTEGER, grp INTEGER NOT NULL, status TEXT NOT NULL, error TEXT,
    score REAL, success INTEGER, steps INTEGER, reward REAL,
    agent_calls INTEGER, agent_in INTEGER, agent_out INTEGER, aux_in INTEGER, aux_out INTEGER,
    cached_calls INTEGER, model_calls INTEGER, wall_s REAL, components TEXT,
    finished REAL DEFAULT (julianday('now')),
    PRIMARY KEY (run, seed, rollout)
);
CREATE TABLE IF NOT EXISTS steps (
    run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL DEFAULT 0,
    t INTEGER NOT NULL,
    view TEXT, grounding TEXT, reply TEXT, action TEXT, parsed INTEGER, valid INTEGER, reward REAL,
    observation TEXT, memory TEXT, agent_calls INTEGER, agent_in INTEGER, agent_out INTEGER,
    aux_in INTEGER, aux_out INTEGER, latency REAL, overhead REAL, gold TEXT, meta TEXT,
    PRIMARY KEY (run, seed, rollout, t)
);
CREATE TABLE IF NOT EXISTS calls (
    run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL DEFAULT 0,
    t INTEGER NOT NULL, i INTEGER NOT NULL,
    kind TEXT, messages TEXT, text TEXT, input_tokens INTEGER, output_tokens INTEGER,
    latency REAL, cached INTEGER,
    PRIMARY KEY (run, seed, rollout, t, i)
);
CREATE TABLE IF NOT EXISTS queries (
    run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL DEFAULT 0,
    t INTEGER NOT NULL, i INTEGER NOT NULL,
    query TEXT, answer TEXT,
    PRIMARY KEY (run, seed, rollout, t, i)
);
"""

MOVES = [
    "Action: Move the top disk of rod A to the top of rod C",
    "Action: Move the top disk of rod A to the top of rod B",
    "Action: Move the top disk of rod C to the top of rod B",
]


def legacy_store(path: Path) -> Path:
    """An empty store of the inline layout, made as the earlier statelab made it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(OLD_SCHEMA)
    db.close()
    return path


def _step(t: int, history: list[str]) -> StepRecord:
    """A step whose view, memory and prompt hold the whole history so far (a full history)."""
    past = "\n".join(history[:t])
    view = f"Past trajectory:\n{past}\nYou see rod A with {t} disks."
    msgs = [
        {"role": "system", "content": "You play Tower of Hanoi. " * 20},
        {"role": "user", "content": view},
    ]
    call = {"kind": "act", "messages": msgs, "text": MOVES[t % 3], "input_tokens": 9,
            "output_tokens": 3, "latency": 0.01 * t, "cached": bool(t % 2)}  # fmt: skip
    return StepRecord(
        t=t, view=view, grounding="", reply=MOVES[t % 3], action=MOVES[t % 3], parsed=True,
        valid=t % 4 != 0, reward=0.5 * t, observation=f"obs {t} \u00e9\ud800", memory=past,
        agent_in=9, agent_out=3, aux_in=0, aux_out=0, latency=0.1, overhead=0.01,
        gold=json.dumps({"t": t}) if t % 2 else None, calls=[call],
        queries=[{"query": "where?", "answer": f"here {t}"}], meta={"k": [t]}, agent_calls=1,
    )  # fmt: skip


def episode(seed: int, steps: int, width: int = 120) -> EpisodeRecord:
    history = [f"step {k}: moved a disk, seed {seed} " + "x" * width for k in range(steps)]
    return EpisodeRecord(
        run="r1", seed=seed, status="done", score=0.25 * seed, success=seed % 2 == 0,
        steps=steps, trajectory=[_step(t, history) for t in range(1, steps + 1)],
        components={"agent": {"spelling": "act"}},
    )  # fmt: skip


def _write(path: Path, eps: list[EpisodeRecord]) -> Store:
    st = Store(path, axes=("env", "history"))
    st.save_experiment("e", {"name": "e"})
    st.save_run("r1", "act", {"env": "hanoi", "history": "full"}, {"env": "hanoi"}, {})
    for ep in eps:
        st.commit_episode(ep)
    return st


def _frames(st: Store) -> dict[str, pd.DataFrame]:
    out = {t: st.table(t) for t in ("runs", "episodes", "steps", "calls", "queries")}
    return {**out, "episodes_frame": st.episodes_frame(), "runs_frame": st.runs_frame()}


# -- the layouts ---------------------------------------------------------------------------
def test_both_layouts_read_back_the_same_frames_and_rows(tmp_path: Path) -> None:
    eps = [episode(s, 6) for s in range(3)]
    new = _write(tmp_path / "new.sqlite", eps)
    old = _write(legacy_store(tmp_path / "old.sqlite"), eps)
    try:
        assert (new.version, old.version) == (2, 1)
        with sqlite3.connect(tmp_path / "old.sqlite") as db:  # inline cells, as before
            views = [r[0] for r in db.execute("SELECT view FROM steps ORDER BY rowid")]
        assert views == [s.view for ep in eps for s in ep.trajectory]
        a, b = _frames(new), _frames(old)
        for name in a:
            cols = [c for c in a[name].columns if c != "finished"]
            pd.testing.assert_frame_equal(a[name][cols], b[name][cols], obj=name)
        calls = a["calls"]
        first = eps[0].trajectory[2].calls[0]["messages"]
        assert json.loads(calls.messages[2]) == [
            {**m, "content": m["content"]} for m in first
        ]  # one message list, as JSON, exactly what the inline layout keeps
        key = {"run": "r1", "seed": 1, "rollout": 0}
        for cols in (None, ["t", "memory"], ["t", "i", "messages"]):
            table = "calls" if cols and "messages" in cols else "steps"
            assert new.rows(table, cols, key) == old.rows(table, cols, key)
    finally:
        new.close()
        old.close()


def test_both_layouts_export_the_same_files(tmp_path: Path) -> None:
    eps = [episode(s, 5) for s in range(2)]
    _write(tmp_path / "new.sqlite", eps).close()
    _write(legacy_store(tmp_path / "old.sqlite"), eps).close()
    tables = ["episodes", "steps", "calls", "queries"]
    for store, out in (("new", "a"), ("old", "b")):
        export_store(tmp_path / f"{store}.sqlite", tmp_path / out, "csv", tables)
    for t in ("steps", "calls", "queries"):
        a, b = (tmp_path / d / f"{t}.csv" for d in "ab")
        assert a.read_bytes() == b.read_bytes(), t
    x, y = (pd.read_csv(tmp_path / d / "episodes.csv") for d in "ab")
    pd.testing.assert_frame_equal(x.drop(columns="finished"), y.drop(columns="finished"))


def _size(path: Path, steps: int, n: int = 4) -> int:
    st = _write(path, [episode(s, steps, width=300) for s in range(n)])
    try:
        return st.size_bytes()
    finally:
        st.close()


def test_bytes_grow_with_the_steps_not_their_square(tmp_path: Path) -> None:
    # 10 -> 40 steps with a full history: the inline layout grows ~16x, the text table ~4x
    old = [_size(legacy_store(tmp_path / f"o{n}.sqlite"), n) for n in (10, 40)]
    new = [_size(tmp_path / f"n{n}.sqlite", n) for n in (10, 40)]
    assert old[1] / old[0] > 8
    assert new[1] / new[0] < 5.5
    assert new[1] * 8 < old[1]


def test_a_text_extending_an_earlier_one_stores_only_its_rest(tmp_path: Path) -> None:
    db = sqlite3.connect(":memory:")
    from statelab.run._schema import TEXTS

    db.executescript(TEXTS)
    w = TextWriter(db)
    base = "A" * 5000
    h1, h2 = w.put(base, "v"), w.put(base + "tail", "v")
    assert w.put(base, "other") == h1  # stored once, whatever the slot
    rows = dict(db.execute("SELECT h, length(body) FROM texts").fetchall())
    assert len(rows) == 2 and rows[h2] == 4  # the second keeps only its 4 new characters
    assert rows[h1] < 100  # 5,000 characters compress
    r = TextReader(db)
    assert (r.get(h1), r.get(h2), TextReader(db).get(h2)) == (base, base + "tail", base + "tail")
    assert shared_prefix("abcdef" * 3000 + "x", "abcdef" * 3000 + "y") == 18000
    assert shared_prefix("", "a") == 0 and shared_prefix("ab", "ab") == 2


def test_a_chain_of_texts_is_bounded_and_reads_back(tmp_path: Path) -> None:
    from statelab.run._schema import TEXTS
    from statelab.run._texts import MAX_DEPTH

    db = sqlite3.connect(":memory:")
    db.executescript(TEXTS)
    w = TextWriter(db)
    texts = ["B" * 100 + "".join(f"|{k}" for k in range(n)) for n in range(3 * MAX_DEPTH)]
    hashes = [w.put(t, "v") for t in texts]
    depth = max(d for (d,) in db.execute("SELECT depth FROM texts"))
    assert depth == MAX_DEPTH
    fresh = TextReader(db)
    assert [fresh.get(h) for h in reversed(hashes)] == list(reversed(texts))


def _run(tmp: Path, out: str, seeds: int = 2, **over: Any) -> Any:
    script = tmp / "replies.json"
    script.write_text(json.dumps(MOVES))
    return parse_experiment(
        {"name": "s", "model": f"scripted:{script}", "seeds": list(range(seeds)),
         "grid": {"env": ["hanoi"], "history": ["full", "summary"]},
         "out": str(tmp / out), "cache": None, "max_steps": 5, "random": False, **over}
    )  # fmt: skip


def test_a_run_written_in_both_layouts_replays_the_same(tmp_path: Path, monkeypatch) -> None:
    exp = _run(tmp_path, "new", concurrency=1)  # one commit order in both stores
    old_path = legacy_store(tmp_path / "old" / "s" / "store.sqlite")
    twin = Store(old_path, axes=NAMES)

    def mirrored(name: str) -> Any:  # the same records into the old layout
        real = getattr(Store, name)

        def both(self: Store, *a: Any, **k: Any) -> None:
            real(self, *a, **k)
            if self is not twin:
                real(twin, *a, **k)

        return both

    for name in ("save_experiment", "save_run", "commit_episode"):
        monkeypatch.setattr(Store, name, mirrored(name))
    # the records hold their texts (not the keys of one store's texts), for both stores
    monkeypatch.setattr(Store, "text_sink", lambda self, *a: None)
    res = run_sync(exp, progress=None)
    twin.close()
    monkeypatch.undo()
    assert res.done == 6
    new = Store(exp.out_dir / "store.sqlite")
    old = Store(old_path)
    try:
        assert new.version == 2 and old.version == 1
        for t in ("steps", "calls", "queries"):
            pd.testing.assert_frame_equal(new.table(t), old.table(t), obj=t)
        runs_ = new.table("runs")
        for run in runs_.run:
            for seed in (0, 1):
                a = [(s.t, s.action, s.memory, s.observation.text) for s in replay(new, run, seed)]
                b = [(s.t, s.action, s.memory, s.observation.text) for s in replay(old, run, seed)]
                assert a == b and len(a) > 0
    finally:
        new.close()
        old.close()
    # the viewer and the report read the same from both
    new_data = _viewer_data(exp.out_dir / "store.sqlite", tmp_path / "view-new")
    assert new_data and new_data == _viewer_data(old_path, tmp_path / "view-old")
    paths = [new.path, old_path]
    mds = [make_report(p, tmp_path / f"rep{k}").markdown for k, p in enumerate(paths)]
    assert mds[0] == mds[1] and "full" in mds[0]


# -- old stores ----------------------------------------------------------------------------
def test_an_old_store_opens_reads_and_resumes_in_its_own_layout(tmp_path: Path) -> None:
    path = legacy_store(tmp_path / "s.sqlite")
    db = sqlite3.connect(path)
    db.execute("INSERT INTO runs(run, label, spec) VALUES ('r1', 'act', '{}')")
    db.execute("INSERT INTO episodes(run, seed, grp, status) VALUES ('r1', 0, 0, 'done')")
    db.execute(
        "INSERT INTO steps(run, seed, t, view, memory) VALUES ('r1', 0, 1, 'the view', 'mem')"
    )
    db.execute(
        "INSERT INTO calls(run, seed, t, i, kind, messages, text)"
        " VALUES ('r1', 0, 1, 0, 'act', '[{\"role\": \"user\", \"content\": \"hi\"}]', 'ok')"
    )
    db.commit()
    db.close()
    st = Store(path)
    try:
        assert list(st.table("steps", ["view", "memory"]).iloc[0]) == ["the view", "mem"]
        assert json.loads(st.table("calls").messages[0]) == [{"role": "user", "content": "hi"}]
        st.commit_episode(episode(1, 3))
        assert st.version == 1 and len(st.table("steps")) == 4
    finally:
        st.close()
    with sqlite3.connect(path) as db:
        assert "texts" not in {r[0] for r in db.execute("SELECT name FROM sqlite_master")}


# -- guards --------------------------------------------------------------------------------
def test_a_store_of_a_newer_schema_is_refused_for_writing(tmp_path: Path) -> None:
    exp = _run(tmp_path, "out")
    assert run_sync(exp, progress=None).done == 6
    path = exp.out_dir / "store.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version=7")
    with pytest.raises(ConfigError, match=r"newer statelab \(store schema 7"):
        run_sync(exp, progress=None)
    with pytest.raises(ConfigError, match="newer statelab"):
        Store(path).commit_episode(episode(0, 2))


def _corrupt(path: Path) -> None:
    """Overwrite two leaf pages of ``steps`` (a disk error): the episodes still read, so a
    store taken on trust would resume as all done."""
    db = sqlite3.connect(path)
    pages = [
        p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name='steps' AND pagetype='leaf'")
    ]
    size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with path.open("r+b") as f:
        for p in pages[:2]:
            f.seek((p - 1) * size + 8)  # the page header stays, its cells do not
            f.write(b"\xff" * (size - 8))


def test_a_damaged_store_is_refused_with_one_line(tmp_path: Path) -> None:
    exp = _run(tmp_path, "out", seeds=6)
    assert run_sync(exp, progress=None).done == 18
    path = exp.out_dir / "store.sqlite"
    _corrupt(path)
    with pytest.raises(ConfigError) as e:
        run_sync(exp, progress=None)
    assert "the store is damaged (SQLite integrity check: On tree page" in str(e.value)
    assert "\n" not in str(e.value)
    with sqlite3.connect(path) as db:  # the episodes read: without the check, all "done"
        assert db.execute("SELECT count(*) FROM episodes WHERE status='done'").fetchone() == (18,)


@pytest.mark.parametrize("body", ["A" * 5000, "plain text of a view, too short to compress"])
def test_a_text_whose_bytes_changed_is_refused_when_read(body: str) -> None:
    """quick_check cannot see a flipped byte inside a blob: the key (the text's hash) can."""
    from statelab.run._schema import TEXTS

    db = sqlite3.connect(":memory:")
    db.executescript(TEXTS)
    h = TextWriter(db).put(body, "v")
    assert TextReader(db).get(h) == body
    (raw,) = db.execute("SELECT body FROM texts WHERE h=?", (h,)).fetchone()
    flipped = bytearray(raw)
    for i in range(0, min(len(flipped), 8)):  # 8 flipped bytes
        flipped[len(flipped) // 2 - 4 + i] ^= 0x01
    db.execute("UPDATE texts SET body=? WHERE h=?", (bytes(flipped), h))
    with pytest.raises(DamagedText) as e:
        TextReader(db).get(h)
    assert "the store is damaged: text" in str(e.value) and "\n" not in str(e.value)


def test_a_damaged_text_stops_view_and_export_with_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from statelab.cli import app

    exp = _run(tmp_path, "out", seeds=1)
    run_sync(exp, progress=None)
    path = exp.out_dir / "store.sqlite"
    with sqlite3.connect(path) as db:
        h, raw = db.execute("SELECT h, body FROM texts ORDER BY length(body) DESC").fetchone()
        flipped = bytes(b ^ 1 for b in raw[:8]) + raw[8:]
        db.execute("UPDATE texts SET body=? WHERE h=?", (flipped, h))
    for args in (["view", str(exp.out_dir)], ["export", str(exp.out_dir), "--format", "csv"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1, (args, res.output)
        lines = [x for x in res.output.splitlines() if x.startswith("error:")]
        assert len(lines) == 1 and "the store is damaged: text" in lines[0], res.output


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_readers_write_nothing_to_the_store(tmp_path: Path) -> None:
    # an inline store of the release before env_seed, in rollback-journal mode: a reader
    # that ran the DDL would add a column, and one that set WAL would change the header
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA.replace("env_seed INTEGER, ", ""))
    db.execute("INSERT INTO runs(run, label, spec, tags) VALUES ('r1', 'act', '{}', '[]')")
    db.execute("INSERT INTO episodes(run, seed, grp, status) VALUES ('r1', 0, 0, 'done')")
    db.commit()
    db.close()
    before = _digest(path)
    st = Store(path)
    assert len(st.table("episodes")) == 1 and len(st.episodes_frame()) == 1
    st.close()
    export_store(path, tmp_path / "x", "csv")
    Store(path, readonly=True).close()
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite", "x"]
    with pytest.raises(ConfigError, match="read-only"):
        Store(path, readonly=True).commit_episode(episode(0, 1))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_a_read_only_store_reads_and_exports(tmp_path: Path) -> None:
    path = tmp_path / "d" / "s.sqlite"
    _write(path, [episode(0, 3)]).close()
    os.chmod(path, 0o444)
    os.chmod(path.parent, 0o555)
    try:
        st = Store(path)
        assert len(st.table("steps")) == 3
        st.close()
        assert export_store(path, tmp_path / "x", "csv")
    finally:
        os.chmod(path.parent, 0o755)


# -- registered tables ---------------------------------------------------------------------
def test_a_registered_table_is_made_on_its_first_write_and_read_like_the_others(tmp_path):
    register_table("test_notes", "CREATE TABLE IF NOT EXISTS test_notes (run, seed, note TEXT)")
    st = _write(tmp_path / "s.sqlite", [episode(0, 1)])
    try:
        assert st.rows("test_notes") == [] and list(st.table("test_notes").columns) == [
            "run", "seed", "note"
        ]
        a, b = {"run": "r1", "seed": 0, "note": "a"}, {"run": "r1", "seed": 1, "note": None}
        st.append({"test_notes": [a, b]})
        st.append({"test_notes": [{**a, "note": "b"}]}, replace={"run": "r1", "seed": 0})
        assert st.rows("test_notes") == [
            {"run": "r1", "seed": 1, "note": None}, {"run": "r1", "seed": 0, "note": "b"}
        ]
        with pytest.raises(ValueError, match="not a registered table"):
            st.append({"steps": []})
        with pytest.raises(ValueError, match="no column"):
            st.append({"test_notes": [{"nope": 1}]})
    finally:
        st.close()
    with pytest.raises(ValueError):
        register_table("steps", "CREATE TABLE IF NOT EXISTS steps (a)")


def test_no_module_but_the_store_opens_it_with_sql_of_its_own() -> None:
    """Issue 19 item 6: analysis, replay, export, training and provenance read and write
    through the store's methods (the response cache is a file of its own)."""
    import re

    import statelab

    root = Path(statelab.__file__).parent
    own = {
        "run/store.py", "run/_schema.py", "run/_reading.py", "run/_texts.py",
        "run/_store_behaviour.py", "run/_staging.py", "llm/cache.py",
    }  # fmt: skip
    raw = re.compile(r"sqlite3\.connect|\.db\.execute|read_sql|executescript")
    found = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if str(p.relative_to(root)) not in own and raw.search(p.read_text())
    ]
    assert found == []


def test_report_view_export_and_replay_leave_the_file_as_it_was(tmp_path: Path) -> None:
    """A store handed over in rollback-journal mode (a copy, a read-only share): every
    reader reads it without turning it into WAL, making a table or writing a byte."""
    exp = _run(tmp_path, "out")
    assert run_sync(exp, progress=None).done == 6
    path = exp.out_dir / "store.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=DELETE")
    before, files = _digest(path), sorted(p.name for p in path.parent.iterdir())
    md = make_report(path, tmp_path / "report").markdown
    html = write_viewer(path, tmp_path / "view").page.read_text()
    export_store(path, tmp_path / "x", "csv")
    st = Store(path)
    run = st.table("runs").run[0]
    steps = list(replay(st, run, 0))
    st.close()
    assert "full" in md and "<html" in html and len(steps) == 5
    assert _digest(path) == before and sorted(p.name for p in path.parent.iterdir()) == files
