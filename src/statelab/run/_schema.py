"""The store's table definitions, by layout, and its schema version.

A store records its layout in ``PRAGMA user_version``:

- 0 or 1, the *inline* layout (every statelab before schema 2): a step's ``view`` and
  ``memory`` and a call's ``messages`` are text cells of their own, so a full history stores
  every earlier step again at every step (bytes grow with the square of the episode length).
  Such a store still opens, reads, and resumes in its own layout.
- 2, the *text-table* layout: those cells hold references (``view_ref``, ``memory_ref``,
  ``messages_ref``) into ``texts``, a content-addressed table where each distinct text is kept
  once, as the rest of an earlier text it extends (a shared prefix is not stored again), and
  compressed when that saves bytes. Readers get the same frames from both layouts.

A store of a higher version than :data:`SCHEMA_VERSION` was written by a newer statelab and
is refused (``statelab`` cannot know what it changed).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from statelab.core import ConfigError

#: the layout this statelab writes into a new store
SCHEMA_VERSION = 2
#: the columns that hold references into ``texts`` in layout 2, by table: frames name them
#: as the inline layout does
REF_COLUMNS: dict[str, tuple[str, ...]] = {"steps": ("view", "memory"), "calls": ("messages",)}

_HEAD = """
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
    finished REAL DEFAULT (julianday('now')), cost REAL, reason TEXT, sampling_seed INTEGER,
    seeding INTEGER, start_state TEXT,
    PRIMARY KEY (run, seed, rollout)
);
CREATE TABLE IF NOT EXISTS queries (
    run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL DEFAULT 0,
    t INTEGER NOT NULL, i INTEGER NOT NULL,
    query TEXT, answer TEXT,
    PRIMARY KEY (run, seed, rollout, t, i)
);
"""
_STEPS = """
CREATE TABLE IF NOT EXISTS steps (
    run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL DEFAULT 0,
    t INTEGER NOT NULL,
    view{r} TEXT, grounding TEXT, reply TEXT, action TEXT, parsed INTEGER, valid INTEGER,
    reward REAL, observation TEXT, memory{r} TEXT, agent_calls INTEGER, agent_in INTEGER,
    agent_out INTEGER, aux_in INTEGER, aux_out INTEGER, latency REAL, overhead REAL, gold TEXT,
    meta TEXT, env_state TEXT,
    PRIMARY KEY (run, seed, rollout, t)
);
CREATE TABLE IF NOT EXISTS calls (
    run TEXT NOT NULL, seed INTEGER NOT NULL, rollout INTEGER NOT NULL DEFAULT 0,
    t INTEGER NOT NULL, i INTEGER NOT NULL,
    kind TEXT, messages{r} TEXT, text TEXT, input_tokens INTEGER, output_tokens INTEGER,
    latency REAL, cached INTEGER, decoding TEXT, cost REAL, original_latency REAL,
    PRIMARY KEY (run, seed, rollout, t, i)
);
"""
#: columns added after a store layout first shipped, by table: a store written before them
#: gains them (NULL in its earlier rows) when a run writes to it again. An episode's
#: ``reason`` (why it ended) came with the ``truncated`` status: an older store's episodes keep
#: the status they were written with (a limit's cut among them stays ``done``)
ADDED_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "episodes": (
        ("cost", "REAL"),
        ("reason", "TEXT"),
        ("sampling_seed", "INTEGER"),
        ("seeding", "INTEGER"),
        ("start_state", "TEXT"),
    ),
    "calls": (("decoding", "TEXT"), ("cost", "REAL"), ("original_latency", "REAL")),
    # the env's state fingerprints (issue 33): an older store's rows have none, and its
    # reports fall back to the heuristics they had (see statelab.analysis.caveats)
    "steps": (("env_state", "TEXT"),),
}
#: each distinct text once: ``text = <base's text>[:keep] + body`` (``body`` zlib-compressed
#: when ``z``); ``depth`` counts the bases under it (bounded, so one text reads in few rows)
TEXTS = """
CREATE TABLE IF NOT EXISTS texts (
    h TEXT PRIMARY KEY, base TEXT, keep INTEGER NOT NULL DEFAULT 0,
    depth INTEGER NOT NULL DEFAULT 0, z INTEGER NOT NULL DEFAULT 0, body BLOB NOT NULL
);
"""
#: the inline layout (schema 0/1): what statelab wrote before schema 2
INLINE = _HEAD + _STEPS.format(r="")
#: the text-table layout (schema 2)
TEXT_TABLE = _HEAD + _STEPS.format(r="_ref") + TEXTS


def open_db(path: Path, *, write: bool) -> sqlite3.Connection:
    """A connection to ``path``: read-write (made when missing), or read-only without
    writing anything (``mode=ro``; ``immutable`` when the folder cannot take SQLite's
    shared-memory file)."""
    try:
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
            return sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        if not path.is_file():
            raise ConfigError(f"{path}: no store there")
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            db.close()  # a WAL store in a read-only folder: no -shm can be made
        except sqlite3.DatabaseError as e:  # not an SQLite file at all
            db.close()
            raise ConfigError(f"{path}: not a statelab store ({e})") from None
        return sqlite3.connect(
            uri + "&immutable=1", uri=True, check_same_thread=False, isolation_level=None
        )
    except (OSError, sqlite3.Error) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ConfigError(f"{path}: cannot open the store ({reason})") from None


def schema_version(db: sqlite3.Connection, path: Path) -> int:
    """The store's schema version; a newer one than this statelab's is refused."""
    try:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as e:
        raise ConfigError(f"{path}: not a statelab store ({e})") from None
    if version > SCHEMA_VERSION:
        raise ConfigError(
            f"{path}: written by a newer statelab (store schema {version}; this statelab knows"
            f" up to {SCHEMA_VERSION}): upgrade statelab, or write to a new out folder"
        )
    return version


def check_integrity(db: sqlite3.Connection, path: Path) -> None:
    """Refuse to write into a damaged file (SQLite's ``quick_check``): its episodes cannot
    be trusted, so a resumed run would count and keep what it cannot read."""
    try:
        got = [str(r[0]) for r in db.execute("PRAGMA quick_check(3)").fetchall()]
    except sqlite3.DatabaseError as e:
        got = [str(e)]
    if got != ["ok"]:
        lines = [x for x in "\n".join(got).splitlines() if x.strip() and "***" not in x]
        first = " ".join((lines or got)[0].split())[:160]
        raise ConfigError(
            f"{path}: the store is damaged (SQLite integrity check: {first}); restore a copy"
            " or write this experiment to a new out folder"
        )
