"""Provenance and split discipline (seed 003, Appendix D): what every run was made with, and
the sealed test split that only ``statelab open-test`` may run.

- :func:`record_provenance`: every run of an experiment records, in the store's
  ``provenance`` table, the SHA-256 of its model file (a ``llamacpp:`` package or GGUF path,
  a ``scripted:`` file, any spelling argument that is a file or folder), of its writer model,
  and of every file or folder its history spelling names (a trained adapter,
  ``bounded:dssr=<adapter dir>:B``: the hash over the folder's files, names included). A row
  is added when the hashes differ from the run's last row, so a resumed run with a changed
  model file shows both.
- A split named in an env class's ``sealed_splits`` (``cooking``: ``test``) is *sealed*: an
  experiment whose seeds touch it is refused by ``statelab run`` (and by ``run_experiment``
  unless ``open_test=True``) with one line naming ``statelab open-test``.
- :mod:`statelab.run.opening` records an opening of a sealed split (``statelab open-test``)
  in the ledger ``<out>/test-openings.jsonl`` and the store's ``test_openings`` table, once
  its first episode is stored.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from statelab.core import ConfigError
from statelab.envs import env_class
from statelab.llm import public_spec
from statelab.run.config import Experiment, RunSpec

DDL = """
CREATE TABLE IF NOT EXISTS provenance (
    run TEXT NOT NULL, recorded TEXT NOT NULL, model TEXT, model_hash TEXT, writer TEXT,
    writer_hash TEXT, history TEXT, history_hash TEXT
);
CREATE TABLE IF NOT EXISTS test_openings (
    opened TEXT NOT NULL, experiment TEXT NOT NULL, config_hash TEXT NOT NULL, env TEXT,
    split TEXT, seeds TEXT, opening INTEGER, forced INTEGER, writers TEXT
);
"""
_HASHES: dict[tuple[str, int, int], str] = {}


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, cached in this process by (path, size, mtime)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        h = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _HASHES[key] = h.hexdigest()
    return _HASHES[key]


def path_sha256(path: Path) -> str:
    """A file's SHA-256, or a folder's: SHA-256 over its files' relative paths and hashes."""
    if path.is_file():
        return file_sha256(path)
    h = hashlib.sha256()
    for p in sorted(q for q in path.rglob("*") if q.is_file()):
        h.update(f"{p.relative_to(path).as_posix()}\0{file_sha256(p)}\n".encode())
    return h.hexdigest()


def named_paths(spelling: str) -> list[Path]:
    """Files and folders a spelling names: ``llamacpp:<package>`` and ``hf:<package>``
    resolve to the package's GGUF; any other ``:``/``=``-separated part that exists on disk
    counts (a model directory, an adapter folder)."""
    out: list[Path] = []
    name, _, arg = spelling.partition(":")
    if name == "llamacpp" and arg and not arg.startswith("hf:"):
        try:
            from statelab.llm.llamacpp import resolve_model

            out.append(resolve_model(arg.split("?")[0]))
        except (ConfigError, ImportError):
            pass
    if name == "hf" and arg:
        from statelab.llm.transformers_backend import gguf_of

        try:
            gguf = gguf_of(arg.split("?")[0])
        except ConfigError:
            gguf = None
        if gguf is not None:
            out.append(gguf)
    for part in re.split(r"[:=?&,#]", spelling):
        if part and ("/" in part or "." in part) and Path(part).expanduser().exists():
            p = Path(part).expanduser()
            if p not in out:
                out.append(p)
    return out


def spelling_hash(spelling: str) -> str | None:
    """One hash for everything a spelling names on disk (None: it names nothing)."""
    paths = named_paths(spelling)
    if not paths:
        return None
    if len(paths) == 1:
        return path_sha256(paths[0])
    return hashlib.sha256("".join(path_sha256(p) for p in paths).encode()).hexdigest()


def hashes(spec: RunSpec) -> dict[str, Any]:
    """Model, writer and history spellings of a run with the hashes of what they name."""
    writer = spec.writer if spec.writer != "acting" else spec.model
    return {
        "model": public_spec(spec.model),
        "model_hash": spelling_hash(spec.model) if spec.uses_model else None,
        "writer": public_spec(spec.writer),
        "writer_hash": spelling_hash(writer) if spec.uses_model else None,
        "history": spec.history,
        "history_hash": spelling_hash(spec.history),
    }


def ensure_tables(db: sqlite3.Connection) -> None:
    db.executescript(DDL)


def record_provenance(db: sqlite3.Connection, runs: Iterable[RunSpec]) -> None:
    """A provenance row per run whose hashes differ from its last recorded row."""
    ensure_tables(db)
    for spec in runs:
        h = hashes(spec)
        last = db.execute(
            "SELECT model_hash, writer_hash, history_hash FROM provenance WHERE run=?"
            " ORDER BY rowid DESC LIMIT 1",
            (spec.key,),
        ).fetchone()
        if last is not None and tuple(last) == (
            h["model_hash"], h["writer_hash"], h["history_hash"]
        ):  # fmt: skip
            continue
        db.execute(
            "INSERT INTO provenance VALUES (?,?,?,?,?,?,?,?)",
            (spec.key, _now(), h["model"], h["model_hash"], h["writer"], h["writer_hash"],
             h["history"], h["history_hash"]),
        )  # fmt: skip


# -- the sealed split -------------------------------------------------------------------
def sealed(exp: Experiment) -> list[tuple[str, str, list[int]]]:
    """(env, split, config seeds in it) for every sealed split the experiment touches."""
    out = []
    for env in exp.grid.env:
        cls = env_class(env)
        seeds = set(exp.env_seeds(env))
        for split in getattr(cls, "sealed_splits", ()):
            inside = sorted(seeds & set(cls.splits.get(split, ())))
            if inside:
                out.append((env, split, inside))
    return out


def guard(exp: Experiment) -> None:
    """Refuse, in one line, an experiment that would run a sealed split."""
    touched = sealed(exp)
    if touched:
        env, split, seeds = touched[0]
        raise ConfigError(
            f"{exp.name}: seeds {seeds[0]}..{seeds[-1]} of env {env!r} are its sealed "
            f"{split!r} split; a test split runs only through `statelab open-test CONFIG`"
        )


def family(env: str) -> str:
    return env.split(":")[0]


def config_hash(exp: Experiment) -> str:
    blob = json.dumps(exp.public_dump(), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
