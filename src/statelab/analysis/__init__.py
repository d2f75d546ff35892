"""Analysis of finished episodes: tests over seeds and reports in the seeds' style."""

from statelab.analysis.report import (
    cell_colours,
    change_counts,
    change_sentences,
    fig2_png,
    heat_table_png,
    pivot,
    pivot_markdown,
    pivot_records,
    plot_score_per_token,
    plot_scores,
    summarise,
    to_json,
    to_markdown,
    write_report,
)
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
