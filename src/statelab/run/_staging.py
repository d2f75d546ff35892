"""An in-flight episode's steps staged in the store connection's TEMP database.

An episode played into a store of the text-table layout records its steps in a
:class:`statelab.run.records.Trajectory`, not a list: its text sink
(:meth:`statelab.run.store.Store.text_sink`) writes each step's rows (``steps``, ``calls``,
``queries``, exactly as the commit would) into temp tables once the step is final (when the
next one is recorded), so the episode holds counters and its last step, whatever its length.
The episode's commit copies its staged rows into the real tables in its one transaction and
deletes them (:meth:`Staging.copy`). Temp tables belong to the connection: a killed process
leaves nothing staged behind, and the store's file holds only whole episodes as before.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from statelab.run._rows import Cells
from statelab.run._schema import open_db
from statelab.run._texts import TextRef
from statelab.run.records import StepRecord

_KEY = "run=? AND seed=? AND rollout=?"
_QUERY_COLS = ("run", "seed", "rollout", "t", "i", "query", "answer")
#: the temp tables, by the real table each stands for
STAGED = {"steps": "staged_steps", "calls": "staged_calls", "queries": "staged_queries"}
_TEMP: tuple[str, str, str] = ("staged_steps", "staged_calls", "staged_queries")


def _ddl(name: str, cols: tuple[str, ...], key: str) -> str:
    # untyped columns keep each value as the commit would have bound it; the real table's
    # affinity applies when the rows are copied, as it did to a direct insert
    return f"CREATE TEMP TABLE IF NOT EXISTS {name} ({', '.join(cols)}, PRIMARY KEY ({key}))"


def discard(db: sqlite3.Connection, key: tuple[str, int, int]) -> None:
    """Delete what is staged for ``key`` (an episode committed another way, or again)."""
    for name in STAGED.values():
        try:
            db.execute(f"DELETE FROM temp.{name} WHERE {_KEY}", key)
        except sqlite3.OperationalError:  # nothing was ever staged on this connection
            return


class Staging:
    """One episode's staged rows on ``db`` (the store's connection; every call is made
    under the store's writer lock, and off the event loop)."""

    def __init__(self, db: sqlite3.Connection, path: Path, cells: Cells) -> None:
        self.db, self.path, self.cells, self.key = db, path, cells, cells.key
        self.committed = False
        self.steps_cols = ("run", "seed", "rollout", *cells.step_cols)
        self.calls_cols = cells.call_cols
        self._sql: dict[str, str] = {
            t: sql.replace(f"INSERT INTO {t}(", f"INSERT INTO temp.{STAGED[t]}(", 1)
            for t, sql in (("steps", cells.step_sql), ("calls", cells.call_sql))
        }
        self._sql |= {
            "queries": f"INSERT INTO temp.staged_queries VALUES ({', '.join('?' * 7)})",
        }
        db.execute(_ddl("staged_steps", self.steps_cols, "run, seed, rollout, t"))
        db.execute(_ddl("staged_calls", self.calls_cols, "run, seed, rollout, t, i"))
        db.execute(_ddl("staged_queries", _QUERY_COLS, "run, seed, rollout, t, i"))
        discard(db, self.key)  # an earlier attempt of this episode in this process

    def stage(self, step: StepRecord) -> None:
        """Write ``step``'s rows into the temp tables (inside the caller's transaction)."""
        c = self.cells
        self.db.execute(self._sql["steps"], c.step(step))
        self.db.executemany(self._sql["calls"], c.calls(step))
        self.db.executemany(self._sql["queries"], c.queries(step))

    def copy(self) -> None:
        """Copy the staged rows into the real tables and delete them (inside the commit's
        transaction: both happen, or neither)."""
        for table, cols in (
            ("steps", self.steps_cols), ("calls", self.calls_cols), ("queries", _QUERY_COLS)
        ):  # fmt: skip
            names = ", ".join(cols)
            order = "t" if table == "steps" else "t, i"
            self.db.execute(
                f"INSERT INTO main.{table}({names}) SELECT {names} FROM temp.{STAGED[table]}"
                f" WHERE {_KEY} ORDER BY {order}",
                self.key,
            )
        discard(self.db, self.key)

    def read(self, start: int, stop: int) -> Iterator[StepRecord]:
        """Steps ``start`` to ``stop`` (their order) as records: from the temp tables while in
        flight, from the store's file (read-only) once committed. Texts stay keys
        (:class:`TextRef`)."""
        if stop <= start:
            return iter(())
        if self.committed:
            db = open_db(self.path, write=False)
            try:
                return iter(self._read(db, "main", "steps", "calls", "queries", start, stop))
            finally:
                db.close()
        return iter(self._read(self.db, "temp", *_TEMP, start, stop))

    def _read(
        self, db: sqlite3.Connection, schema: str, steps: str, calls: str, queries: str,
        start: int, stop: int,
    ) -> list[StepRecord]:  # fmt: skip
        def rows(table: str, where: str, args: tuple[Any, ...], order: str) -> list[dict]:
            cur = db.execute(f"SELECT * FROM {schema}.{table} WHERE {where} ORDER BY {order}", args)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r, strict=True)) for r in cur]

        got = rows(steps, _KEY, (*self.key, stop - start, start), "t LIMIT ? OFFSET ?")
        if not got:
            return []
        span = f"{_KEY} AND t BETWEEN ? AND ?"
        args = (*self.key, got[0]["t"], got[-1]["t"])
        by_t: dict[int, tuple[list[dict], list[dict]]] = {r["t"]: ([], []) for r in got}
        for c in rows(calls, span, args, "t, i"):
            by_t[c["t"]][0].append(c)
        for q in rows(queries, span, args, "t, i"):
            by_t[q["t"]][1].append(q)
        return [_record(r, *by_t[r["t"]]) for r in got]


def _record(row: dict[str, Any], calls: list[dict], queries: list[dict]) -> StepRecord:
    """A stored ``steps`` row (text-table layout) with its calls and queries, as a record."""

    def text(r: dict[str, Any], col: str) -> Any:
        v = r.get(f"{col}_ref", r.get(col))
        return TextRef(v) if v is not None else v

    return StepRecord(
        t=row["t"], view=text(row, "view"), grounding=row["grounding"], reply=row["reply"],
        action=row["action"], parsed=bool(row["parsed"]), valid=bool(row["valid"]),
        reward=row["reward"], observation=row["observation"], memory=text(row, "memory"),
        agent_in=row["agent_in"], agent_out=row["agent_out"], aux_in=row["aux_in"],
        aux_out=row["aux_out"], latency=row["latency"], overhead=row["overhead"],
        gold=row["gold"], meta=json.loads(row["meta"]) if row["meta"] else {},
        agent_calls=row["agent_calls"], env_state=row.get("env_state"),
        calls=[
            {"kind": c["kind"], "messages": text(c, "messages"), "text": c["text"],
             "input_tokens": c["input_tokens"], "output_tokens": c["output_tokens"],
             "latency": c["latency"], "cached": bool(c["cached"]),
             "original_latency": c.get("original_latency"),
             "decoding": c.get("decoding") or "free", "cost": c.get("cost")}
            for c in calls
        ],
        queries=[{"query": q["query"], "answer": q["answer"]} for q in queries],
    )  # fmt: skip
