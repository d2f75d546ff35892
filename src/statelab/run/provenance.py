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
- :func:`open_test` records the opening in the store's ``test_openings`` table and in the
  ledger ``<out>/test-openings.jsonl`` (shared by every experiment written to that ``out``):
  when, the config and its hash, each run's writer spelling (history and writer axes) and the
  hashes above. A second opening of the same env family's sealed split, by any experiment in
  that ``out``, is refused unless forced; the forced opening is recorded as such and the
  report says how many openings there were.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from statelab.core import ACTING, ConfigError
from statelab.envs import env_class
from statelab.llm import MODELS, model_weights, public_spec
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
LEDGER = "test-openings.jsonl"
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
    """Files and folders a spelling names: what a model spec's backend says holds its
    weights (``llamacpp:<package>`` and ``hf:<package>``: the package's GGUF); any other
    ``:``/``=``-separated part that exists on disk counts (a model directory, an adapter)."""
    out: list[Path] = []
    if spelling in MODELS:
        out += model_weights(spelling)
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
    writer = spec.writer if spec.writer != ACTING else spec.model
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
    """The env's registered name (``cooking:lag=10``: ``cooking``), parsed by its registry."""
    from statelab.envs import ENVS

    return ENVS.split(env)[0]


def ledger_entries(out: Path) -> list[dict[str, Any]]:
    path = out / LEDGER
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def config_hash(exp: Experiment) -> str:
    blob = json.dumps(exp.public_dump(), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def open_test(exp: Experiment, *, force: bool = False) -> list[dict[str, Any]]:
    """Record the opening of the experiment's sealed split(s) (refused when opened before,
    unless ``force``); the caller then runs it with ``open_test=True``. Returns the entries."""
    touched = sealed(exp)
    if not touched:
        raise ConfigError(f"{exp.name}: touches no sealed test split; run it with `statelab run`")
    out = Path(exp.out)
    before = ledger_entries(out)
    entries: list[dict[str, Any]] = []
    for env, split, seeds in touched:
        prior = [e for e in before if e["family"] == family(env) and e["split"] == split]
        if prior and not force:
            first = prior[0]
            raise ConfigError(
                f"the {split!r} split of {family(env)!r} was opened {len(prior)} time(s) "
                f"already (first {first['opened']} by {first['experiment']!r}); a second "
                "opening needs --force and is reported"
            )
        writers = sorted(
            {json.dumps(hashes(s), sort_keys=True) for s in exp.runs() if s.env == env}
        )
        entries.append(
            {
                "opened": _now(),
                "experiment": exp.name,
                "config_hash": config_hash(exp),
                "env": env,
                "family": family(env),
                "split": split,
                "seeds": [seeds[0], seeds[-1], len(seeds)],
                "opening": len(prior) + 1,
                "forced": bool(prior),
                "writers": [json.loads(w) for w in writers],
            }
        )
    out.mkdir(parents=True, exist_ok=True)
    with (out / LEDGER).open("a") as f:
        for e in entries:
            f.write(json.dumps(e, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())
    store = exp.out_dir / "store.sqlite"
    store.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(store)
    try:
        ensure_tables(db)
        with db:
            for e in entries:
                db.execute(
                    "INSERT INTO test_openings VALUES (?,?,?,?,?,?,?,?,?)",
                    (e["opened"], e["experiment"], e["config_hash"], e["env"], e["split"],
                     json.dumps(e["seeds"]), e["opening"], int(e["forced"]),
                     json.dumps(e["writers"], sort_keys=True)),
                )  # fmt: skip
    finally:
        db.close()
    return entries
