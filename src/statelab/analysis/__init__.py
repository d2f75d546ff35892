"""Analysis of finished episodes: bootstrap statistics and reports in the seeds' style."""

from statelab.analysis.report import (
    plot_score_per_token,
    plot_scores,
    summarise,
    to_json,
    to_markdown,
    write_report,
)
from statelab.analysis.stats import BootstrapResult, bootstrap_mean_diff, mean_sd

__all__ = [
    "BootstrapResult",
    "bootstrap_mean_diff",
    "mean_sd",
    "plot_score_per_token",
    "plot_scores",
    "summarise",
    "to_json",
    "to_markdown",
    "write_report",
]
