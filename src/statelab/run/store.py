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

Each distinct view, memory and message is kept once, in the ``texts`` table (schema 2,
:mod:`statelab.run._schema`): a run's bytes grow with its steps, not with their square. A
store of the earlier inline layout still opens, reads the same frames and resumes in its
own layout; one of a newer schema, or a damaged one, is refused before anything is written.
Readers open the file read-only and run no DDL. Every table of the file is the store's: a
module that keeps one of its own declares it with :func:`register_table` and writes it with
:meth:`Store.append`; every reader reads through :class:`statelab.run._reading.Reading`.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.core import ConfigError
from statelab.run._reading import REGISTERED, RUN_FIXED, Reading
from statelab.run._rekey import SpecReader, rekey
from statelab.run._rows import EPISODE_COLS, Cells, cell
from statelab.run._schema import (
    ADDED_COLUMNS,
    INLINE,
    SCHEMA_VERSION,
    TEXT_TABLE,
    check_integrity,
    open_db,
    schema_version,
)
from statelab.run._staging import Staging, discard
from statelab.run.records import EpisodeRecord, StepRecord, Trajectory


class StoreLocked(ConfigError):
    """Another process is running an experiment into this store."""


class Store(Reading):
    """One experiment's results. ``axes`` names the run axes the ``runs`` table has columns
    for (the table of axes); a store written with fewer axes gains the new columns.

    ``readonly=True`` opens an existing store read-only (``mode=ro``: nothing is written, no
    table is made, a read-only file or folder reads); ``False`` opens it for writing, checked
    first (a damaged store or one of a newer schema is refused with one line). The default
    opens a new file, or any file with ``axes``, for writing, and an existing store
    read-only until the first write."""

    def __init__(
        self, path: str | Path, axes: tuple[str, ...] = (), *, readonly: bool | None = None
    ) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._lockfile: Any = None
        self.readonly = bool(readonly)
        self.version = SCHEMA_VERSION
        self.axes: tuple[str, ...] = ()
        fresh = not self.path.is_file() or self.path.stat().st_size == 0
        self._writing = not readonly and (readonly is False or bool(axes) or fresh)
        self.db = open_db(self.path, write=self._writing)
        try:
            if self._writing:
                self._prepare()
            elif not self._is_statelab():
                if readonly:
                    missing = "runs" if not self._has("runs") else "episodes"
                    raise ConfigError(f"{self.path}: not a statelab store (no {missing} table)")
                self._write()  # not a store yet: made one, as a writer always did
            else:
                self.version = schema_version(self.db, self.path)
        except BaseException:
            self.db.close()
            raise
        self._ensure_axes(axes)

    def _is_statelab(self) -> bool:
        return self._has("runs") and self._has("episodes")

    def _write(self) -> None:
        """Become a writer (the first write of a store opened for reading)."""
        if self._writing:
            return
        if self.readonly:
            raise ConfigError(f"{self.path}: opened read-only")
        self.db.close()
        self.db = open_db(self.path, write=True)
        self._writing = True
        try:
            self._prepare()
        except BaseException:
            self.db.close()
            raise

    def _prepare(self) -> None:
        """Check the store before writing (version, integrity), then make its tables."""
        try:
            self.version = schema_version(self.db, self.path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if self._has("episodes"):
                check_integrity(self.db, self.path)
                if "rollout" not in self._columns("episodes"):
                    raise ConfigError(
                        f"{self.path}: written by an older statelab (episodes keyed by seed"
                        " alone); write this experiment to a new out folder"
                    )
                if self.version < 2:  # the inline layout stays inline (a resumed run)
                    self.db.executescript(INLINE)
                    if "env_seed" not in self._columns("episodes"):  # this release's first cut
                        self.db.execute("ALTER TABLE episodes ADD COLUMN env_seed INTEGER")
                    self._add_columns()
                    self.version = 1
                    self.db.execute("PRAGMA user_version=1")
                    return
            self.db.executescript(TEXT_TABLE)
            self._add_columns()
            self.version = SCHEMA_VERSION
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as e:
            if "malformed" in str(e):
                check_integrity(self.db, self.path)
            raise ConfigError(f"{self.path}: not a statelab store ({e})") from None

    def _add_columns(self) -> None:
        """Give a store written before :data:`ADDED_COLUMNS` those columns (a call's and an
        episode's ``cost``); its earlier rows hold NULL there."""
        for table, cols in ADDED_COLUMNS.items():
            have = self._columns(table)
            for name, kind in cols:
                if name not in have:
                    self.db.execute(f'ALTER TABLE {table} ADD COLUMN "{name}" {kind}')

    def _ensure_axes(self, axes: Any) -> None:
        """Give the ``runs`` table a column per axis (an axis added later joins old stores)."""
        have = self._columns("runs")
        new = [a for a in axes if a not in have]
        if new:
            self._write()
        for a in new:
            if not re.fullmatch(r"[a-z][a-z0-9_]*", a):
                raise ValueError(f"not an axis name: {a!r}")
            self.db.execute(f'ALTER TABLE runs ADD COLUMN "{a}" TEXT')
        self.axes = tuple(a for a in self._columns("runs") if a not in RUN_FIXED)

    def _columns(self, table: str) -> list[str]:
        return [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]

    def lock(self) -> None:
        """Claim the store for one runner; a second one is refused with one line."""
        import fcntl

        self._write()
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
        """Close the file (and give up the runner's claim)."""
        with self._lock:
            self.db.close()
            if self._lockfile is not None:
                self._lockfile.close()
                self._lockfile = None

    # -- writing ----------------------------------------------------------------------------
    def rekey_runs(self, spec_of: SpecReader) -> dict[str, str]:
        """Move every run whose stored spec has another key now (a spelling made canonical:
        ``hanoi:disks=4`` is ``hanoi:4``) to that key, merging runs that are one run now
        (:mod:`statelab.run._rekey`); ``spec_of`` reads a ``spec`` column
        (``RunSpec.from_stored``). Old key -> new key of each run moved."""
        with self._lock:
            self._write()
            return rekey(self.db, spec_of, self.axes)

    def save_experiment(self, name: str, config: dict[str, Any]) -> None:
        """Record the experiment's name and config."""
        with self._lock:
            self._write()
            self.db.execute(
                "INSERT OR REPLACE INTO experiment(name, config) VALUES (?, ?)",
                (name, json.dumps(config)),
            )

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
        with self._lock:
            self._write()
            if set(axes) - set(self.axes):
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

    def commit_episode(self, ep: EpisodeRecord) -> None:
        """Replace any earlier (failed) attempt of this episode, all in one transaction."""
        head = {k: cell(getattr(ep, k)) for k in EPISODE_COLS}
        if head["grp"] < 0:
            head["grp"] = ep.seed
        key = (ep.run, ep.seed, ep.rollout)
        with self._lock:
            self._write()
            db = self.db
            cells = Cells(db, self.version >= 2, key)
            db.execute("BEGIN IMMEDIATE")
            try:
                for table in ("episodes", "steps", "calls", "queries"):
                    db.execute(f"DELETE FROM {table} WHERE run=? AND seed=? AND rollout=?", key)
                marks = ", ".join("?" * len(head))
                db.execute(
                    f"INSERT INTO episodes({', '.join(head)}) VALUES ({marks})",
                    tuple(head.values()),
                )
                steps = ep.trajectory
                if isinstance(steps, Trajectory):  # staged rows first, then the held steps
                    steps = self._staged_steps(steps)
                else:
                    discard(db, key)  # rows of an attempt left staged (its record replaced)
                for s in steps:
                    db.execute(cells.step_sql, cells.step(s))
                    db.executemany(cells.call_sql, cells.calls(s))
                    db.executemany("INSERT INTO queries VALUES (?,?,?,?,?,?,?)", cells.queries(s))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        if isinstance(ep.trajectory, Trajectory):
            staged = ep.trajectory.staged
            if isinstance(staged, Staging):
                staged.committed = True  # its steps read from the file now

    def _staged_steps(self, traj: Trajectory) -> list[StepRecord]:
        """Copy ``traj``'s staged rows into the real tables (inside the commit's transaction);
        the steps it still holds, for the commit to write."""
        staged = traj.staged
        if not isinstance(staged, Staging) or staged.db is not self.db or staged.committed:
            raise ValueError("a trajectory staged in another store (or committed already)")
        staged.copy()
        return list(traj.held)

    def text_sink(self, run: str, seed: int, rollout: int) -> TextSink | None:
        """What stores the texts of one episode's steps as they are made (an episode in
        flight then holds their keys, not the texts: its memory does not grow with its
        length), or None for a store of the inline layout (texts in the rows). Each step's
        texts are committed in a transaction of their own, under the store's one writer lock,
        before the episode's rows: :meth:`commit_episode` stays atomic (it writes the rows that
        refer to them, or nothing), and a killed episode leaves only texts no row refers to
        (content-addressed: harmless, and found again by the episode's rerun)."""
        with self._lock:
            self._write()
            if self.version < 2:
                return None
            return TextSink(self, Cells(self.db, True, (run, seed, rollout)))

    def _spill(self, cells: Cells, step: StepRecord, traj: Trajectory | None = None) -> None:
        """Commit ``step``'s texts, then leave their keys in it (a write that fails leaves
        the record holding its texts, and the sink no base that is not stored); in the same
        transaction, stage the steps of ``traj`` that are final into the connection's temp
        tables (:class:`Trajectory`), which it then lets go."""
        with self._lock:
            db = self.db
            final = traj.to_stage() if traj is not None else []
            db.execute("BEGIN IMMEDIATE")
            try:
                keys = cells.spill(step)
                if final:
                    assert traj is not None and isinstance(traj.staged, Staging)
                    for s in final:
                        traj.staged.stage(s)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                cells.forget()
                raise
            if traj is not None:
                traj.staged_out(len(final))
        cells.refer(step, keys)

    def append(
        self, tables: dict[str, list[dict[str, Any]]], *, replace: dict[str, Any] | None = None
    ) -> None:
        """Add rows to registered tables (:func:`register_table`), all in one transaction,
        first deleting each table's rows equal to ``replace`` (a redone audit of an episode
        replaces the old one)."""
        unknown = [t for t in tables if t not in REGISTERED]
        if unknown:
            raise ValueError(f"{unknown[0]!r} is not a registered table (register_table)")
        with self._lock:
            self._write()
            db = self.db
            for name in tables:
                db.executescript(REGISTERED[name])
                have = set(self._columns(name))
                bad = [c for r in tables[name] for c in r if c not in have]
                bad += [c for c in replace or {} if c not in have]
                if bad:
                    raise ValueError(f"table {name!r} has no column {bad[0]!r}")
            db.execute("BEGIN IMMEDIATE")
            try:
                for name, rows in tables.items():
                    if replace:
                        cond = " AND ".join(f'"{c}"=?' for c in replace)
                        db.execute(f'DELETE FROM "{name}" WHERE {cond}', tuple(replace.values()))
                    for r in rows:
                        cols = ", ".join(f'"{c}"' for c in r)
                        marks = ", ".join("?" * len(r))
                        db.execute(
                            f'INSERT INTO "{name}" ({cols}) VALUES ({marks})', tuple(r.values())
                        )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    # -- behaviour aggregates (issue 22; SQL in run/_store_behaviour.py) ------------------
    def behaviour_frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Per-episode and per-run behaviour counts aggregated in SQL from a few ``steps``
        columns (never a message or an observation): see :mod:`statelab.run._store_behaviour`."""
        from statelab.run._store_behaviour import behaviour

        with self._lock:
            return behaviour(self.db)

    # -- one episode's rows (the viewer's reader) -------------------------------------------
    def episode_rows(self, table: str, run: str, seed: int, rollout: int) -> list[dict[str, Any]]:
        """The rows of ``table`` (``steps``, ``calls`` or ``queries``) of one episode, in
        order of ``t`` (then ``i``), as dicts; a call's ``messages`` decoded to its list."""
        if table not in ("steps", "calls", "queries"):
            raise ValueError(f"episode_rows reads steps, calls or queries, not {table!r}")
        order = "t" if table == "steps" else "t, i"
        key = {"run": run, "seed": seed, "rollout": rollout}
        rows = self.rows(table, where=key, order=order)
        if table == "calls":
            for r in rows:
                r["messages"] = json.loads(r["messages"]) if r["messages"] else []
        return rows


class TextSink:
    """One episode's texts into its store as they are made (:meth:`Store.text_sink`): calling
    it with a step's record stores the step's texts and leaves their keys in the record. It
    writes to SQLite: call it off the event loop (``asyncio.to_thread``)."""

    def __init__(self, store: Store, cells: Cells) -> None:
        self._store, self._cells = store, cells
        self._traj: Trajectory | None = None

    def __call__(self, step: StepRecord) -> None:
        self._store._spill(self._cells, step, self._traj)

    def trajectory(self) -> Trajectory:
        """The episode's :class:`Trajectory`: each call of the sink also stages its steps that
        are final into the store connection's temp tables (the episode in flight then holds
        its last step and counters; :meth:`Store.commit_episode` copies the staged rows)."""
        store = self._store
        with store._lock:
            staging = Staging(store.db, store.path, self._cells)
        self._traj = Trajectory(staging)
        return self._traj


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
    """Refuse, with one line, a file that is not a statelab store, or one of a newer schema
    (read-only: nothing is written to a file that is not one)."""
    Store(path, readonly=True).close()


__all__ = ["Store", "StoreLocked", "TextSink", "check_store", "writable"]
