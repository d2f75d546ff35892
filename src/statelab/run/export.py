"""``statelab export``: a store's tables as Parquet or CSV files, or its episodes as JSON
Lines trajectories, for other tools.

One file per table: ``episodes`` (each episode with its run's label, axes and tags),
``steps`` and ``calls`` (each row with its run's label and axes after ``run``, so no join is
needed) by default; any table of :data:`statelab.run.store.TABLES` on request. Times
(``finished``, ``updated``) are UTC timestamps (ISO 8601 in CSV), not SQLite's Julian days.
``jsonl`` writes ``trajectories.jsonl`` instead: one whole episode per line (see
:func:`statelab.run._trajectories.trajectory`), the shape fine-tuning tools read. Rows are
read and written in chunks, so a store larger than memory exports.
Parquet needs ``pyarrow`` (``pip install 'statelab[export]'``); CSV needs nothing more.
The store is opened read-only; each file is written under a temporary name and renamed when
complete, so a killed export never leaves a truncated file that looks whole.
Text cells are exported as stored; JSON cells (``meta``, ``messages``, ``components``) stay
JSON text; an episode's ``tags`` is a list in Parquet and a JSON list in CSV.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.core import ConfigError
from statelab.run._reading import REGISTERED, TABLES
from statelab.run._trajectories import write_trajectories
from statelab.run.store import Store

FORMATS = ("parquet", "csv", "jsonl")
DEFAULT_TABLES = ("episodes", "steps", "calls")
CHUNK = 5000
#: columns SQLite fills with ``julianday('now')``, exported as UTC timestamps
TIME_COLUMNS = ("finished", "updated")
_UNIX_EPOCH_JD = 2440587.5


def export_store(
    store: str | Path,
    out: str | Path,
    fmt: str,
    tables: tuple[str, ...] | list[str] = DEFAULT_TABLES,
    say: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write ``<out>/<table>.<fmt>`` for each table; returns the files written. Partial files
    a killed export left in ``out`` are removed first, and ``say`` is told how many."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format: one of {', '.join(FORMATS)}, got {fmt!r}")
    known = [*TABLES, *sorted(REGISTERED)]
    unknown = [t for t in tables if t not in known]
    if unknown:
        raise ConfigError(f"--table: no table {unknown[0]!r}; tables: {', '.join(known)}")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ConfigError(
                "parquet export needs pyarrow: pip install 'statelab[export]' (or --format csv)"
            ) from None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    left = remove_leftovers(out, known)
    if left and say is not None:
        size = sum(n for _, n in left) / 2**20
        say(
            f"removed {len(left)} partial file(s) a killed export left in {out}"
            f" ({size:.1f} MiB): {', '.join(p.name for p, _ in left)}"
        )
    st = Store(store, readonly=True)
    try:
        if fmt == "jsonl":
            path = out / "trajectories.jsonl"
            with _replacing(path) as part:
                write_trajectories(st, part)
            return [path]
        written = []
        runs = _run_columns(st)
        for table in dict.fromkeys(tables):
            path = out / f"{table}.{fmt}"
            chunks = (_readable(df, runs, table) for df in st.chunks(table, CHUNK))
            with _replacing(path) as part:
                if fmt == "csv":
                    _write_csv(chunks, part)
                else:
                    _write_parquet(chunks, part, _types(st, table, runs))
            written.append(path)
        return written
    finally:
        st.close()


def _run_columns(st: Store) -> pd.DataFrame:
    """Each run's label and axes, to put beside the ``run`` column of a per-run table."""
    return st.runs_frame()[["run", "label", *st.axes]]


def _readable(df: pd.DataFrame, runs: pd.DataFrame, table: str) -> pd.DataFrame:
    """A chunk as exported: Julian days as UTC timestamps; the run's label and axes after
    ``run`` in the tables that have one but not ``episodes`` (which carries them already)."""
    for col in TIME_COLUMNS:
        if col in df.columns:
            df[col] = pd.to_datetime(
                (pd.to_numeric(df[col]) - _UNIX_EPOCH_JD) * 86400.0, unit="s", utc=True
            ).dt.round("ms")
    if table != "episodes" and "run" in df.columns and len(runs):
        extra = [c for c in runs.columns if c != "run" and c not in df.columns]
        if extra:
            at = list(df.columns).index("run") + 1
            joined = df.merge(runs[["run", *extra]], on="run", how="left", sort=False)
            order = [*df.columns[:at], *extra, *df.columns[at:]]
            df = joined[order]
    return df


def _types(st: Store, table: str, runs: pd.DataFrame) -> dict[str, str]:
    types = dict(st.declared_types(table))
    for col in TIME_COLUMNS:
        if col in types:
            types[col] = "TIMESTAMP"
    if table != "episodes":
        types.update({c: "TEXT" for c in runs.columns if c != "run"})
    return types


def remove_leftovers(out: Path, tables: list[str]) -> list[tuple[Path, int]]:
    """Remove the temporary files (``.<file>.part``) a killed export left in ``out``, of any
    table and format this module writes; returns each with its size in bytes."""
    names = {f".{t}.{f}.part" for t in tables for f in FORMATS} | {".trajectories.jsonl.part"}
    gone = []
    for path in sorted(out.glob(".*.part")):
        if path.name in names and path.is_file():
            size = path.stat().st_size
            path.unlink(missing_ok=True)
            gone.append((path, size))
    return gone


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A temporary name beside ``path``, renamed to it once written and flushed to disk: a
    killed export leaves the old file or none, never a truncated one (a partial ``.part``
    file is removed when the write fails, and the next export replaces a leftover one)."""
    part = path.with_name(f".{path.name}.part")
    try:
        yield part
        with part.open("rb+") as f:
            os.fsync(f.fileno())
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def _write_csv(chunks: Iterator[pd.DataFrame], path: Path) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        for i, df in enumerate(chunks):
            if "tags" in df.columns:
                df["tags"] = df["tags"].map(lambda t: t if t else "[]")
            for col in TIME_COLUMNS:
                if col in df.columns:
                    df[col] = df[col].map(_iso)
            df.to_csv(f, index=False, header=i == 0)


def _iso(value: Any) -> str:
    """``2026-12-01T12:40:05.123Z``; empty for a missing time."""
    if value is None or pd.isna(value):
        return ""
    return str(value.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")


def _write_parquet(chunks: Iterator[pd.DataFrame], path: Path, types: dict[str, str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = {
        "INTEGER": pa.int64(),
        "REAL": pa.float64(),
        "TEXT": pa.string(),
        "LIST": pa.list_(pa.string()),
        "TIMESTAMP": pa.timestamp("ms", tz="UTC"),
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
