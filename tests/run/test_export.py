"""``statelab export``: the episodes, steps and calls tables as CSV and Parquet files that
read back to the store's rows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.run.config import parse_experiment
from statelab.run.export import export_store
from statelab.run.runner import run_sync
from statelab.run.store import Store

# a reply with a comma, a quote, a newline and non-ASCII: CSV must quote it
REPLIES = [
    'I think, "carefully"\nAction: Move the top disk of rod A to the top of rod C — ok',
    "Action: Move the top disk of rod A to the top of rod B",
]
runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("export")
    script = tmp / "replies.json"
    script.write_text(json.dumps(REPLIES))
    exp = parse_experiment(
        {
            "name": "x",
            "random": False,
            "model": f"scripted:{script}",
            "seeds": [0, 1],
            "grid": {"env": ["hanoi"], "history": ["full", "summary"]},
            "out": str(tmp / "results"),
            "cache": None,
            "max_steps": 4,
        }
    )
    assert run_sync(exp, progress=None).done == 6  # 2 histories x 2 seeds + 2 expert
    return exp.out_dir / "store.sqlite"


def _stored(store: Path, table: str) -> pd.DataFrame:
    s = Store(store)
    try:
        return s.table(table)
    finally:
        s.close()


@pytest.mark.parametrize("table", ["steps", "calls"])
def test_csv_reads_back_to_the_stored_rows(store: Path, tmp_path: Path, table: str) -> None:
    files = export_store(store, tmp_path, "csv", [table])
    assert files == [tmp_path / f"{table}.csv"]
    back = pd.read_csv(files[0], keep_default_na=False, na_values=[""])
    want = _stored(store, table)
    # each row carries its run's label and axes after ``run`` (issue 25: no join needed)
    extra = [c for c in back.columns if c not in want.columns]
    assert extra[:2] == ["label", "env"] and {"history", "model", "agent"} <= set(extra)
    assert [c for c in back.columns if c not in extra] == list(want.columns)
    assert list(back.columns).index("label") == 1 and len(back) == len(want) > 0
    assert back["reply" if table == "steps" else "text"].tolist() == (
        want["reply" if table == "steps" else "text"].tolist()
    )


def test_episodes_carry_their_runs_label_axes_and_tags(store: Path, tmp_path: Path) -> None:
    (csv,) = export_store(store, tmp_path, "csv", ["episodes"])
    df = pd.read_csv(csv)
    assert len(df) == 6 and {"label", "history", "env", "tags", "score", "seed"} <= set(df.columns)
    assert sorted(df["history"].unique()) == ["-", "full", "summary"]  # the expert: "-"
    assert all(isinstance(json.loads(t), list) for t in df["tags"])


def test_parquet_keeps_the_declared_types(store: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow", reason="parquet export needs the export extra (pyarrow)")
    files = export_store(store, tmp_path, "parquet")
    assert [f.name for f in files] == ["episodes.parquet", "steps.parquet", "calls.parquet"]
    eps, steps = pd.read_parquet(files[0]), pd.read_parquet(files[1])
    assert str(eps["seed"].dtype) == "int64" and str(eps["score"].dtype) == "float64"
    assert all(isinstance(list(t), list) for t in eps["tags"])
    want = _stored(store, "steps")
    assert steps["reply"].tolist() == want["reply"].tolist()
    assert steps["reward"].tolist() == want["reward"].tolist()


def test_chunks_with_nulls_keep_one_schema(store: Path, tmp_path: Path, monkeypatch) -> None:
    """A column NULL in one chunk and set in another (gold, error) exports as one type."""
    pytest.importorskip("pyarrow", reason="parquet export needs the export extra (pyarrow)")
    import statelab.run.export as export

    monkeypatch.setattr(export, "CHUNK", 1)
    (f,) = export_store(store, tmp_path, "parquet", ["episodes"])
    assert len(pd.read_parquet(f)) == 6


def test_cli_exports_and_refuses_bad_options_in_one_line(store: Path, tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["export", str(store.parent), "--format", "csv", "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calls.csv", "episodes.csv", "steps.csv"]
    bad = runner.invoke(app, ["export", str(store.parent), "--format", "xlsx"])
    assert bad.exit_code == 2 and "--format: one of parquet, csv, jsonl" in bad.stderr
    bad = runner.invoke(app, ["export", str(store.parent), "--format", "csv", "--table", "x"])
    assert bad.exit_code == 2 and "no table 'x'" in bad.stderr


def test_a_killed_export_leaves_no_truncated_file(store: Path, tmp_path: Path, monkeypatch) -> None:
    """Issue 23 item 8: the file appears under its name only once whole; a write that dies
    midway leaves the earlier complete file (or none), never a partial one."""
    import statelab.run.export as export

    monkeypatch.setattr(export, "CHUNK", 2)
    (whole,) = export_store(store, tmp_path, "csv", ["steps"])
    complete = whole.read_bytes()
    real = Store.chunks

    def dying(self: Store, name: str, size: int = 5000):  # the process dies mid-file
        for k, df in enumerate(real(self, name, size)):
            assert not (tmp_path / "calls.csv").exists()  # nothing under the name meanwhile
            if k == 2:
                raise KeyboardInterrupt
            yield df

    monkeypatch.setattr(Store, "chunks", dying)
    for table in ("steps", "calls"):
        with pytest.raises(KeyboardInterrupt):
            export_store(store, tmp_path, "csv", [table])
    assert whole.read_bytes() == complete  # the earlier export, untouched
    assert not (tmp_path / "calls.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["steps.csv"]


def test_partial_files_a_sigkill_left_are_removed_by_the_next_export_saying_so(
    store: Path, tmp_path: Path
) -> None:
    """Issue 36 item 9: a SIGKILL runs no cleanup, so its ``.steps.csv.part`` stays; the next
    export (of any table or format) removes every such leftover and says how many."""
    out = tmp_path / "x"
    out.mkdir()
    (out / ".steps.csv.part").write_bytes(b"x" * 3_000_000)  # as a killed export leaves it
    (out / ".trajectories.jsonl.part").write_bytes(b"{")
    (out / ".mine.part").write_bytes(b"kept")  # not a file of ours
    said: list[str] = []
    export_store(store, out, "csv", ["episodes"], say=said.append)
    assert sorted(p.name for p in out.iterdir()) == [".mine.part", "episodes.csv"]
    assert said and "removed 2 partial file(s)" in said[0] and "2.9 MiB" in said[0]
    res = runner.invoke(app, ["export", str(store.parent), "--format", "csv", "--out", str(out)])
    assert res.exit_code == 0 and "removed" not in res.stderr  # nothing left: nothing said
    (out / ".calls.parquet.part").write_bytes(b"y")
    res = runner.invoke(app, ["export", str(store.parent), "--format", "csv", "--out", str(out)])
    assert "removed 1 partial file(s)" in res.stderr and ".calls.parquet.part" in res.stderr


def test_rows_carry_their_runs_label_and_times_are_utc_timestamps(
    store: Path, tmp_path: Path
) -> None:
    """Issue 25 item 6: ``finished`` is an ISO 8601 UTC time, not a Julian day; a step's
    row names its run's label and history without a join."""
    eps_csv, steps_csv = export_store(store, tmp_path, "csv", ["episodes", "steps"])
    eps = pd.read_csv(eps_csv)
    raw = _stored(store, "episodes").set_index(["run", "seed", "rollout"])["finished"]
    assert len(raw) == len(eps)
    for run, seed, rollout, iso in eps[["run", "seed", "rollout", "finished"]].itertuples(
        index=False
    ):
        jd = raw.loc[(run, seed, rollout)]
        assert iso.endswith("Z") and iso[4] == "-" and iso[10] == "T"
        back = pd.Timestamp(iso).timestamp() / 86400.0 + 2440587.5
        assert abs(back - jd) * 86400 < 0.002  # the same instant, to the millisecond
    steps = pd.read_csv(steps_csv, keep_default_na=False, na_values=[""])
    runs = Store(store, readonly=True).runs_frame().set_index("run")
    for _, row in steps.iterrows():
        assert row["label"] == runs.loc[row["run"], "label"]
        assert row["history"] == runs.loc[row["run"], "history"]


def test_parquet_times_are_timestamps(store: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow", reason="parquet export needs the export extra (pyarrow)")
    (f,) = export_store(store, tmp_path, "parquet", ["episodes"])
    eps = pd.read_parquet(f)
    assert str(eps["finished"].dtype).startswith("datetime64") and eps["finished"].dt.tz is not None


def test_jsonl_holds_each_whole_episode_as_a_chat(store: Path, tmp_path: Path) -> None:
    """One line an episode: its run, outcome, the chat (first prompt, then reply /
    observation turns) and every step as stored."""
    (f,) = export_store(store, tmp_path, "jsonl")
    assert f.name == "trajectories.jsonl"
    lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
    eps = _stored(store, "episodes")
    assert len(lines) == len(eps) == 6
    steps, calls = _stored(store, "steps"), _stored(store, "calls")
    for line in lines:
        key = (line["run"], line["seed"], line["rollout"])
        mine = steps[(steps.run == key[0]) & (steps.seed == key[1]) & (steps.rollout == key[2])]
        mine = mine.sort_values("t")
        assert [s["t"] for s in line["trajectory"]] == mine["t"].tolist()
        assert [s["reply"] for s in line["trajectory"]] == mine["reply"].tolist()
        assert line["steps"] == len(mine) and line["finished"].endswith("Z")
        roles = [m["role"] for m in line["messages"]]
        said = [m["content"] for m in line["messages"] if m["role"] == "assistant"]
        if line["axes"]["agent"] == "expert":  # no model: the actions are the replies
            assert roles[0] == "user" and said == mine["action"].tolist()
            continue
        mc = calls[(calls.run == key[0]) & (calls.seed == key[1]) & (calls.kind == "act")]
        first = json.loads(mc.sort_values(["t", "i"]).iloc[0]["messages"])
        assert line["messages"][: len(first)] == first  # the first prompt as the agent saw it
        assert said == mine["reply"].tolist()
        observations = [m["content"] for m in line["messages"][len(first) :] if m["role"] == "user"]
        assert observations == mine["observation"].tolist()[:-1]
        assert roles[len(first) :] == ["assistant", "user"] * (len(mine) - 1) + ["assistant"]


def test_jsonl_refuses_tables(store: Path) -> None:
    bad = runner.invoke(app, ["export", str(store.parent), "--format", "jsonl", "--table", "steps"])
    assert bad.exit_code == 2 and "jsonl writes whole episodes" in bad.stderr
