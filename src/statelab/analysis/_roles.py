"""The reference rows of a summary (the privileged expert, the random floor): their roles,
labels and notes, and which rows of a frame they are. A row's ``role`` also says how it met
the baseline (``baseline``, ``compared``, ``unmatched``, ``none``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from statelab.analysis._components import is_expert
from statelab.analysis._components import tags as component_tags

EXPERT = "expert"
#: How reports label the expert's rows: it reads the env's privileged state.
EXPERT_LABEL = "privileged expert"
EXPERT_NOTE = (
    "privileged expert: the env's scripted expert, which reads hidden state the agents cannot"
    " see (a ceiling for reference; not tested)"
)
FLOOR = "random"
#: How reports label the random agent's rows: uniform over the admissible actions.
FLOOR_LABEL = "random floor"
FLOOR_NOTE = (
    "random floor: uniform over the admissible actions, no model (a floor for reference; not"
    " tested against the baseline)"
)
# Roles of a row with respect to the baseline comparison.
ROLE_NONE, ROLE_EXPERT, ROLE_BASELINE = "none", "expert", "baseline"
ROLE_FLOOR = "floor"
#: the reference rows: never compared with the baseline, shown after the runs
REFERENCE_ROLES: frozenset[str] = frozenset({ROLE_EXPERT, ROLE_FLOOR})
ROLE_COMPARED, ROLE_UNMATCHED = "compared", "unmatched"


def reference_role(agent: Any, tags: Any = None) -> str:
    """``ROLE_EXPERT`` for the expert's runs, ``ROLE_FLOOR`` for the random floor's, else
    ``ROLE_NONE``: by the run's tags (``expert``, ``floor``) when the frame has them, else by
    the tags of the agent the spelling builds (frames built by hand)."""
    if not (isinstance(tags, tuple | list | set | frozenset) and tags):
        tags = component_tags("agent", agent)
    if "expert" in tags or is_expert(agent):
        return ROLE_EXPERT
    return ROLE_FLOOR if "floor" in tags else ROLE_NONE


def is_expert_row(row: Mapping[str, Any]) -> bool:
    """Whether a summary row is the expert's: its role, else its agent's ``expert`` tag."""
    if "role" in row:
        return bool(row["role"] == ROLE_EXPERT)
    return "agent" in row and is_expert(row["agent"])


def expert_rows(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a summary (or runs) frame are the expert's (see :func:`is_expert_row`)."""
    if "role" in frame.columns:
        return frame["role"] == ROLE_EXPERT
    if "agent" not in frame.columns:
        return pd.Series(False, index=frame.index, dtype=bool)
    return frame["agent"].map(is_expert).astype(bool)


def is_reference(summary: pd.DataFrame) -> pd.Series:
    """Which rows are reference rows (expert or random floor)."""
    if "role" in summary.columns:
        return summary["role"].isin(REFERENCE_ROLES)
    if "agent" in summary.columns:
        return summary["agent"].map(lambda a: reference_role(a) != ROLE_NONE).astype(bool)
    return pd.Series(False, index=summary.index, dtype=bool)
