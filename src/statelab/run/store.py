"""The results store: SQLite (runs, episodes, steps, calls, queries), one file per experiment.

Each finished episode is written in one transaction, so a killed run leaves only whole
episodes behind and a rerun resumes from them. The journal is WAL with ``synchronous=NORMAL``:
a committed episode survives the death of the process (SIGKILL included: the WAL is in the
operating system's hands once the commit returns); only a power cut or an OS crash may
lose the last commits, never corrupt the file. Rows are built from the records' attributes
directly (no deep copy of an episode).

Text from models and envs is made storable at this boundary: every text cell passes through
:func:`stored_text`, which replaces NUL and the code points UTF-8 cannot encode (a lone
surrogate is valid JSON, and a model may send one), and keeps at most :data:`MAX_TEXT`
characters of a cell, or of one message of a call, with a marker saying how many were cut
(a model that echoes a 1 MB reply must not grow the store by megabytes a step).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.core import ConfigError
from statelab.llm import storable

SCHEMA = """
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
#: the tables a store has (``Store.table`` reads any of them)
TABLES = ("experiment", "runs", "episodes", "steps", "calls", "queries")
#: the most characters one stored text keeps (a reply, observation, view, call text, message)
MAX_TEXT = 64 * 1024
_CUT = "\n[... {n:,} more characters not stored (statelab keeps {limit:,} per text)]"


def stored_text(text: str, limit: int | None = MAX_TEXT) -> str:
    """``text`` as the store keeps it: :func:`statelab.llm.storable` (lone surrogates and NUL
    become U+FFFD), then at most ``limit`` characters, and a marker saying how many were cut."""
    text = storable(text)
    if limit is not None and len(text) > limit:
        return text[:limit] + _CUT.format(n=len(text) - limit, limit=limit)
    return text


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
    #: world-model questions asked during *decide*, with their answers
    queries: list[dict[str, Any]] = field(default_factory=list)
    #: per-step component metadata (tools offered, rejected proposals ...)
    meta: dict[str, Any] = field(default_factory=dict)
    #: the acting calls of this env step (VoT, constrained StateAct and ADaPT make several)
    agent_calls: int = 0


@dataclass
class EpisodeRecord:
    run: str
    seed: int
    status: str
    #: which episode of the seed this is (seed 000's rollouts); statistics pair on ``seed``
    rollout: int = 0
    #: the seed the env was reset with (the seed itself for rollout 0; see ``env_seed``)
    env_seed: int | None = None
    #: the config seed this episode belongs to (the same as ``seed``; kept for readers)
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
    #: the built components' descriptions (spelling, label, tags) by axis
    components: dict[str, Any] = field(default_factory=dict)
    trajectory: list[StepRecord] = field(default_factory=list)


_EPISODE_COLS = [f.name for f in fields(EpisodeRecord) if f.name != "trajectory"]
_STEP_COLS = [f.name for f in fields(StepRecord) if f.name not in ("calls", "queries")]


def _cell(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True, default=str)  # ASCII: surrogates are escaped
    if isinstance(v, str):
        return stored_text(v)
    return v


def _messages(messages: Any) -> str:
    """A call's messages as JSON, each message's text kept to :data:`MAX_TEXT` (images kept)."""

    def part(p: Any) -> Any:
        if isinstance(p, dict) and isinstance(p.get("text"), str):
            return {**p, "text": stored_text(p["text"])}
        return p

    def message(m: Any) -> Any:
        if not isinstance(m, dict):
            return m
        c = m.get("content")
        if isinstance(c, str):
            return {**m, "content": stored_text(c)}
        if isinstance(c, list):
            return {**m, "content": [part(p) for p in c]}
        return m

    return json.dumps([message(m) for m in messages or []], default=str)


class StoreLocked(ConfigError):
    """Another process is running an experiment into this store."""


class Store:
    """One experiment's results. ``axes`` names the run axes the ``runs`` table has columns
    for (the table of axes); a store written with fewer axes gains the new columns."""

    def __init__(self, path: str | Path, axes: tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._lockfile: Any = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            reason = getattr(e, "strerror", None) or str(e)
            raise ConfigError(f"{self.path}: cannot open the store ({reason})") from None
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            old = self._columns("episodes")
            if old and "rollout" not in old:
                raise ConfigError(
                    f"{self.path}: written by an older statelab (episodes keyed by seed alone);"
                    " write this experiment to a new out folder"
                )
            self.db.executescript(SCHEMA)
            if "env_seed" not in self._columns("episodes"):  # a store of this release's first cut
                self.db.execute("ALTER TABLE episodes ADD COLUMN env_seed INTEGER")
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise ConfigError(f"{self.path}: not a statelab store ({e})") from None
        self.axes: tuple[str, ...] = ()
        self._ensure_axes(axes)

    def _ensure_axes(self, axes: Any) -> None:
        """Give the ``runs`` table a column per axis (an axis added later joins old stores)."""
        have = self._columns("runs")
        for a in axes:
            if a not in have:
                if not re.fullmatch(r"[a-z][a-z0-9_]*", a):
                    raise ValueError(f"not an axis name: {a!r}")
                self.db.execute(f'ALTER TABLE runs ADD COLUMN "{a}" TEXT')
        self.axes = tuple(a for a in self._columns("runs") if a not in _RUN_FIXED)

    def _columns(self, table: str) -> list[str]:
        return [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]

    def lock(self) -> None:
        """Claim the store for one runner; a second one is refused with one line."""
        import fcntl

        f = open(self.path.with_name(self.path.name + ".lock"), "a+")  # noqa: SIM115
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            who = f.read().strip() or "another process"
            f.close()
            raise StoreLocked(
                f"{self.path}: another statelab run ({who}) is writing to this store"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}")
        f.flush()
        self._lockfile = f

    def close(self) -> None:
        with self._lock:
            self.db.close()
            if self._lockfile is not None:
                self._lockfile.close()
                self._lockfile = None

    def save_experiment(self, name: str, config: dict[str, Any]) -> None:
        with self._lock:
            self.db.execute(
                "INSERT OR REPLACE INTO experiment(name, config) VALUES (?, ?)",
                (name, json.dumps(config)),
            )

    def experiment(self) -> tuple[str, dict[str, Any]] | None:
        row = self.db.execute("SELECT name, config FROM experiment LIMIT 1").fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def save_run(
        self,
        run: str,
        label: str,
        axes: dict[str, str],
        spec: dict[str, Any],
        components: dict[str, Any] | None = None,
    ) -> None:
        """Record a run: its label, its value on each axis, its spec, and its components'
        descriptions (spelling, label, tags by axis) with the union of their tags."""
        comps = components or {}
        if set(axes) - set(self.axes):
            with self._lock:
                self._ensure_axes(axes)
        tags = sorted({t for c in comps.values() for t in c.get("tags", ())})
        row = {
            "run": run,
            "label": label,
            "spec": json.dumps(spec, sort_keys=True),
            "components": json.dumps(comps, sort_keys=True),
            "tags": json.dumps(tags),
            **{a: axes.get(a) for a in self.axes},
        }
        cols = ", ".join(f'"{c}"' for c in row)
        with self._lock:
            self.db.execute(
                f"INSERT OR IGNORE INTO runs({cols}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )

    def done(self) -> set[tuple[str, int, int]]:
        """(run, seed, rollout) of every finished episode."""
        rows = self.db.execute(
            "SELECT run, seed, rollout FROM episodes WHERE status='done'"
        ).fetchall()
        return {(r, int(s), int(i)) for r, s, i in rows}

    def commit_episode(self, ep: EpisodeRecord) -> None:
        """Replace any earlier (failed) attempt of this episode, all in one transaction."""
        head = {k: _cell(getattr(ep, k)) for k in _EPISODE_COLS}
        if head["grp"] < 0:
            head["grp"] = ep.seed
        key = (ep.run, ep.seed, ep.rollout)
        with self._lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                for table in ("episodes", "steps", "calls", "queries"):
                    db.execute(f"DELETE FROM {table} WHERE run=? AND seed=? AND rollout=?", key)
                marks = ", ".join("?" * len(head))
                db.execute(
                    f"INSERT INTO episodes({', '.join(head)}) VALUES ({marks})",
                    tuple(head.values()),
                )
                step_sql = (
                    f"INSERT INTO steps(run, seed, rollout, {', '.join(_STEP_COLS)}) "
                    f"VALUES ({', '.join('?' * (len(_STEP_COLS) + 3))})"
                )
                for s in ep.trajectory:
                    db.execute(step_sql, (*key, *(_cell(getattr(s, c)) for c in _STEP_COLS)))
                    db.executemany(
                        "INSERT INTO calls VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        [
                            (
                                *key,
                                s.t,
                                i,
                                _cell(c["kind"]),
                                _messages(c["messages"]),
                                _cell(c["text"]),
                                c["input_tokens"],
                                c["output_tokens"],
                                c["latency"],
                                int(c["cached"]),
                            )
                            for i, c in enumerate(s.calls)
                        ],
                    )
                    db.executemany(
                        "INSERT INTO queries VALUES (?,?,?,?,?,?,?)",
                        [
                            (*key, s.t, i, _cell(q.get("query")), _cell(q.get("answer")))
                            for i, q in enumerate(s.queries)
                        ],
                    )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    # -- reading --------------------------------------------------------------------------
    def episodes_frame(self) -> pd.DataFrame:
        """One row per episode with its run's axes and tags (the input of
        :mod:`statelab.analysis`)."""
        cols = ", ".join(["r.label", *(f'r."{a}"' for a in self.axes), "r.tags", "e.*"])
        df = pd.read_sql_query(
            f"SELECT {cols} FROM episodes e JOIN runs r ON r.run = e.run"
            " ORDER BY r.rowid, e.seed, e.rollout",
            self.db,
        )
        df["success"] = df["success"].astype(bool)
        df["tags"] = df["tags"].map(lambda t: tuple(json.loads(t)) if t else ())
        return df

    def runs_frame(self) -> pd.DataFrame:
        """One row per run: label, axes, tags (a tuple) and components (a dict by axis)."""
        df = pd.read_sql_query("SELECT * FROM runs ORDER BY rowid", self.db)
        df["tags"] = df["tags"].map(lambda t: tuple(json.loads(t)) if t else ())
        df["components"] = df["components"].map(lambda c: json.loads(c) if c else {})
        return df

    def table(self, name: str) -> pd.DataFrame:
        if name not in TABLES:
            raise ValueError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        return pd.read_sql_query(f"SELECT * FROM {name}", self.db)

    # -- one episode's rows (the viewer's reader; h-viewer) --------------------------------
    def episode_rows(self, table: str, run: str, seed: int, rollout: int) -> list[dict[str, Any]]:
        """The rows of ``table`` (``steps``, ``calls`` or ``queries``) of one episode, in
        order of ``t`` (then ``i``), as dicts; a call's ``messages`` decoded to its list."""
        if table not in ("steps", "calls", "queries"):
            raise ValueError(f"episode_rows reads steps, calls or queries, not {table!r}")
        order = "t" if table == "steps" else "t, i"
        cur = self.db.execute(
            f"SELECT * FROM {table} WHERE run=? AND seed=? AND rollout=? ORDER BY {order}",
            (run, seed, rollout),
        )
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur]
        if table == "calls":
            for r in rows:
                r["messages"] = json.loads(r["messages"]) if r["messages"] else []
        return rows


_RUN_FIXED = ("run", "label", "spec", "components", "tags")


def writable(path: Path, what: str) -> None:
    """``path`` could be created and written (its nearest existing folder is a writable
    folder), checked without creating anything."""
    if path.is_dir():
        raise ConfigError(f"{what}: {path} is a folder, not a file")
    probe = path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        then = "" if probe == path.parent else f", so {path.parent} cannot be made"
        raise ConfigError(f"{what}: {probe} is not a folder{then}")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"{what}: {probe} is not writable")


def check_store(path: str | Path) -> None:
    """Refuse, with one line, a file that is not a statelab store (read-only: nothing is
    written to a file that is not one)."""
    p = Path(path)
    try:
        db = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True)
        try:
            have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            db.close()
    except sqlite3.Error as e:
        raise ConfigError(f"{p}: not a statelab store ({e})") from None
    missing = [t for t in ("runs", "episodes") if t not in have]
    if missing:
        raise ConfigError(f"{p}: not a statelab store (no {missing[0]} table)")
