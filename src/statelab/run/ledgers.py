"""The ledgers beside the test-split ledger (seed 003, Appendices D and E).

- ``<out>/test-audits.jsonl``: every ``statelab audit`` of a sealed test split. The seed's rule
  is that no test episode or audit is rerun after the opening: an audit of a sealed split is
  refused in one line unless asked for (``--open-test``), refused when the split was never
  opened (nothing to audit) and, once one is recorded, refused again unless ``--force`` (the
  forced one is recorded as such). The entry is written before the audit's first episode, so
  an audit killed half-way still counts; it also goes to the store's ``test_audits`` table.
- ``<out>/selections.jsonl``: selections made on validation before a test opening (the seed's
  "selection is completed before the test split is opened once"): an id, what was selected,
  the ranking, the validation store and its fingerprint (:func:`store_fingerprint`), and the
  validation gates evaluated on the selection. The command that selects writes it
  (:func:`record_selection`); an experiment with ``after_selection: <id>`` is opened only
  after it (:func:`selection_refusal`, checked by :class:`~statelab.run.opening.Opening`).
- ``<out>/amendments.jsonl``: what changed after registration (the seed's A1-A5): an id, what
  changed, the stage it precedes, when, and how many test openings the ledger held then (so
  an amendment made after the opening, the seed's A5, says so). ``statelab amend`` adds one.

The ledgers are appended under an exclusive ``fcntl`` lock on their own file (a second
writer meanwhile is refused in one line); a line that is not a whole entry is skipped.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from statelab.core import ConfigError
from statelab.run._reading import register_table
from statelab.run.config import Experiment
from statelab.run.provenance import config_hash, family, sealed
from statelab.run.store import Store

#: the test-split ledger (:class:`statelab.run.opening.Opening` writes it)
LEDGER = "test-openings.jsonl"
#: keys every ledger entry has (a line without them is not an entry)
_KEYS = ("opened", "experiment", "family", "split", "opening")
AUDITS = "test-audits.jsonl"
AMENDMENTS = "amendments.jsonl"
SELECTIONS = "selections.jsonl"
AUDITS_TABLE = "test_audits"
register_table(
    AUDITS_TABLE,
    f"CREATE TABLE IF NOT EXISTS {AUDITS_TABLE} (started TEXT, experiment TEXT,"
    " config_hash TEXT, env TEXT, split TEXT, audit INTEGER, forced INTEGER)",
)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def read_ledger(out: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The ledger's entries, and one warning per line that is not a whole entry."""
    path = out / LEDGER
    if not path.is_file():
        return [], []
    entries: list[dict[str, Any]] = []
    warnings: list[str] = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except ValueError:
            e = None
        if isinstance(e, dict) and all(k in e for k in _KEYS):
            entries.append(e)
        else:
            warnings.append(f"{path}: line {n} is not a whole entry (a write cut off?); skipped")
    return entries, warnings


def ledger_entries(out: Path) -> list[dict[str, Any]]:
    """The ledger's whole entries (:func:`read_ledger` without its warnings)."""
    return read_ledger(out)[0]


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


# -- selections made before a test opening ----------------------------------------------------
_SELECT_KEYS = ("recorded", "id", "selected", "source", "evaluated")
#: the columns of an episode that a selection reads (its outcome), in the fingerprint
_OUTCOME = ("run", "seed", "rollout", "status", "success", "score", "reward", "steps")


def store_fingerprint(path: Path) -> str:
    """A store's episodes as a selection read them: ``sha256:<hex>/<n>`` over every episode's
    run key, seed, rollout, status, success, score, reward and steps in key order, so that
    any episode added, rerun or changed gives another fingerprint and nothing else does (the
    store's texts, calls and audits, its file's layout)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no store to fingerprint")
    st = Store(p, readonly=True)
    try:
        rows = st.rows("episodes", list(_OUTCOME), order="run, seed, rollout")
    finally:
        st.close()
    h = hashlib.sha256()
    for r in rows:
        h.update((json.dumps([r[c] for c in _OUTCOME], default=str) + "\n").encode())
    return f"sha256:{h.hexdigest()}/{len(rows)}"


def selections(out: Path) -> list[dict[str, Any]]:
    """The selections recorded in ``out``, in order."""
    return read_jsonl(Path(out) / SELECTIONS, _SELECT_KEYS)


def latest_selection(out: Path, ident: str) -> dict[str, Any] | None:
    """The last selection recorded in ``out`` under ``ident`` (the one that counts)."""
    got = [e for e in selections(out) if e["id"] == ident]
    return got[-1] if got else None


def record_selection(
    out: Path,
    ident: str,
    selected: str,
    *,
    store: Path,
    evaluated: list[dict[str, Any]],
    ranking: list[dict[str, Any]] | None = None,
    by: str = "",
) -> tuple[dict[str, Any], bool]:
    """Record that ``selected`` was selected under ``ident`` from the validation ``store``
    (with its fingerprint), with the gates ``evaluated`` on it (``{"id", "verdict", ...}``)
    and the ``ranking``; ``by`` is the command that made it. Returns the entry and whether it
    was written: the same selection from the same store with the same verdicts as the last
    entry is not written again. Once a test split of ``out`` was opened, a selection other
    than the one recorded before it is refused (one :class:`ConfigError`): an amendment says
    why, then ``--force``-d openings are reported."""
    out, store = Path(out), Path(store)
    if not ident.strip() or not selected.strip():
        raise ConfigError("a selection needs an id and what was selected")
    entry = {
        "recorded": _now(),
        "id": ident,
        "selected": selected,
        "source": {"store": str(store), "fingerprint": store_fingerprint(store)},
        "evaluated": evaluated,
        "ranking": ranking or [],
        "by": by,
        "openings_before": len(ledger_entries(out)),
    }
    same = ("selected", "source", "evaluated", "ranking")
    with _locked(out / SELECTIONS) as f:
        last = latest_selection(out, ident)
        if last is not None and all(last.get(k) == entry[k] for k in same):
            return last, False
        if entry["openings_before"] and last is not None and last["selected"] != selected:
            raise ConfigError(
                f"{out / SELECTIONS}: {ident!r} selected {last['selected']!r} before the test "
                f"opening ({last['recorded']}); validation now selects {selected!r}, which is "
                "not recorded: the test split was opened after the recorded selection"
            )
        _append(f, [entry])
    return entry, True


def selection_refusal(exp: Experiment) -> tuple[dict[str, Any] | None, str | None]:
    """The selection ``exp`` is opened after (``after_selection``) and why its opening must be
    refused: no such selection in ``<out>/selections.jsonl``, no gate evaluated on it, or
    its validation store changed since (another fingerprint); ``(entry, None)`` when it may
    open, ``(None, None)`` when the experiment names no selection."""
    ident = exp.after_selection
    if ident is None:
        return None, None
    out = Path(exp.out)
    e = latest_selection(out, ident)
    if e is None:
        return None, (
            f"{exp.name} is opened after the selection {ident!r}, which is not recorded in "
            f"{out / SELECTIONS}: make the selection on validation and evaluate its gates "
            "first (or --force, recorded)"
        )
    if not e["evaluated"]:
        return e, (
            f"the selection {ident!r} ({e['selected']}, {e['recorded']}) has no gate "
            "evaluated on it: evaluate the validation gates first (or --force, recorded)"
        )
    where = Path(e["source"]["store"])
    now = store_fingerprint(where) if where.is_file() else "no store"
    if now != e["source"]["fingerprint"]:
        return e, (
            f"the validation store {where} changed since the selection {ident!r} was recorded "
            f"({e['recorded']}: {e['source']['fingerprint']}, now {now}): select again (or "
            "--force, recorded)"
        )
    return e, None


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
    "LEDGER",
    "SELECTIONS",
    "add_amendment",
    "amendments",
    "audit_entries",
    "latest_selection",
    "ledger_entries",
    "read_jsonl",
    "read_ledger",
    "record_audit",
    "record_selection",
    "selection_refusal",
    "selections",
    "store_fingerprint",
]
