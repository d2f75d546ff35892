"""Analysis of finished episodes: tests over seeds and reports in the seeds' style."""

from statelab.analysis._fig2 import change_counts, change_sentences, fig2_png
from statelab.analysis._heat import cell_colours, heat_table_png
from statelab.analysis._pivot import pivot, pivot_markdown, pivot_records
from statelab.analysis._plots import plot_score_per_token, plot_scores
from statelab.analysis._summary import summarise
from statelab.analysis._table import to_json, to_markdown
from statelab.analysis.report import write_report
from statelab.analysis.stats import (
    BootstrapResult,
    PermutationResult,
    bootstrap_mean_diff,
    mean_sd,
    min_attainable_p,
    permutation_mean_diff,
)

__all__ = [
    "BootstrapResult",
    "PermutationResult",
    "bootstrap_mean_diff",
    "cell_colours",
    "change_counts",
    "change_sentences",
    "fig2_png",
    "heat_table_png",
    "mean_sd",
    "min_attainable_p",
    "permutation_mean_diff",
    "pivot",
    "pivot_markdown",
    "pivot_records",
    "plot_score_per_token",
    "plot_scores",
    "summarise",
    "to_json",
    "to_markdown",
    "write_report",
]
