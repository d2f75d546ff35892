"""How a store is read: frames and rows of its tables, the same whatever its layout.

Every reader of a store goes through these methods (analysis, replay, export, the viewer,
training): none opens the file with SQL of its own. The ``texts`` references of the layout 2
(:mod:`statelab.run._schema`) are resolved here, so a frame of ``steps`` or ``calls`` is the
frame the inline layout gives, column for column.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd

from statelab.run._schema import INLINE, REF_COLUMNS
from statelab.run._texts import TextReader
from statelab.run.records import FINISHED

#: the tables every store has (``Store.table`` reads these and the registered ones)
TABLES = ("experiment", "runs", "episodes", "steps", "calls", "queries")
#: tables other modules declared (:func:`register_table`): name -> DDL
REGISTERED: dict[str, str] = {}
RUN_FIXED = ("run", "label", "spec", "components", "tags")


def register_table(name: str, ddl: str) -> None:
    """Declare a table a module keeps in the store (``CREATE TABLE IF NOT EXISTS <name> ...``):
    the store creates it on the first write to it and reads it like its own (empty, with its
    declared columns, in a store that never had it)."""
    if not name.isidentifier() or name in TABLES or name == "texts":
        raise ValueError(f"not a table name a module may register: {name!r}")
    if f"EXISTS {name} " not in " ".join(ddl.split()) + " ":
        raise ValueError(f"the DDL of {name!r} must be CREATE TABLE IF NOT EXISTS {name} (...)")
    REGISTERED[name] = ddl


def _declared_columns(name: str) -> list[str]:
    ddl = REGISTERED.get(name) or INLINE
    mem = sqlite3.connect(":memory:")
    try:
        mem.executescript(ddl)
        return [r[1] for r in mem.execute(f'PRAGMA table_info("{name}")')]
    finally:
        mem.close()


class Reading:
    """The read side of :class:`statelab.run.store.Store` (its connection is ``self.db``)."""

    db: sqlite3.Connection
    axes: tuple[str, ...]
    #: the layout's schema version (0/1 inline, 2 text table)
    version: int

    # -- the layout -------------------------------------------------------------------------
    def _refs(self, table: str) -> tuple[str, ...]:
        return REF_COLUMNS.get(table, ()) if self.version >= 2 else ()

    def _has(self, table: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)
        ).fetchone()
        return row is not None

    def columns(self, table: str) -> list[str]:
        """The columns a frame of ``table`` has (the inline layout's names)."""
        self._known(table)
        if not self._has(table):
            return _declared_columns(table)
        refs = {f"{c}_ref": c for c in self._refs(table)}
        return [refs.get(r[1], r[1]) for r in self.db.execute(f'PRAGMA table_info("{table}")')]

    def _known(self, table: str) -> None:
        if table not in TABLES and table not in REGISTERED:
            names = ", ".join([*TABLES, *sorted(REGISTERED)])
            raise ValueError(f"no table {table!r}; tables: {names}")

    def _select(
        self,
        table: str,
        columns: Sequence[str] | None,
        where: dict[str, Any] | None,
        order: str | None,
        present: Sequence[str] = (),
    ) -> tuple[str, tuple[Any, ...], list[str]]:
        have = self.columns(table)
        cols = list(columns) if columns is not None else have
        bad = [c for c in [*cols, *(where or {}), *present] if c not in have]
        if bad:
            raise ValueError(f"table {table!r} has no column {bad[0]!r}")
        refs = self._refs(table)
        sql_cols = ", ".join(f'"{c}_ref" AS "{c}"' if c in refs else f'"{c}"' for c in cols)
        sql = f'SELECT {sql_cols} FROM "{table}"'
        params: list[Any] = []
        conds = []
        for c, v in (where or {}).items():  # a tuple: any of its values
            many = isinstance(v, tuple)
            conds.append(f'"{c}" IN ({", ".join("?" * len(v))})' if many else f'"{c}"=?')
            params += list(v) if many else [v]
        conds += [f'"{c}_ref" IS NOT NULL' if c in refs else f'"{c}" IS NOT NULL' for c in present]
        if conds:
            sql += " WHERE " + " AND ".join(conds)
        sql += f" ORDER BY {order}" if order else " ORDER BY rowid"
        return sql, tuple(params), cols

    def _texts(self) -> TextReader:
        reader: TextReader | None = getattr(self, "_text_reader", None)
        if reader is None or reader.db is not self.db:
            reader = TextReader(self.db)
            self._text_reader = reader
        return reader

    def _resolve(self, table: str, col: str, value: Any) -> Any:
        if value is None:
            return None
        texts = self._texts()
        if table == "calls":  # the message list: each message a text
            return "[" + ", ".join(str(texts.get(h)) for h in str(value).split(",") if h) + "]"
        return texts.get(str(value))

    def _resolve_frame(self, table: str, df: pd.DataFrame) -> pd.DataFrame:
        for c in self._refs(table):
            if c in df.columns:
                df[c] = [self._resolve(table, c, v) for v in df[c]]
        return df

    # -- frames and rows --------------------------------------------------------------------
    def table(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        order: str | None = None,
    ) -> pd.DataFrame:
        """A table as a frame (``columns`` only, rows equal to ``where`` (a tuple value: equal
        to any of its items, e.g. ``{"status": FINISHED}``), in ``order`` or as written); a
        registered table the store never had is an empty frame."""
        sql, params, cols = self._select(name, columns, where, order)
        if not self._has(name):
            return pd.DataFrame(columns=cols)
        df = pd.read_sql_query(sql, self.db, params=params)
        return self._resolve_frame(name, df)

    def step_means(self) -> list[tuple[Any, ...]]:
        """Per run and env step ``t``: mean reward, share of valid actions, mean acting input
        tokens, and how many episodes reached it (one aggregate; the exports' step series)."""
        return self.db.execute(
            "SELECT run, t, avg(reward), avg(valid), avg(agent_in), count(*) FROM steps"
            " GROUP BY run, t ORDER BY run, t"
        ).fetchall()

    def rows(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        order: str | None = None,
    ) -> list[dict[str, Any]]:
        """A table's rows as dicts of the stored values (None stays None, integers stay
        integers: no frame's NaN); the same selection as :meth:`table`."""
        sql, params, cols = self._select(name, columns, where, order)
        if not self._has(name):
            return []
        refs = set(self._refs(name))
        out = []
        for r in self.db.execute(sql, params):
            row = dict(zip(cols, r, strict=True))
            for c in refs & row.keys():
                row[c] = self._resolve(name, c, row[c])
            out.append(row)
        return out

    def chunks(self, name: str, size: int = 5000) -> Iterator[pd.DataFrame]:
        """A table in frames of ``size`` rows, as written (at least one frame: an empty table
        gives its header). ``episodes`` comes with its run's label, axes and tags (JSON)."""
        if name == "episodes":
            sql, params = self._episodes_sql(), ()
        else:
            sql, params, _ = self._select(name, None, None, None)
        first = True
        if self._has(name):
            for df in pd.read_sql_query(sql, self.db, params=params, chunksize=size):
                first = False
                yield self._resolve_frame(name, df)
        if first:
            yield pd.DataFrame(columns=self._chunk_columns(name))

    def episode_frames(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        where: dict[str, Any] | None = None,
        *,
        present: Sequence[str] = (),
        size: int = 5000,
    ) -> Iterator[pd.DataFrame]:
        """``steps``, ``calls`` or ``queries`` in frames of whole episodes, never the whole
        table at once: about ``size`` rows a frame (more only when one episode has more), in
        order of ``run, seed, rollout`` then ``t`` (and ``i``), read along the primary key.
        ``columns`` (each frame has ``run, seed, rollout`` too) and ``where`` as
        :meth:`table`; ``present`` names columns whose NULL rows are left out in SQL, before
        any text is read. At least one frame (an empty one has the header)."""
        if name not in ("steps", "calls", "queries"):
            raise ValueError(f"episode_frames reads steps, calls or queries, not {name!r}")
        key = ("run", "seed", "rollout")
        wanted = list(columns) if columns is not None else self.columns(name)
        wanted = [*(k for k in key if k not in wanted), *wanted]
        order = "run, seed, rollout, t" if name == "steps" else "run, seed, rollout, t, i"
        sql, params, cols = self._select(name, wanted, where, order, present)
        at = [cols.index(k) for k in key]
        buf: list[tuple[Any, ...]] = []
        last: tuple[Any, ...] | None = None
        first = True
        if self._has(name):
            for row in self.db.execute(sql, params):
                k = (row[at[0]], row[at[1]], row[at[2]])
                if len(buf) >= size and k != last:
                    first = False
                    yield self._resolve_frame(name, pd.DataFrame.from_records(buf, columns=cols))
                    buf = []
                buf.append(row)
                last = k
        if buf or first:
            yield self._resolve_frame(name, pd.DataFrame.from_records(buf, columns=cols))

    def _chunk_columns(self, name: str) -> list[str]:
        if name != "episodes":
            return self.columns(name)
        return ["label", *self.axes, "tags", *self.columns("episodes")]

    def declared_types(self, name: str) -> dict[str, str]:
        """Each column's declared SQLite type, upper case, as :meth:`chunks` gives them (the
        runs' columns of ``episodes`` are text, its ``tags`` a ``LIST``)."""
        refs = {f"{c}_ref": c for c in self._refs(name)}
        own = {
            refs.get(r[1], r[1]): str(r[2]).upper()
            for r in self.db.execute(f'PRAGMA table_info("{name}")')
        }
        if name != "episodes":
            return own
        runs = {r[1]: "TEXT" for r in self.db.execute("PRAGMA table_info(runs)")}
        return {**runs, **own, "tags": "LIST"}

    def _episodes_sql(self) -> str:
        cols = ", ".join(["r.label", *(f'r."{a}"' for a in self.axes), "r.tags", "e.*"])
        return (
            f"SELECT {cols} FROM episodes e JOIN runs r ON r.run = e.run"
            " ORDER BY r.rowid, e.seed, e.rollout"
        )

    def episodes_frame(self) -> pd.DataFrame:
        """One row per episode with its run's label, axes and tags (a tuple): the input of
        :mod:`statelab.analysis`."""
        df = pd.read_sql_query(self._episodes_sql(), self.db)
        df["success"] = df["success"].astype(bool)
        df["tags"] = df["tags"].map(lambda t: tuple(json.loads(t)) if t else ())
        return df

    def runs_frame(self) -> pd.DataFrame:
        """One row per run: label, axes, tags (a tuple) and components (a dict by axis)."""
        df = pd.read_sql_query("SELECT * FROM runs ORDER BY rowid", self.db)
        df["tags"] = df["tags"].map(lambda t: tuple(json.loads(t)) if t else ())
        df["components"] = df["components"].map(lambda c: json.loads(c) if c else {})
        return df

    # -- typed questions --------------------------------------------------------------------
    def experiment(self) -> tuple[str, dict[str, Any]] | None:
        """The experiment's name and config, if saved."""
        row = self.db.execute("SELECT name, config FROM experiment LIMIT 1").fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def run_spec(self, run: str) -> dict[str, Any]:
        """The stored spec of ``run`` (KeyError when the store has no such run)."""
        row = self.db.execute("SELECT spec FROM runs WHERE run=?", (run,)).fetchone()
        if row is None:
            raise KeyError(f"no run {run!r} in {getattr(self, 'path', 'the store')}")
        return dict(json.loads(row[0]))

    def done(self) -> set[tuple[str, int, int]]:
        """(run, seed, rollout) of every finished episode (a status of
        :data:`~statelab.run.records.FINISHED`: done or truncated; a failed one is not)."""
        key = {"status": FINISHED}
        return {(r["run"], int(r["seed"]), int(r["rollout"])) for r in
                self.rows("episodes", ["run", "seed", "rollout"], key)}  # fmt: skip

    def stored_seeds(self, run: str, rollout: int = 0) -> list[int]:
        """The seeds of ``run`` with stored steps (of ``rollout``), ascending."""
        got = self.db.execute(
            "SELECT DISTINCT seed FROM steps WHERE run=? AND rollout=? ORDER BY seed",
            (run, rollout),
        ).fetchall()
        return [int(s) for (s,) in got]

    def episode_steps(
        self, run: str, seed: int, rollout: int = 0, columns: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The steps of one episode in order of ``t`` (``columns`` only)."""
        key = {"run": run, "seed": seed, "rollout": rollout}
        return self.rows("steps", columns, key, order="t")

    def episode_calls(
        self, run: str, seed: int, rollout: int = 0, columns: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The calls of one episode in order of (``t``, ``i``) (``columns`` only)."""
        key = {"run": run, "seed": seed, "rollout": rollout}
        return self.rows("calls", columns, key, order="t, i")

    def size_bytes(self) -> int:
        """The bytes the store's pages take (free pages excluded)."""
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        size = self.db.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)


__all__ = ["REGISTERED", "TABLES", "Reading", "register_table"]
