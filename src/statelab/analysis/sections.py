"""Report sections: tables that register themselves, the lab's and the plugins'.

A section is ``section(inputs) -> Blocks | None``: it reads what it needs from
:class:`ReportInputs` (the open store, its runs and episodes frames, the experiment's config,
the report folder), decides from the runs' component tags whether it applies, writes its own
files, and returns its Markdown blocks and those files; it never touches report.md. Sections
register with a declared ``order`` and :func:`statelab.analysis.reporting.make_report`
assembles the report from the main table's blocks and theirs in that order. Adding a table is
one function and one ``@report_section`` line, never an edit of the report itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.core import load_plugins
from statelab.run.store import Store


@dataclass(frozen=True)
class ReportInputs:
    """What every section may read. ``runs`` is :meth:`Store.runs_frame`, ``episodes``
    :meth:`Store.episodes_frame` (one row per episode, run key in ``run``, label in
    ``label``); ``store`` is open for any narrower read a section needs."""

    store: Store
    store_path: Path
    out_dir: Path
    config: dict[str, Any]
    runs: pd.DataFrame
    episodes: pd.DataFrame


@contextmanager
def reading(source: Store | str | Path) -> Iterator[Store]:
    """The store a section reads: the open one it was given (a section passes
    ``inputs.store``: the report opens the store once), or a path opened read-only and closed
    after (a caller outside the report)."""
    if isinstance(source, Store):
        yield source
        return
    st = Store(source, readonly=True)
    try:
        yield st
    finally:
        st.close()


@dataclass
class Blocks:
    """A section's output: Markdown blocks (each a string, in order) and the files it wrote."""

    blocks: list[str] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)


Section = Callable[[ReportInputs], "Blocks | None"]


@dataclass(frozen=True)
class Registered:
    """A registered section: its name, its place in the report, and the function."""

    name: str
    order: int
    fn: Section


SECTIONS: dict[str, Registered] = {}


def report_section(name: str, order: int) -> Callable[[Section], Section]:
    """Register ``fn`` as the report section ``name``, placed by ``order`` (ascending; the
    main table and its warnings come first, at 0)."""

    def deco(fn: Section) -> Section:
        if name in SECTIONS:
            raise ValueError(f"report section {name!r} registered twice")
        SECTIONS[name] = Registered(name, order, fn)
        return fn

    return deco


def _in_tree() -> list[str]:
    """The modules of :mod:`statelab.analysis` that declare a section (found by their
    ``@report_section`` line, so no list of them is kept by hand)."""
    root = Path(__file__).parent
    found = []
    for f in sorted(root.rglob("*.py")):
        if f.name != "sections.py" and "@report_section(" in f.read_text(encoding="utf-8"):
            parts = f.relative_to(root).with_suffix("").parts
            found.append(".".join(("statelab.analysis", *parts)).removesuffix(".__init__"))
    return found


def ordered() -> list[Registered]:
    """Every section in report order (ties: by name): the lab's own, found in its modules,
    and the plugins' (:func:`statelab.core.load_plugins`), each loaded once per process."""
    for module in _in_tree():
        importlib.import_module(module)
    load_plugins()
    return sorted(SECTIONS.values(), key=lambda r: (r.order, r.name))
