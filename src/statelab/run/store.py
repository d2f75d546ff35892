"""The results store: SQLite (runs, episodes, steps, calls, queries), one file per experiment.

Each finished episode is written in one transaction, so a killed run leaves only whole
episodes behind and a rerun resumes from them.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

SCHEMA = """
CREATE TABLE IF NOT EXISTS experiment (
    name TEXT PRIMARY KEY, config TEXT NOT NULL, updated REAL DEFAULT (julianday('now'))
);
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY, label TEXT NOT NULL, env TEXT, model TEXT, agent TEXT,
    history TEXT, format TEXT, grounding TEXT, spec TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    run TEXT NOT NULL, seed INTEGER NOT NULL, grp INTEGER NOT NULL, status TEXT NOT NULL,
    error TEXT,
    score REAL, success INTEGER, steps INTEGER, reward REAL,
    agent_calls INTEGER, agent_in INTEGER, agent_out INTEGER, aux_in INTEGER, aux_out INTEGER,
    cached_calls INTEGER, model_calls INTEGER, wall_s REAL,
    finished REAL DEFAULT (julianday('now')),
    PRIMARY KEY (run, seed)
);
CREATE TABLE IF NOT EXISTS steps (
    run TEXT NOT NULL, seed INTEGER NOT NULL, t INTEGER NOT NULL,
    view TEXT, grounding TEXT, reply TEXT, action TEXT, parsed INTEGER, valid INTEGER, reward REAL,
    observation TEXT, memory TEXT, agent_in INTEGER, agent_out INTEGER, aux_in INTEGER,
    aux_out INTEGER, latency REAL, overhead REAL, gold TEXT,
    PRIMARY KEY (run, seed, t)
);
CREATE TABLE IF NOT EXISTS calls (
    run TEXT NOT NULL, seed INTEGER NOT NULL, t INTEGER NOT NULL, i INTEGER NOT NULL,
    kind TEXT, messages TEXT, text TEXT, input_tokens INTEGER, output_tokens INTEGER,
    latency REAL, cached INTEGER,
    PRIMARY KEY (run, seed, t, i)
);
CREATE TABLE IF NOT EXISTS queries (
    run TEXT NOT NULL, seed INTEGER NOT NULL, t INTEGER NOT NULL, i INTEGER NOT NULL,
    query TEXT, answer TEXT,
    PRIMARY KEY (run, seed, t, i)
);
"""


@dataclass
class StepRecord:
    t: int
    view: str
    grounding: str
    reply: str
    action: str
    parsed: bool
    valid: bool
    reward: float
    observation: str
    memory: str
    agent_in: int
    agent_out: int
    aux_in: int
    aux_out: int
    latency: float
    overhead: float
    #: JSON of ``info["privileged"]["tracked"]`` after the step (gold state), if the env has it
    gold: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    queries: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class EpisodeRecord:
    run: str
    seed: int
    status: str
    #: the config seed this episode belongs to (its rollouts share it; statistics pair on it)
    grp: int = -1
    error: str | None = None
    score: float = 0.0
    success: bool = False
    steps: int = 0
    reward: float = 0.0
    agent_calls: int = 0
    agent_in: int = 0
    agent_out: int = 0
    aux_in: int = 0
    aux_out: int = 0
    cached_calls: int = 0
    model_calls: int = 0
    wall_s: float = 0.0
    trajectory: list[StepRecord] = field(default_factory=list)


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def save_experiment(self, name: str, config: dict[str, Any]) -> None:
        with self._lock:
            self.db.execute(
                "INSERT OR REPLACE INTO experiment(name, config) VALUES (?, ?)",
                (name, json.dumps(config)),
            )

    def experiment(self) -> tuple[str, dict[str, Any]] | None:
        row = self.db.execute("SELECT name, config FROM experiment LIMIT 1").fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def save_run(self, run: str, label: str, axes: dict[str, str], spec: dict[str, Any]) -> None:
        with self._lock:
            self.db.execute(
                "INSERT OR IGNORE INTO runs(run, label, env, model, agent, history, format,"
                " grounding, spec) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    run,
                    label,
                    axes["env"],
                    axes["model"],
                    axes["agent"],
                    axes["history"],
                    axes["format"],
                    axes["grounding"],
                    json.dumps(spec),
                ),
            )

    def done(self) -> set[tuple[str, int]]:
        rows = self.db.execute("SELECT run, seed FROM episodes WHERE status='done'").fetchall()
        return {(r, int(s)) for r, s in rows}

    def commit_episode(self, ep: EpisodeRecord) -> None:
        """Replace any earlier (failed) attempt of this episode, all in one transaction."""
        head = {k: v for k, v in asdict(ep).items() if k != "trajectory"}
        if head["grp"] < 0:
            head["grp"] = ep.seed
        head["success"] = int(bool(head["success"]))
        with self._lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                for table in ("episodes", "steps", "calls", "queries"):
                    db.execute(f"DELETE FROM {table} WHERE run=? AND seed=?", (ep.run, ep.seed))
                cols = ", ".join(head)
                db.execute(
                    f"INSERT INTO episodes({cols}) VALUES ({', '.join('?' * len(head))})",
                    tuple(head.values()),
                )
                for s in ep.trajectory:
                    row = {k: v for k, v in asdict(s).items() if k not in ("calls", "queries")}
                    row.update(run=ep.run, seed=ep.seed)
                    db.execute(
                        f"INSERT INTO steps({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                        tuple(int(v) if isinstance(v, bool) else v for v in row.values()),
                    )
                    for i, c in enumerate(s.calls):
                        db.execute(
                            "INSERT INTO calls VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                            (
                                ep.run,
                                ep.seed,
                                s.t,
                                i,
                                c["kind"],
                                json.dumps(c["messages"]),
                                c["text"],
                                c["input_tokens"],
                                c["output_tokens"],
                                c["latency"],
                                int(c["cached"]),
                            ),
                        )
                    for i, q in enumerate(s.queries):
                        db.execute(
                            "INSERT INTO queries VALUES (?,?,?,?,?,?)",
                            (ep.run, ep.seed, s.t, i, q.get("query"), q.get("answer")),
                        )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # -- reading --------------------------------------------------------------------------
    def episodes_frame(self) -> pd.DataFrame:
        """One row per episode with its run's axes (the input of :mod:`statelab.analysis`)."""
        df = pd.read_sql_query(
            "SELECT r.label, r.env, r.model, r.agent, r.history, r.format, r.grounding,"
            " e.* FROM episodes e JOIN runs r ON r.run = e.run ORDER BY r.rowid, e.seed",
            self.db,
        )
        df["success"] = df["success"].astype(bool)
        return df

    def table(self, name: str) -> pd.DataFrame:
        if name not in ("runs", "episodes", "steps", "calls", "queries", "experiment"):
            raise ValueError(f"no table {name!r}")
        return pd.read_sql_query(f"SELECT * FROM {name}", self.db)
