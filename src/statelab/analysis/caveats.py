"""Warnings a report prints where a run's numbers mean less than they seem (issue 22).

Each names the run (or env) and the figure that triggered it, against a stated level:

- **collapsed policy**: from what the env's state did (issue 33): more than
  :data:`COLLAPSE_SHARE` of a run's scored episodes *looped* (not won, and most steps
  returned the env to a state it had already been in, by the env's own state fingerprints,
  legal moves or not; see :mod:`statelab.analysis.behaviour`). A won episode never counts.
  A store written before the fingerprints gets the old heuristic, said so in the figure:
  one distinct action in more than that share of episodes, or an invalid-action rate above
  :data:`INVALID_LEVEL`. Its score then says where the env left the agent, not what its
  representation did;
- **at the random floor**: a run's mean is at or below its env's random floor, or the
  bootstrap interval of the difference from the floor includes 0;
- **one start state**: every episode of every run on an env began from one instance state
  (the env's fingerprint recorded at reset: hidden per-seed state counts, an episode id in
  the first view does not), so the seeds vary the sampling only; a store written before the
  fingerprints gets the old heuristic, said so in the figure: one first view;
- **near-constant memory**: the memory says one thing, digits aside, within most of a run's
  episodes (:data:`~statelab.analysis.behaviour.CONSTANT_MEMORY`, per episode) and the same
  across them (distinct contents at most half its episodes): neither the step nor the
  episode changes what it says ("Step 3." is a counter, not content). A memory constant
  within each episode but different per seed carries the episode; it is not warned about.
  Without the per-episode figures (a summary built elsewhere), the old pooled rule: at most
  :data:`CONSTANT_MEMORY` distinct texts per state over at least :data:`MIN_STATES`;
- **decoding**: the runs chose their actions by different decoding (the embedded model's
  constrained choice ``trie``, a server's ``grammar`` / ``choice`` / ``json_schema`` ...,
  free replies parsed where a server enforced none: ``unenforced``), read from the stored
  calls, so a difference between them may be the decoding's as well as the model's; and each
  run whose server enforced no constraint;
- **violated constraint**: a run some of whose replies came back outside the constraint they
  were sent with (stored ``decoding = violated``: a server that passed the probe and then
  ignored the grammar or schema), with their count.
- **colliding episodes**: a run holds two finished episodes with one (env seed, sampling
  seed) pair, outside replay (a store seeded before scheme 2: a rollout replayed another
  seed's episode), so its seeds are not the independent units its tests assume.

Reference rows (the privileged expert, the random floor) are not warned about.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from statelab.analysis._md import md_cell
from statelab.analysis._roles import is_reference
from statelab.analysis._summary import varying_axes
from statelab.analysis.behaviour import CONSTANT_MEMORY, LOOP_SHARE

#: a run collapsed when more than this share of its episodes played one distinct action
COLLAPSE_SHARE = 0.5
#: ... or when its mean invalid-action rate is above this
INVALID_LEVEL = 0.5
#: the pooled rule (a summary without the per-episode figures): near-constant at or below
#: :data:`~statelab.analysis.behaviour.CONSTANT_MEMORY` distinct texts per stored state,
#: counted over at least this many stored states
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


def _num(rec: Mapping[str, Any], key: str) -> float | None:
    """``rec[key]`` as a finite float, else None (missing, None, NaN)."""
    value = rec.get(key)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value) if math.isfinite(float(value)) else None


def collapsed(rec: Mapping[str, Any]) -> Caveat | None:
    """A run whose episodes mostly looped (from the env's states); without state
    fingerprints, one that played one action in most episodes, or mostly invalid ones."""
    looped = _num(rec, "looped")
    if looped is not None:
        if looped <= COLLAPSE_SHARE:
            return None
        figure = f"{looped:.0%} of episodes looped"
        return Caveat(
            "collapsed",
            str(rec["run"]),
            figure,
            f"{rec['run']}: the policy collapsed ({figure}: not won, and more than "
            f"{LOOP_SHARE:.0%} of their steps back in a state already visited, by the env's "
            f"state fingerprints; level: more than {COLLAPSE_SHARE:.0%} of episodes); its score"
            " says where the env left the agent, not what its representation did.",
        )
    one, invalid = _num(rec, "one_action"), _num(rec, "invalid_rate")
    parts = []
    if one is not None and one > COLLAPSE_SHARE:
        parts.append(f"one distinct action in {one:.0%} of episodes")
    if invalid is not None and invalid > INVALID_LEVEL:
        parts.append(f"invalid-action rate {invalid:.2f}")
    if not parts:
        return None
    figure = "; ".join(parts)
    return Caveat(
        "collapsed",
        str(rec["run"]),
        figure,
        f"{rec['run']}: the policy collapsed ({figure}; level: one distinct action in more "
        f"than {COLLAPSE_SHARE:.0%} of episodes, or an invalid rate above {INVALID_LEVEL:.2f};"
        " a store without the env's state fingerprints: read from the actions); its score says"
        " where the env left the agent, not what its representation did.",
    )


def at_floor(rec: Mapping[str, Any], floor_mean: float | None) -> Caveat | None:
    """A run whose score cannot be told from its env's random floor."""
    mean, floor = _num(rec, "mean"), _num({"f": floor_mean}, "f")
    if mean is None or floor is None:
        return None
    diff = _num(rec, "floor_diff")
    low, high = _num(rec, "floor_ci_low"), _num(rec, "floor_ci_high")
    below = mean <= floor
    spans = low is not None and high is not None and low <= 0.0 <= high
    if not below and not spans:
        return None
    figure = f"mean {mean:.2f} vs random floor {floor:.2f}"
    if diff is not None:
        figure += f", Δ {diff:+.2f}"
    if low is not None and high is not None:
        figure += f" [{low:+.2f}, {high:+.2f}]"
    return Caveat(
        "floor",
        str(rec["run"]),
        figure,
        f"{rec['run']}: indistinguishable from the random floor ({figure}"
        + ("; at or below it" if below else "; the interval includes 0")
        + ").",
    )


def constant_memory(rec: Mapping[str, Any]) -> Caveat | None:
    """A run whose memory says one thing within its episodes and across them (see the
    module); the pooled rule where the per-episode figures are missing."""
    has = _num(rec, "has_memory")
    share, contents = _num(rec, "constant_memory"), _num(rec, "memory_contents")
    episodes = _num(rec, "memory_episodes")
    if share is not None and contents is not None and episodes is not None:
        if not has or share <= 0.5 or contents > max(1.0, episodes / 2):
            return None
        n = int(contents)
        figure = (
            f"one content within {share:.0%} of episodes, {n} distinct content"
            f"{'' if n == 1 else 's'} over {int(episodes)} episodes, digits aside"
        )
        return Caveat(
            "constant-memory",
            str(rec["run"]),
            figure,
            f"{rec['run']}: the memory is near-constant ({figure}; level: most episodes, and "
            "at most one content per two episodes); a difference it makes is not one of "
            "content.",
        )
    states, distinct = _num(rec, "memory_states"), _num(rec, "distinct_memories")
    if states is None or distinct is None or states < MIN_STATES or not has:
        return None
    if distinct / states > CONSTANT_MEMORY:
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


def colliding(rec: Mapping[str, Any]) -> Caveat | None:
    """A run whose finished episodes include one episode played twice (the store's
    ``colliding`` count: episodes sharing their env seed and sampling seed)."""
    n = _num(rec, "colliding")
    if not n:
        return None
    figure = f"{int(n)} episodes on shared (env seed, sampling seed) pairs"
    return Caveat(
        "colliding",
        str(rec["run"]),
        figure,
        f"{rec['run']}: {figure}, outside replay (seeded before seeding scheme 2: a rollout"
        " replayed another seed's episode); its seeds are not independent units for the"
        " sign-flip test and the bootstrap.",
    )


def _starts(g: pd.DataFrame) -> tuple[pd.Series, str]:
    """Each run's distinct start states (the env's fingerprints) when every finished episode
    of every run has one, else its distinct first views (a store from before them)."""
    if {"start_states", "unfingerprinted_starts"} <= set(g.columns):
        missing = pd.to_numeric(g["unfingerprinted_starts"], errors="coerce")
        if bool((missing == 0).all()):
            return pd.to_numeric(g["start_states"], errors="coerce"), "start state"
    views = pd.to_numeric(g["first_views"], errors="coerce")
    return views, "distinct first observation"


def shared_start(summary: pd.DataFrame) -> list[Caveat]:
    """Envs whose episodes (on every run, over at least two env seeds) all began from one
    instance state (one first view in a store without state fingerprints)."""
    if not {"env_seeds", "first_views", "env"} <= set(summary.columns):
        return []
    out = []
    for env, g in summary.groupby("env", sort=False):
        seeds = pd.to_numeric(g["env_seeds"], errors="coerce")
        starts, what = _starts(g)
        ok = seeds.notna() & starts.notna()
        if not ok.any() or not bool((starts[ok] == 1).all()) or int(seeds[ok].max()) < 2:
            continue
        n = int(seeds[ok].max())
        figure = f"{n} env seeds, 1 {what} in each of {int(ok.sum())} runs"
        if what != "start state":
            figure += " (no state fingerprints in this store)"
        out.append(
            Caveat(
                "shared-start",
                str(env),
                figure,
                f"{env}: all seeds share one start state ({figure}); the seeds vary the "
                "sampling only"
                + ("." if what == "start state" else ", unless hidden state differs."),
            )
        )
    return out


def _modes(value: Any) -> str:
    if not isinstance(value, str) or not value:
        return "free"
    return "+".join(sorted(set(value.split(","))))


def decoding(summary: pd.DataFrame) -> list[Caveat]:
    """Runs that chose their actions by different decoding, and runs whose server held
    replies to no constraint (see the module)."""
    if "decoding" not in summary.columns:
        return []
    runs = summary[~is_reference(summary)]
    if runs.empty or not runs["decoding"].notna().any():
        return []
    names = short_labels(summary)
    modes = {names[r]: _modes(v) for r, v in zip(runs["run"], runs["decoding"], strict=True)}
    out = []
    kinds = sorted(set(modes.values()))
    if len(kinds) > 1:
        figure = "; ".join(
            f"{k}: {', '.join(r for r, m in modes.items() if m == k)}" for k in kinds
        )
        text = (f"Runs choose their actions by different decoding ({figure}); a difference "
                "between them may be the decoding's, not the model's.")  # fmt: skip
        out.append(Caveat("decoding", "runs", figure, text))
    for run, mode in modes.items():
        if "unenforced" in mode.split("+"):
            text = (f"{run}: the server enforced no constrained form; its actions were "
                    "parsed from free replies.")  # fmt: skip
            out.append(Caveat("decoding", run, mode, text))
    return out


def violated(summary: pd.DataFrame) -> list[Caveat]:
    """Runs with replies outside the constraint they were sent with, and how many (the
    stored ``decoding = violated``, counted per run in ``violated`` of ``choice_calls``)."""
    if "violated" not in summary.columns:
        return []
    names = short_labels(summary)
    out = []
    for rec, ref in zip(summary.to_dict("records"), is_reference(summary), strict=True):
        n, of = _num(rec, "violated"), _num(rec, "choice_calls")
        if ref or not n:
            continue
        figure = f"{n:.0f} of {of:.0f} replies" if of else f"{n:.0f} replies"
        run = names[rec["run"]]
        text = (f"{run}: {figure} to a choice came back outside the constraint they were sent "
                "with (stored decoding=violated): the server passed the probe, then did not "
                "hold them to it; their actions were parsed from free replies.")  # fmt: skip
        out.append(Caveat("violated", run, figure, text))
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
    with the run-level columns ``env_seeds``, ``first_views``, ``start_states``,
    ``unfingerprinted_starts``, ``memory_states``, ``distinct_memories``, ``has_memory``,
    ``memory_contents``, ``memory_episodes`` when the report has them): env warnings first,
    then per run in table order."""
    out = shared_start(summary)
    floors: dict[Any, Any] = {}
    if "floor_run" in summary.columns:
        means = dict(zip(summary["run"], summary["mean"], strict=True))
        pairs = zip(summary["run"], summary["floor_run"], strict=True)
        floors = {r: means.get(f) for r, f in pairs}
    names = short_labels(summary)
    for rec, ref in zip(summary.to_dict("records"), is_reference(summary), strict=True):
        if ref:
            continue
        floor = floors.get(rec["run"])
        rec = {**rec, "run": names[rec["run"]]}
        found = [collapsed(rec), at_floor(rec, floor), constant_memory(rec)]
        out += [c for c in found if c is not None]
        out += [c for c in (colliding(rec),) if c is not None]
    return out + decoding(summary) + violated(summary)


def caveats_markdown(found: list[Caveat]) -> str:
    """The report's warnings section ("" when none applies)."""
    if not found:
        return ""
    lines = ["## Warnings", ""]
    lines += [f"- {md_cell(c.text)}" for c in found]  # labels are text, never markup
    return "\n".join([*lines, ""]) + "\n"
