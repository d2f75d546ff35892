"""Opening a sealed test split (seed 003, Appendix D): ``statelab open-test``.

An :class:`Opening` is begun before the run and *counts when its first episode is stored*:
only then is it written to the ledger ``<out>/test-openings.jsonl`` (shared by every
experiment written to that ``out``) and to the store's ``test_openings`` table, with when,
the config and its hash, each run's writer spelling (history and writer axes) and the hashes
of what they name (:func:`~statelab.run.provenance.hashes`). A run that stores no episode (it
was killed first, its store was locked by a runner, every episode failed) opens nothing.

From the check of earlier openings to the record of this one, the opening holds an exclusive
``fcntl`` lock on the ledger: a second ``open-test`` on the same ``out`` meanwhile is refused
in one line, so two openings started together never both count as the first; the lock dies
with the process. A second opening of an env family's sealed split, by any experiment in that
``out``, is refused unless forced; a forced one is recorded as such, and the report says how
many there were. An experiment with ``after_selection`` is opened only after that selection
(recorded in ``<out>/selections.jsonl`` with a gate evaluated on it, its validation store
unchanged since: :func:`~statelab.run.ledgers.selection_refusal`), or forced; the entry
records the selection (or why it was forced). A plugin may add checks of its own
(:func:`register_opening_check`), refused and forced alike. A ledger line that is not a
whole entry (a write cut off) is skipped with a warning; the next entry starts on a line of
its own.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from statelab.core import ConfigError
from statelab.run.config import Experiment
from statelab.run.ledgers import LEDGER, read_ledger, selection_refusal
from statelab.run.provenance import OPENINGS_TABLE, config_hash, family, hashes, sealed
from statelab.run.records import EpisodeRecord
from statelab.run.store import Store

#: a check a plugin adds to every opening (:func:`register_opening_check`): given the
#: experiment and the selection it follows (its ledger entry, or None), why it must not open
#: (one line), or None
OpeningCheck = Callable[[Experiment, "dict[str, Any] | None"], "str | None"]
_CHECKS: dict[str, OpeningCheck] = {}


def register_opening_check(name: str, check: OpeningCheck) -> None:
    """Add ``check`` to every opening (a plugin's: e.g. that the adapters it tests were trained
    from the selection the opening follows); a refusal is one line, ``--force`` records it."""
    _CHECKS[name] = check


def opening_checks() -> dict[str, OpeningCheck]:
    """Every registered check (the plugins loaded first)."""
    from statelab.core import load_plugins

    load_plugins()
    return dict(_CHECKS)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class Opening:
    """The opening of an experiment's sealed split(s), counted at its first stored episode.

    ``with Opening(exp, force=...) as o: run_experiment(exp, open_test=True,
    on_stored=o.stored)``; then ``o.recorded`` holds the entries written (none when no
    episode was stored) and ``o.warnings`` what was wrong with the ledger."""

    def __init__(self, exp: Experiment, *, force: bool = False) -> None:
        self.touched = sealed(exp)
        if not self.touched:
            raise ConfigError(
                f"{exp.name}: touches no sealed test split; run it with `statelab run`"
            )
        self.exp, self.force = exp, force
        self.out = Path(exp.out)
        self.recorded: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self._file: IO[bytes] | None = None
        self._pending: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Opening:
        self.begin()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def begin(self) -> None:
        """Lock the ledger and check earlier openings (refused: one :class:`ConfigError`)."""
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / LEDGER
        f = path.open("ab+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise ConfigError(
                f"{path}: another `statelab open-test` is opening a sealed split of {self.out}"
                " now (an opening counts once its first episode is stored); try again after"
            ) from None
        self._file = f
        try:
            before, self.warnings = read_ledger(self.out)
            self._pending = self._entries(before)
        except BaseException:
            self.close()
            raise

    def _selection(self) -> dict[str, Any]:
        """What the opening records of the selection it follows (``after_selection``):
        refused in one line when it is missing, unevaluated or stale, unless forced."""
        entry, why = selection_refusal(self.exp)
        if why is None:
            for check in opening_checks().values():
                why = check(self.exp, entry)
                if why is not None:
                    break
        if why is not None and not self.force:
            raise ConfigError(why)
        if self.exp.after_selection is None:
            return {"selection_forced": why} if why else {}
        got = {"selection": None if entry is None else {
            k: entry[k] for k in ("id", "selected", "recorded")
        } | {"fingerprint": entry["source"]["fingerprint"]}}  # fmt: skip
        return got | ({"selection_forced": why} if why else {})

    def _entries(self, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
        entries = []
        selection = self._selection()
        for env, split, seeds in self.touched:
            prior = [e for e in before if e["family"] == family(env) and e["split"] == split]
            if prior and not self.force:
                first = prior[0]
                raise ConfigError(
                    f"the {split!r} split of {family(env)!r} was opened {len(prior)} time(s) "
                    f"already (first {first['opened']} by {first['experiment']!r}); a second "
                    "opening needs --force and is reported"
                )
            writers = sorted(
                {json.dumps(hashes(s), sort_keys=True) for s in self.exp.runs() if s.env == env}
            )
            entries.append(
                {
                    "experiment": self.exp.name,
                    "config_hash": config_hash(self.exp),
                    "env": env,
                    "family": family(env),
                    "split": split,
                    "seeds": [seeds[0], seeds[-1], len(seeds)],
                    "opening": len(prior) + 1,
                    "forced": bool(prior) or "selection_forced" in selection,
                    "writers": [json.loads(w) for w in writers],
                    **selection,
                }
            )
        return entries

    def stored(self, ep: EpisodeRecord) -> None:
        """An episode was stored: the first one records the opening and frees the ledger."""
        with self._lock:
            if not self._pending or self._file is None:
                return
            now = _now()
            entries = [{"opened": now, **e} for e in self._pending]
            self._append(entries)
            self._insert(entries)
            self.recorded, self._pending = entries, []
            self.close()

    def _append(self, entries: list[dict[str, Any]]) -> None:
        f = self._file
        assert f is not None
        end = f.seek(0, os.SEEK_END)
        if end:  # a line cut off by a kill stays a line of its own
            f.seek(end - 1)
            if f.read(1) != b"\n":
                f.write(b"\n")  # (appending: every write goes to the end)
        for e in entries:
            f.write((json.dumps(e, sort_keys=True) + "\n").encode())
        f.flush()
        os.fsync(f.fileno())

    def _insert(self, entries: list[dict[str, Any]]) -> None:
        rows = [
            {**{k: e[k] for k in ("opened", "experiment", "config_hash", "env", "split")},
             "seeds": json.dumps(e["seeds"]), "opening": e["opening"],
             "forced": int(e["forced"]), "writers": json.dumps(e["writers"], sort_keys=True)}
            for e in entries
        ]  # fmt: skip
        st = Store(self.exp.out_dir / "store.sqlite")
        try:
            st.append({OPENINGS_TABLE: rows})
        finally:
            st.close()

    def close(self) -> None:
        """Free the ledger (an opening with no stored episode is not recorded)."""
        if self._file is not None:
            self._file.close()  # closing the file releases its lock
            self._file = None


__all__ = ["Opening", "OpeningCheck", "opening_checks", "register_opening_check"]
