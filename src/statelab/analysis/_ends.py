"""How each run's episodes ended: done, truncated by a per-episode limit, or failed.

An episode's ``status`` says which (:mod:`statelab.run.records`) and its ``reason`` why: for
a done one the env's end (``terminated``), its step budget (``max_steps``: the env's
protocol, not a cut) or a stop by the agent or seed 004's derail rule (``stopped``); for a
truncated one the limit (``wall_s``, ``tokens``, ``dollars``), after ``steps`` steps; for a
failed one whose error it was (``model``, ``env``, ``store``, ``error``). A truncated episode
is scored as it stands at the cut (the env's score at its last step); a failed one is not
scored. Episodes of a store written before the ``reason`` column have none
(``unrecorded``), and a limit's cut among them is still ``done``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from statelab.analysis._md import md_text
from statelab.run.records import DONE, FAILED, TRUNCATED

#: the reason of an episode stored before episodes had one
UNRECORDED = "unrecorded"
#: the sentence the report and its docs say on how truncated episodes are scored
SCORING = (
    "A truncated episode (cut by a per-episode limit, `limits:` in the config) is scored as it"
    " stands at the cut: the env's score at its last step; an episode that used up its step"
    " budget is done (that is the env's protocol), and a failed one is not scored (its steps"
    " are stored: `statelab view` shows them)."
)


def _reasons(g: pd.DataFrame) -> dict[str, int]:
    got = g["reason"] if "reason" in g.columns else pd.Series([None] * len(g), index=g.index)
    names = [r if isinstance(r, str) and r else UNRECORDED for r in got]
    return dict(sorted(Counter(names).items(), key=lambda kv: (-kv[1], kv[0])))


def episode_ends(episodes: pd.DataFrame) -> list[dict[str, Any]]:
    """One record per run (``run``, first-appearance order): episodes ``done``,
    ``truncated`` and ``failed`` (any other status counts as failed), each one's reasons by
    count (``done_by``, ``truncated_by``, ``failed_by``), and the step counts at which the
    truncated ones were cut (``truncated_at``, ascending)."""
    out = []
    for run, g in episodes.groupby("run", sort=False):
        status = g["status"]
        parts = {
            DONE: g[status == DONE],
            TRUNCATED: g[status == TRUNCATED],
            FAILED: g[~status.isin([DONE, TRUNCATED])],
        }
        rec: dict[str, Any] = {"run": run}
        for name, part in parts.items():
            rec[name] = len(part)
            rec[f"{name}_by"] = _reasons(part)
        cut = parts[TRUNCATED]
        steps = pd.to_numeric(cut["steps"], errors="coerce") if "steps" in cut else cut.index
        rec["truncated_at"] = sorted(int(s) for s in pd.Series(steps).dropna())
        out.append(rec)
    return out


def _by(counts: dict[str, int]) -> str:
    return ", ".join(f"{md_text(k)} {v}" for k, v in counts.items())


def ends_markdown(ends: list[dict[str, Any]]) -> str:
    """The report's section: a line per run with its done, truncated and failed episodes,
    and how truncated episodes are scored."""
    lines = ["## How episodes ended", ""]
    for rec in ends:
        parts = [f"{rec[DONE]} done" + (f" ({_by(rec['done_by'])})" if rec[DONE] else "")]
        cut = f"{rec[TRUNCATED]} truncated"
        if rec[TRUNCATED]:
            at = ", ".join(str(s) for s in rec["truncated_at"])
            cut += f" ({_by(rec['truncated_by'])}; cut after {at} steps)"
        parts.append(cut)
        parts.append(
            f"{rec[FAILED]} failed" + (f" ({_by(rec['failed_by'])})" if rec[FAILED] else "")
        )
        lines.append(f"- {md_text(str(rec['run']))}: {', '.join(parts)}")
    lines += ["", SCORING]
    return "\n".join(lines)


__all__ = ["SCORING", "UNRECORDED", "ends_markdown", "episode_ends"]
