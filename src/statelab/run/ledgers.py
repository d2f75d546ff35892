"""The ledgers beside the test-split ledger (seed 003, Appendices D and E).

- ``<out>/test-audits.jsonl``: every ``statelab audit`` of a sealed test split. The seed's rule
  is that no test episode or audit is rerun after the opening: an audit of a sealed split is
  refused in one line unless asked for (``--open-test``), refused when the split was never
  opened (nothing to audit) and, once one is recorded, refused again unless ``--force`` (the
  forced one is recorded as such). The entry is written before the audit's first episode, so
  an audit killed half-way still counts; it also goes to the store's ``test_audits`` table.
- ``<out>/amendments.jsonl``: what changed after registration (the seed's A1-A5): an id, what
  changed, the stage it precedes, when, and how many test openings the ledger held then (so
  an amendment made after the opening, the seed's A5, says so). ``statelab amend`` adds one.

Both ledgers are appended under an exclusive ``fcntl`` lock on their own file (a second
writer meanwhile is refused in one line); a line that is not a whole entry is skipped.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from statelab.core import ConfigError
from statelab.run._reading import register_table
from statelab.run.config import Experiment
from statelab.run.opening import LEDGER, ledger_entries
from statelab.run.provenance import config_hash, family, sealed
from statelab.run.store import Store

AUDITS = "test-audits.jsonl"
AMENDMENTS = "amendments.jsonl"
AUDITS_TABLE = "test_audits"
register_table(
    AUDITS_TABLE,
    f"CREATE TABLE IF NOT EXISTS {AUDITS_TABLE} (started TEXT, experiment TEXT,"
    " config_hash TEXT, env TEXT, split TEXT, audit INTEGER, forced INTEGER)",
)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def read_jsonl(path: Path, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """The whole entries of a ledger (lines that are JSON objects with ``keys``)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict) and all(k in e for k in keys):
            out.append(e)
    return out


@contextmanager
def _locked(path: Path) -> Iterator[IO[bytes]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    f = path.open("ab+")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            msg = f"{path}: another statelab process is writing it now; try again after"
            raise ConfigError(msg) from None
        yield f
    finally:
        f.close()  # releases the lock


def _append(f: IO[bytes], entries: list[dict[str, Any]]) -> None:
    end = f.seek(0, os.SEEK_END)
    if end:
        f.seek(end - 1)
        if f.read(1) != b"\n":
            f.write(b"\n")  # a line cut off by a kill stays a line of its own
    for e in entries:
        f.write((json.dumps(e, sort_keys=True) + "\n").encode())
    f.flush()
    os.fsync(f.fileno())


# -- audits of a sealed split ---------------------------------------------------------------
_AUDIT_KEYS = ("started", "family", "split", "audit")


def audit_entries(out: Path) -> list[dict[str, Any]]:
    """Every recorded audit of a sealed split in ``out``."""
    return read_jsonl(Path(out) / AUDITS, _AUDIT_KEYS)


def record_audit(
    exp: Experiment, *, open_test: bool = False, force: bool = False
) -> list[dict[str, Any]]:
    """Before an audit of ``exp``: nothing when it touches no sealed split; else refuse (one
    :class:`ConfigError`) unless ``open_test``, when the split was not opened, or when it was
    audited before and not ``force``; else record the audit and return its entries."""
    touched = sealed(exp)
    if not touched:
        return []
    env, split, _ = touched[0]
    if not open_test:
        raise ConfigError(
            f"{exp.name}: its seeds are the sealed {split!r} split of {family(env)!r}; a test "
            "split is audited once, recorded: `statelab audit CONFIG --open-test`"
        )
    out = Path(exp.out)
    opened = ledger_entries(out)
    with _locked(out / AUDITS) as f:
        before = audit_entries(out)
        entries: list[dict[str, Any]] = []
        for env, split, _seeds in touched:
            fam = family(env)
            if not any(e["family"] == fam and e["split"] == split for e in opened):
                raise ConfigError(
                    f"the {split!r} split of {fam!r} was never opened in {out / LEDGER}: "
                    "there is nothing to audit (`statelab open-test CONFIG` first)"
                )
            prior = [e for e in before if e["family"] == fam and e["split"] == split]
            if prior and not force:
                raise ConfigError(
                    f"the {split!r} split of {fam!r} was audited {len(prior)} time(s) already "
                    f"(first {prior[0]['started']}); no test audit is rerun after the opening "
                    "(--force reruns it, recorded and reported)"
                )
            entries.append(
                {
                    "started": _now(),
                    "experiment": exp.name,
                    "config_hash": config_hash(exp),
                    "env": env,
                    "family": fam,
                    "split": split,
                    "audit": len(prior) + 1,
                    "forced": bool(prior),
                }
            )
        _append(f, entries)
    st = Store(exp.out_dir / "store.sqlite")
    try:
        keep = ("started", "experiment", "config_hash", "env", "split", "audit")
        st.append({AUDITS_TABLE: [{**{k: e[k] for k in keep}, "forced": int(e["forced"])}
                                  for e in entries]})  # fmt: skip
    finally:
        st.close()
    return entries


# -- amendments -----------------------------------------------------------------------------
_AMEND_KEYS = ("recorded", "id", "text")


def amendments(out: Path) -> list[dict[str, Any]]:
    """The amendments recorded in ``out``, in order."""
    return read_jsonl(Path(out) / AMENDMENTS, _AMEND_KEYS)


def add_amendment(out: Path, ident: str, text: str, *, stage: str | None = None) -> dict[str, Any]:
    """Record amendment ``ident`` (unique in ``out``): what changed (``text``), the stage it
    precedes, and how many test openings and audits ``out`` held when it was made."""
    ident, text = ident.strip(), " ".join(text.split())
    if not ident or not text:
        raise ConfigError("an amendment needs an id and a text saying what changed")
    out = Path(out)
    with _locked(out / AMENDMENTS) as f:
        if any(a["id"] == ident for a in amendments(out)):
            raise ConfigError(f"amendment {ident!r} is recorded already in {out / AMENDMENTS}")
        entry = {
            "recorded": _now(),
            "id": ident,
            "text": text,
            "stage": stage,
            "openings_before": len(ledger_entries(out)),
            "audits_before": len(audit_entries(out)),
        }
        _append(f, [entry])
    return entry


__all__ = [
    "AMENDMENTS",
    "AUDITS",
    "AUDITS_TABLE",
    "add_amendment",
    "amendments",
    "audit_entries",
    "read_jsonl",
    "record_audit",
]
