"""The decision-sufficiency audit of any stored experiment on any env (issue 26).

At sampled decision points of each run's own episodes the reader scores the labelled
admissible actions under the run's own state, the full history, the true state in the run's
format and the read-time oracle of the same size: δ for each, β (budget loss), κ (write-time
regret), the loss against the full history and the relevance lag (docs/audit.md). Other
audits (a seed's, say) register as audit kinds (:mod:`statelab.analysis.audit.kinds`).
"""

from statelab.analysis.audit.episode import POINT_COLUMNS, Options, audit_episode
from statelab.analysis.audit.points import (
    SKIP_REASONS,
    Target,
    answers_anywhere,
    expert_targets,
    sample_points,
)
from statelab.analysis.audit.run import (
    EPISODES_TABLE,
    POINTS_TABLE,
    Cost,
    audit_sufficiency,
    plan_cost,
)

__all__ = [
    "EPISODES_TABLE",
    "POINTS_TABLE",
    "POINT_COLUMNS",
    "SKIP_REASONS",
    "Cost",
    "Options",
    "Target",
    "answers_anywhere",
    "audit_episode",
    "audit_sufficiency",
    "expert_targets",
    "plan_cost",
    "sample_points",
]
