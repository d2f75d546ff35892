"""The migration of a store's run keys to the keys of canonical spellings.

A run's key is a hash of its values on each axis. Before values were held in their canonical
spelling (:meth:`~statelab.core.Registry.canonical`), ``hanoi:4`` and ``hanoi:disks=4`` were
two runs with two keys; now they are one. A store written before keeps its episodes: each
run whose stored spec has another key today is moved to that key (its ``runs`` row gets the
canonical label and axis values; every row of every table with a ``run`` column follows it).
Two old runs that are one run now merge: an episode both hold keeps the finished attempt
(the one under the new key when both finished), the other's rows are dropped.

A run already spelled canonically keeps its key (the key of a canonical spelling did not
change), so most stores are untouched; the migration runs whenever a writer opens a store
(:meth:`~statelab.run.store.Store.rekey_runs`), and a second pass finds nothing to do.

A value whose spelling was renamed (:func:`register_rename`: an option that reads no more, with the
spelling that does the same now) is read as renamed, so its run moves to the new spelling's
key the same way; the old spelling itself no longer parses.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any, Protocol

from statelab.core import MODEL_AXES, MODEL_FREE, load_plugins
from statelab.run.records import FINISHED

#: tables keyed by episode: their rows move or go with their episode
_EPISODE_TABLES = ("episodes", "steps", "calls", "queries")
#: renamed spellings, per axis: (a pattern of the old option, its replacement), applied to a
#: stored value before it is read; filled by the package that renamed them
#: (:func:`register_rename`, called from a plugin's entry point)
_RENAMED: dict[str, list[tuple[re.Pattern[str], str]]] = {}


def register_rename(axis: str, pattern: str, new: str) -> None:
    """Declare that the option matching the regular expression ``pattern`` in an ``axis``
    value reads as ``new`` now: stores written with the old spelling move to the new key, and
    a config with the old spelling is refused naming the new one."""
    rules = _RENAMED.setdefault(axis, [])
    compiled = re.compile(pattern)
    if all(p.pattern != compiled.pattern or n != new for p, n in rules):
        rules.append((compiled, new))


def renamed_value(axis: str, value: str) -> str:
    """``value`` of ``axis`` with every registered rename applied (the same text when none
    applies)."""
    load_plugins()
    for pattern, new in _RENAMED.get(axis, ()):
        value = pattern.sub(new, value)
    return value


def renamed(spec: str) -> str:
    """A stored spec (JSON) with every registered renamed spelling replaced (the
    same text when none applies)."""
    data = json.loads(spec)
    changed = False
    load_plugins()
    for axis in sorted(_RENAMED):
        value = data.get(axis)
        if not isinstance(value, str):
            continue
        value = renamed_value(axis, value)
        changed = changed or value != data[axis]
        data[axis] = value
    return json.dumps(data, sort_keys=True) if changed else spec


class SpecReader(Protocol):
    """Reads a stored run's spec (its ``spec`` column) as a spec with ``key``, ``label``,
    ``axes()`` and ``axes_values``: its values canonical, or as stored (``as_written``);
    ``RunSpec.from_stored``."""

    def __call__(self, spec: str, as_written: bool = False) -> Any: ...


def rekey(db: sqlite3.Connection, spec_of: SpecReader, axes: tuple[str, ...]) -> dict[str, str]:
    """Move every run of ``db`` whose spec has another key now to that key, in one
    transaction; ``axes`` are the ``runs`` table's axis columns. Old key -> new key of each
    run moved. A run stays where it is unless its stored spec, read as written, gives back its
    stored key (a spec that does not read, e.g. a plugin's not installed here, stays)."""
    moves: dict[str, Any] = {}
    for run, spec in db.execute("SELECT run, spec FROM runs").fetchall():
        try:
            then, now = spec_of(spec, as_written=True), spec_of(renamed(spec))
        except Exception:  # any stored spec this statelab cannot read stays as it is
            continue
        if then.key == run != now.key:  # only a spec that gives its own key back moves
            moves[run] = (now, renamed(spec))
    if not moves:
        return {}
    tables = [
        t
        for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
        if "run" in [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')]
    ]
    db.execute("BEGIN IMMEDIATE")
    try:
        for old, (now, spec) in moves.items():
            _move(db, spec_of, old, now, spec, axes, tables)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return {old: now.key for old, (now, _) in moves.items()}


def _move(
    db: sqlite3.Connection,
    spec_of: SpecReader,
    old: str,
    now: Any,
    spec: str,
    axes: tuple[str, ...],
    tables: list[str],
) -> None:
    new = now.key
    status = dict(
        ((s, r), st)
        for s, r, st in db.execute("SELECT seed, rollout, status FROM episodes WHERE run=?", (new,))
    )
    for seed, rollout, st in db.execute(
        "SELECT seed, rollout, status FROM episodes WHERE run=?", (old,)
    ).fetchall():
        key = (seed, rollout)
        if key in status and (status[key] in FINISHED or st not in FINISHED):
            continue  # the new key's attempt stays; the old one's rows go below
        for t in _EPISODE_TABLES:
            db.execute(f"DELETE FROM {t} WHERE run=? AND seed=? AND rollout=?", (new, *key))
            db.execute(
                f"UPDATE {t} SET run=? WHERE run=? AND seed=? AND rollout=?", (new, old, *key)
            )
    for t in tables:
        if t == "runs":
            continue
        if t not in _EPISODE_TABLES:  # a table of the run's own (provenance): moves whole
            db.execute(f'UPDATE OR IGNORE "{t}" SET run=? WHERE run=?', (new, old))
        db.execute(f'DELETE FROM "{t}" WHERE run=?', (old,))
    if db.execute("SELECT 1 FROM runs WHERE run=?", (new,)).fetchone():
        db.execute("DELETE FROM runs WHERE run=?", (old,))
        return
    shown = now.axes()
    data = json.loads(spec)
    for name, value in now.axes_values.items():
        if isinstance(data.get(name), str) and data[name] != MODEL_FREE:
            public = name in MODEL_AXES and shown[name] != MODEL_FREE
            data[name] = shown[name] if public else value
    canonical = json.dumps(data, sort_keys=True)
    cols = {"run": new, "label": now.label, "spec": canonical}
    if spec_of(canonical).key != new:  # keep the spec as written rather than change the run
        cols["spec"] = spec
    cols |= {a: shown[a] for a in axes if a in shown}
    sets = ", ".join(f'"{c}"=?' for c in cols)
    db.execute(f"UPDATE runs SET {sets} WHERE run=?", (*cols.values(), old))
