"""Report sections: seed-specific tables that register themselves.

A section is ``section(store_path, out_dir, report_md) -> {name: file}``: it reads the store,
decides from the runs' component tags whether it applies, appends its Markdown to the report
and writes its own files. ``statelab report`` runs every registered section; adding a table
is one function and one ``@report_section`` line, never an edit of the report itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

Section = Callable[[Path, Path, Path], dict[str, Path]]
SECTIONS: dict[str, Section] = {}


def report_section(name: str) -> Callable[[Section], Section]:
    def deco(fn: Section) -> Section:
        if name in SECTIONS:
            raise ValueError(f"report section {name!r} registered twice")
        SECTIONS[name] = fn
        return fn

    return deco
