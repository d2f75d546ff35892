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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from statelab.core import ACTING, ConfigError
from statelab.envs import env_class
from statelab.llm import MODELS, model_weights, public_spec
from statelab.run._reading import register_table
from statelab.run.config import Experiment
from statelab.run.spec import RunSpec
from statelab.run.store import Store

PROVENANCE_TABLE, OPENINGS_TABLE = "provenance", "test_openings"
register_table(
    PROVENANCE_TABLE,
    """CREATE TABLE IF NOT EXISTS provenance (
    run TEXT NOT NULL, recorded TEXT NOT NULL, model TEXT, model_hash TEXT, writer TEXT,
    writer_hash TEXT, history TEXT, history_hash TEXT
);""",
)
register_table(
    OPENINGS_TABLE,
    """CREATE TABLE IF NOT EXISTS test_openings (
    opened TEXT NOT NULL, experiment TEXT NOT NULL, config_hash TEXT NOT NULL, env TEXT,
    split TEXT, seeds TEXT, opening INTEGER, forced INTEGER, writers TEXT
);""",
)
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


def record_provenance(store: Store, runs: Iterable[RunSpec]) -> None:
    """A provenance row per run whose hashes differ from its last recorded row."""
    last: dict[str, tuple[Any, ...]] = {}
    for r in store.rows(PROVENANCE_TABLE):
        last[r["run"]] = (r["model_hash"], r["writer_hash"], r["history_hash"])
    rows = []
    for spec in runs:
        h = hashes(spec)
        if last.get(spec.key) == (h["model_hash"], h["writer_hash"], h["history_hash"]):
            continue
        rows.append({"run": spec.key, "recorded": _now(), **h})
    if rows:
        store.append({PROVENANCE_TABLE: rows})


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
    if not touched and exp.after_selection is not None:
        raise ConfigError(
            f"{exp.name}: after_selection orders a test opening after a selection, but its "
            "seeds touch no sealed test split (drop the key, or run a test split)"
        )
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


def config_hash(exp: Experiment) -> str:
    blob = json.dumps(exp.public_dump(), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
