"""Seed 003's cells read from a store: one row per finished cooking episode (rollout 0), keyed
on the history form, the budget, F′ *and* the reader model and the writer, so that two readers
(R1, R2) or two writers in one store are two cells, never one overwriting the other.

Rollouts other than 0 (a continuation's episodes, repeated rollouts) are not games of a cell;
failed episodes are counted (per run) and left out of every statistic, and the report says
how many there were.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from statelab.analysis._components import arguments, tags
from statelab.analysis.audit.measures import budget_of, form_of
from statelab.run.records import FINISHED
from statelab.run.store import Store
from statelab_seed003.analysis.audit import lag_of


@dataclass
class Cells:
    """The episodes of a store's cooking runs and what was left out."""

    #: run, history, form, lag, budget, seed, success, privileged, model, writer, protocol, row
    eps: list[dict[str, Any]] = field(default_factory=list)
    #: episodes that failed (run -> count), left out of every statistic
    failed: dict[str, int] = field(default_factory=dict)
    #: run -> its row label (the key audit rows are matched on)
    row_of_run: dict[str, str] = field(default_factory=dict)
    #: run -> its history, form, lag, budget, model, writer, protocol (filler), row
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def protocols(self) -> list[str | None]:
        """The filler protocols to print apart: each one when the store holds several, else
        ``[None]`` (one table, as before)."""
        found = sorted({str(v["protocol"]) for v in self.runs.values()})
        return list(found) if len(found) > 1 else [None]

    def only(self, protocol: str | None) -> Cells:
        """The cells of one filler protocol (``None``: all of them)."""
        if protocol is None:
            return self
        runs = {r: v for r, v in self.runs.items() if v["protocol"] == protocol}
        return Cells(
            [e for e in self.eps if e["run"] in runs],
            {r: n for r, n in self.failed.items() if r in runs},
            {r: x for r, x in self.row_of_run.items() if r in runs},
            runs,
        )


def row_label(
    form: str, model: str, writer: str, several: bool, protocol: str | None = None
) -> str:
    """A table row: the form, with the reader model and the writer when the store holds more
    than one (model, writer) pair, and the filler protocol (``post``: F′, the default;
    ``pre``: the original F) when it holds more than one."""
    label = f"{form} · reader {model} · writer {writer}" if several else form
    return f"{label} · filler {protocol}" if protocol else label


def protocol_of(env: str, stored: Any = None) -> str:
    """The filler protocol of a cooking run's env: ``post`` (F′, after the reveal: the
    default) or ``pre`` (the original F, before it)."""
    return str(arguments("env", env, stored).get("filler") or "post")


def _tags(run: dict[str, Any]) -> set[str]:
    return set(json.loads(run["tags"] or "[]"))


def _llm_written(history: str, stored: Any) -> bool:
    got = tags("history", history, stored)
    return "needs-model" in got and "reads-privileged" not in got


def cooking_cells(st: Store) -> Cells:
    """Every finished rollout-0 episode of the store's cooking runs (not the random floor)."""
    out = Cells()
    if "tags" not in st.columns("runs"):
        return out  # a store older than run tags: no seed 003 runs in it
    runs: dict[str, dict[str, Any]] = {}
    for r in st.rows("runs", ["run", "spec", "tags", "components"]):
        spec = json.loads(r["spec"] or "{}")
        env = str(spec.get("env", ""))
        lag = lag_of(env, r["components"])
        if lag is None or "floor" in _tags(r):  # the random floor: no form
            continue
        expert = "expert" in _tags(r)
        history = "expert" if expert else str(spec.get("history", "full"))
        runs[r["run"]] = {
            "history": history,
            "form": form_of(history),
            "lag": lag,
            "budget": budget_of(history, r["components"]),
            "privileged": "reads-privileged" in _tags(r),
            # an LLM writes the state (the history needs a model and reads nothing privileged)
            "llm_written": _llm_written(history, r["components"]),
            "model": str(spec.get("model", "")),
            "writer": str(spec.get("writer", "")),
            "protocol": protocol_of(env, r["components"]),
        }
    pairs = {(v["model"], v["writer"]) for v in runs.values() if v["form"] != "expert"}
    several = len(pairs) > 1
    protocols = len({v["protocol"] for v in runs.values()}) > 1
    for run, v in runs.items():
        expert = v["form"] == "expert"
        tag = v["protocol"] if protocols else None
        v["row"] = (
            f"expert · filler {tag}" if expert and tag else "expert" if expert
            else row_label(v["form"], v["model"], v["writer"], several, tag)
        )  # fmt: skip
        out.row_of_run[run] = v["row"]
    out.runs = runs
    cols = ["run", "seed", "success", "status", "rollout"]
    for e in st.rows("episodes", cols):
        if e["run"] not in runs or int(e["rollout"] or 0) != 0:
            continue
        if e["status"] not in FINISHED:
            out.failed[e["run"]] = out.failed.get(e["run"], 0) + 1
            continue
        out.eps.append(
            {
                "run": e["run"],
                **runs[e["run"]],
                "seed": int(e["seed"]),
                "success": float(bool(e["success"])),
            }
        )
    return out


def audit_rows(st: Store, row_of_run: dict[str, str], table: str) -> list[dict[str, Any]]:
    """The audit table's rows, each with the ``row`` of its run."""
    return [
        {**r, "row": row_of_run.get(str(r["run"]), form_of(str(r["history"])))}
        for r in st.rows(table)
    ]


def of_runs(rows: Iterable[dict[str, Any]], cells: Cells) -> list[dict[str, Any]]:
    """The audit rows of ``cells``' runs (after :meth:`Cells.only`: one protocol's)."""
    return [r for r in rows if str(r["run"]) in cells.runs]


def tag_headers(md: list[str], protocol: str | None) -> list[str]:
    """``md`` with every section heading marked with the filler protocol (none: as it is)."""
    if protocol is None:
        return md
    return [f"{x} · filler {protocol}" if x.startswith("### ") else x for x in md]


def by_protocol(
    cells: Cells, audit: list[dict[str, Any]]
) -> list[tuple[str | None, Cells, list[dict[str, Any]]]]:
    """(protocol, its cells, its audit rows) for each filler protocol of a store holding
    several, else one entry (``None``, everything): no table mixes F and F′ episodes."""
    out = []
    for p in cells.protocols():
        mine = cells.only(p)
        out.append((p, mine, audit if p is None else of_runs(audit, mine)))
    return out


def by_game(eps: Iterable[dict[str, Any]], **where: Any) -> dict[int, float]:
    """Success per game of the episodes matching ``where`` (one per game in a cell)."""
    return {e["seed"]: e["success"] for e in eps if all(e.get(k) == v for k, v in where.items())}


__all__ = [
    "Cells",
    "audit_rows",
    "by_game",
    "by_protocol",
    "cooking_cells",
    "of_runs",
    "protocol_of",
    "row_label",
    "tag_headers",
]
