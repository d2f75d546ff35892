"""``statelab export``: a store's tables as Parquet or CSV files, for other tools.

One file per table: ``episodes`` (each episode with its run's label, axes and tags),
``steps`` and ``calls`` (as stored) by default; any table of :data:`statelab.run.store.TABLES`
on request. Rows are read and written in chunks, so a store larger than memory exports.
Parquet needs ``pyarrow`` (``pip install 'statelab[export]'``); CSV needs nothing more.
Text cells are exported as stored; JSON cells (``meta``, ``messages``, ``components``) stay
JSON text; an episode's ``tags`` is a list in Parquet and a JSON list in CSV.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.core import ConfigError
from statelab.run.store import TABLES

FORMATS = ("parquet", "csv")
DEFAULT_TABLES = ("episodes", "steps", "calls")
CHUNK = 5000


def export_store(
    store: str | Path,
    out: str | Path,
    fmt: str,
    tables: tuple[str, ...] | list[str] = DEFAULT_TABLES,
) -> list[Path]:
    """Write ``<out>/<table>.<fmt>`` for each table; returns the files written."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format: one of {', '.join(FORMATS)}, got {fmt!r}")
    unknown = [t for t in tables if t not in TABLES]
    if unknown:
        raise ConfigError(f"--table: no table {unknown[0]!r}; tables: {', '.join(TABLES)}")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ConfigError(
                "parquet export needs pyarrow: pip install 'statelab[export]' (or --format csv)"
            ) from None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(f"file:{Path(store).resolve()}?mode=ro", uri=True)
    try:
        written = []
        for table in dict.fromkeys(tables):
            path = out / f"{table}.{fmt}"
            chunks = _chunks(db, table)
            if fmt == "csv":
                _write_csv(chunks, path)
            else:
                _write_parquet(chunks, path, _types(db, table))
            written.append(path)
        return written
    finally:
        db.close()


def _query(db: sqlite3.Connection, table: str) -> str:
    if table != "episodes":
        return f"SELECT * FROM {table} ORDER BY rowid"
    axes = [
        r[1]
        for r in db.execute("PRAGMA table_info(runs)")
        if r[1] not in ("run", "label", "spec", "components", "tags")
    ]
    cols = ", ".join(["r.label", *(f'r."{a}"' for a in axes), "r.tags", "e.*"])
    return (
        f"SELECT {cols} FROM episodes e JOIN runs r ON r.run = e.run"
        " ORDER BY r.rowid, e.seed, e.rollout"
    )


def _types(db: sqlite3.Connection, table: str) -> dict[str, str]:
    """Each exported column's declared SQLite type (the runs' columns are text)."""
    own = {r[1]: str(r[2]).upper() for r in db.execute(f"PRAGMA table_info({table})")}
    if table != "episodes":
        return own
    runs = {r[1]: "TEXT" for r in db.execute("PRAGMA table_info(runs)")}
    return {**runs, **own, "tags": "LIST"}


def _chunks(db: sqlite3.Connection, table: str) -> Iterator[pd.DataFrame]:
    first = True
    for df in pd.read_sql_query(_query(db, table), db, chunksize=CHUNK):
        first = False
        yield df
    if first:  # an empty table still gets its header
        yield pd.read_sql_query(_query(db, table) + " LIMIT 0", db)


def _write_csv(chunks: Iterator[pd.DataFrame], path: Path) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        for i, df in enumerate(chunks):
            if "tags" in df.columns:
                df["tags"] = df["tags"].map(lambda t: t if t else "[]")
            df.to_csv(f, index=False, header=i == 0)


def _write_parquet(chunks: Iterator[pd.DataFrame], path: Path, types: dict[str, str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = {
        "INTEGER": pa.int64(),
        "REAL": pa.float64(),
        "TEXT": pa.string(),
        "LIST": pa.list_(pa.string()),
    }
    writer: Any = None
    try:
        for df in chunks:
            if "tags" in df.columns:
                df["tags"] = df["tags"].map(lambda t: list(json.loads(t)) if t else [])
            # the declared types, not each chunk's guess (a column NULL in one chunk, or an
            # integer column with NULLs that pandas reads as float, keeps one type)
            schema = pa.schema([(c, arrow.get(types.get(c, ""), pa.string())) for c in df.columns])
            table = pa.Table.from_pandas(df, schema=schema, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(path, schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
