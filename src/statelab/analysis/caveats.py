"""Warnings a report prints where a run's numbers mean less than they seem (issue 22).

Each names the run (or env) and the figure that triggered it, against a stated level:

- **collapsed policy**: one distinct action in more than :data:`COLLAPSE_SHARE` of a run's
  scored episodes, or an invalid-action rate above :data:`INVALID_LEVEL`; its score then
  says where the env left the agent, not what its representation did;
- **at the random floor**: a run's mean is at or below its env's random floor, or the
  bootstrap interval of the difference from the floor includes 0;
- **one start state**: every episode of every run on an env began from the same first view
  (read from the stored steps), so the seeds vary the sampling only;
- **near-constant memory**: a run's stored memory states hold at most
  :data:`CONSTANT_MEMORY` distinct texts per state (at least :data:`MIN_STATES` states).

Reference rows (the privileged expert, the random floor) are not warned about.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from statelab.analysis._md import md_cell
from statelab.analysis._summary import is_reference, varying_axes

#: a run collapsed when more than this share of its episodes played one distinct action
COLLAPSE_SHARE = 0.5
#: ... or when its mean invalid-action rate is above this
INVALID_LEVEL = 0.5
#: a memory is near-constant at or below this many distinct texts per stored state
CONSTANT_MEMORY = 0.1
#: ... counted over at least this many stored states
MIN_STATES = 20


@dataclass(frozen=True)
class Caveat:
    """One warning: its ``kind``, the ``subject`` (a run label or an env), the ``figure``
    that triggered it, as printed, and the ``text`` of the warning."""

    kind: str
    subject: str
    figure: str
    text: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(float(value))


def collapsed(rec: Mapping[str, Any]) -> Caveat | None:
    """A run that played one action in most episodes, or mostly invalid ones."""
    one, invalid = rec.get("one_action"), rec.get("invalid_rate")
    parts = []
    if _finite(one) and float(one) > COLLAPSE_SHARE:
        parts.append(f"one distinct action in {float(one):.0%} of episodes")
    if _finite(invalid) and float(invalid) > INVALID_LEVEL:
        parts.append(f"invalid-action rate {float(invalid):.2f}")
    if not parts:
        return None
    figure = "; ".join(parts)
    return Caveat(
        "collapsed",
        str(rec["run"]),
        figure,
        f"{rec['run']}: the policy collapsed ({figure}; level: one distinct action in more "
        f"than {COLLAPSE_SHARE:.0%} of episodes, or an invalid rate above {INVALID_LEVEL:.2f});"
        " its score says where the env left the agent, not what its representation did.",
    )


def at_floor(rec: Mapping[str, Any], floor_mean: float | None) -> Caveat | None:
    """A run whose score cannot be told from its env's random floor."""
    if floor_mean is None or not _finite(rec.get("mean")) or not _finite(floor_mean):
        return None
    mean, diff = float(rec["mean"]), rec.get("floor_diff")
    low, high = rec.get("floor_ci_low"), rec.get("floor_ci_high")
    interval = _finite(low) and _finite(high)
    below = mean <= float(floor_mean)
    if not below and not (interval and float(low) <= 0.0 <= float(high)):
        return None
    figure = f"mean {mean:.2f} vs random floor {float(floor_mean):.2f}"
    if _finite(diff):
        figure += f", Δ {float(diff):+.2f}"
    if interval:
        figure += f" [{float(low):+.2f}, {float(high):+.2f}]"
    return Caveat(
        "floor",
        str(rec["run"]),
        figure,
        f"{rec['run']}: indistinguishable from the random floor ({figure}"
        + ("; the interval includes 0" if not below else "; at or below it")
        + ").",
    )


def constant_memory(rec: Mapping[str, Any]) -> Caveat | None:
    """A run whose memory states are nearly all the same text."""
    states, distinct = rec.get("memory_states"), rec.get("distinct_memories")
    if not _finite(states) or not _finite(distinct) or float(states) < MIN_STATES:
        return None
    if not _finite(rec.get("has_memory")) or float(rec["has_memory"]) <= 0:
        return None
    if float(distinct) / float(states) > CONSTANT_MEMORY:
        return None
    figure = f"{int(states)} memory states, {int(distinct)} distinct text" + (
        "" if int(distinct) == 1 else "s"
    )
    return Caveat(
        "constant-memory",
        str(rec["run"]),
        figure,
        f"{rec['run']}: the memory is near-constant ({figure}; level: at most "
        f"{CONSTANT_MEMORY:.0%} distinct); a difference it makes is not one of content.",
    )


def shared_start(summary: pd.DataFrame) -> list[Caveat]:
    """Envs whose episodes (on every run, over at least two env seeds) all began from one
    first view."""
    if not {"env_seeds", "first_views", "env"} <= set(summary.columns):
        return []
    out = []
    for env, g in summary.groupby("env", sort=False):
        seeds = pd.to_numeric(g["env_seeds"], errors="coerce")
        views = pd.to_numeric(g["first_views"], errors="coerce")
        ok = seeds.notna() & views.notna()
        if not ok.any() or not bool((views[ok] == 1).all()) or int(seeds[ok].max()) < 2:
            continue
        n = int(seeds[ok].max())
        figure = f"{n} env seeds, 1 distinct first observation in each of {int(ok.sum())} runs"
        out.append(
            Caveat(
                "shared-start",
                str(env),
                figure,
                f"{env}: all seeds share one start state ({figure}); the seeds vary the "
                "sampling only, unless hidden state differs.",
            )
        )
    return out


def short_labels(summary: pd.DataFrame) -> dict[Any, str]:
    """Each run named by its values on the axes that tell the runs apart (``summary``,
    ``hanoi / summary``), as the table's rows show them; the run's label when none does."""
    runs = summary[~is_reference(summary)]
    axes = [
        a
        for a in (varying_axes(summary) if "agent" in summary.columns else [])
        if a in runs.columns and runs[a].nunique(dropna=False) > 1
    ]
    return {
        rec["run"]: " / ".join(str(rec[a]) for a in axes) if axes else str(rec["run"])
        for rec in summary.to_dict("records")
    }


def caveats(summary: pd.DataFrame) -> list[Caveat]:
    """Every warning that applies to ``summary`` (from :func:`statelab.analysis.summarise`,
    with the run-level columns ``env_seeds``, ``first_views``, ``memory_states``,
    ``distinct_memories``, ``has_memory`` when the report has them): env warnings first,
    then per run in table order."""
    out = shared_start(summary)
    floors = {}
    if "floor_run" in summary.columns:
        means = dict(zip(summary["run"], summary["mean"], strict=True))
        floors = {r: means.get(f) for r, f in zip(summary["run"], summary["floor_run"], strict=True)}
    names = short_labels(summary)
    for rec, ref in zip(summary.to_dict("records"), is_reference(summary), strict=True):
        if ref:
            continue
        floor = floors.get(rec["run"])
        rec = {**rec, "run": names[rec["run"]]}
        found = [collapsed(rec), at_floor(rec, floor), constant_memory(rec)]
        out += [c for c in found if c is not None]
    return out


def caveats_markdown(found: list[Caveat]) -> str:
    """The report's warnings section ("" when none applies)."""
    if not found:
        return ""
    lines = ["## Warnings", ""]
    lines += [f"- {md_cell(c.text)}" for c in found]  # labels are text, never markup
    return "\n".join([*lines, ""]) + "\n"
