"""summarise / to_markdown / to_json / plots / write_report on hand-made episodes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from statelab.analysis import (
    plot_score_per_token,
    plot_scores,
    summarise,
    to_json,
    to_markdown,
    write_report,
)

BASE_SCORES = [0.2, 0.3, 0.4, 0.5, 0.6, 0.4]  # six seeds: an exact sign-flip p can be < 0.05
SHIFT = {  # per-seed offsets from the full-history scores
    "full": [0.0] * 6,
    "summary": [0.25, 0.35, 0.3, 0.3, 0.3, 0.3],  # clearly better: significant
    "oracle": [0.1, -0.1, 0.05, -0.05, 0.0, 0.0],  # same mean: not significant
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _episode(run: str, history: str, seed: int, score: float, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run": run,
        "env": "hanoi",
        "model": "phi4",
        "agent": "react",
        "history": history,
        "format": "nl",
        "grounding": "text",
        "seed": seed,
        "status": "done",
        "error": None,
        "score": score,
        "success": score >= 0.6,
        "steps": 10,
        "agent_calls": 10,
        "agent_in": 1000 * (seed + 1),
        "agent_out": 50 * (seed + 1),
        "aux_in": 0,
        "aux_out": 0,
    }
    row.update(kw)
    return row


def make_episodes() -> pd.DataFrame:
    rows = []
    for history, offsets in SHIFT.items():
        for seed, (base, off) in enumerate(zip(BASE_SCORES, offsets, strict=True)):
            aux = 300 if history == "summary" else 0
            rows.append(
                _episode(f"hanoi/{history}", history, seed, round(base + off, 10), aux_in=aux)
            )
    # A failed episode: counted, but excluded from the mean (its score would drag it down).
    rows.append(
        _episode("hanoi/summary", "summary", 6, 0.0, status="failed", error="ModelError: timeout")
    )
    for seed in range(5):
        rows.append(
            _episode(
                "hanoi/expert",
                "-",
                seed,
                1.0,
                model="-",
                agent="expert",
                format="-",
                grounding="-",
                agent_calls=0,
                agent_in=0,
                agent_out=0,
            )
        )
    return pd.DataFrame(rows)


@pytest.fixture
def summary() -> pd.DataFrame:
    """Unadjusted: these tests are of the test itself (test_adjust.py: the adjustment)."""
    return summarise(make_episodes(), {"history": "full"}, adjust="none")


def _row(summary: pd.DataFrame, run: str) -> pd.Series:
    rows = summary[summary["run"] == run]
    assert len(rows) == 1
    return rows.iloc[0]


def test_summary_counts_mean_sd_success(summary: pd.DataFrame) -> None:
    assert list(summary["run"]) == ["hanoi/full", "hanoi/summary", "hanoi/oracle", "hanoi/expert"]
    full = _row(summary, "hanoi/full")
    assert (full["n"], full["failed"]) == (6, 0)
    assert full["mean"] == pytest.approx(0.4)
    assert full["sd"] == pytest.approx(np.std(BASE_SCORES, ddof=1))
    assert full["success_rate"] == pytest.approx(1 / 6)  # only 0.6 reaches success
    summ = _row(summary, "hanoi/summary")
    assert (summ["n"], summ["failed"]) == (6, 1)
    assert summ["mean"] == pytest.approx(0.7)  # the failed 0.0 is not averaged in
    assert summ["success_rate"] == pytest.approx(5 / 6)


def test_summary_token_figures(summary: pd.DataFrame) -> None:
    full = _row(summary, "hanoi/full")
    per_step = [100.0 * (s + 1) for s in range(6)]  # agent_in / steps (one call a step)
    assert full["in_per_step"] == pytest.approx(np.mean(per_step))
    assert full["out_per_step"] == pytest.approx(np.mean([5.0 * (s + 1) for s in range(6)]))
    expected = np.mean([sc / ps * 1000 for sc, ps in zip(BASE_SCORES, per_step, strict=True)])
    assert full["score_per_1k_in"] == pytest.approx(expected)
    assert full["aux_in_per_step"] == 0.0
    assert _row(summary, "hanoi/summary")["aux_in_per_step"] == pytest.approx(30.0)
    expert = _row(summary, "hanoi/expert")
    assert math.isnan(expert["in_per_step"]) and math.isnan(expert["score_per_1k_in"])
    assert expert["mean"] == 1.0 and expert["sd"] == 0.0
    assert full["in_per_call"] == full["in_per_step"]


def test_baseline_and_expert_rows_have_no_test(summary: pd.DataFrame) -> None:
    for run, role in [("hanoi/full", "baseline"), ("hanoi/expert", "expert")]:
        row = _row(summary, run)
        assert row["role"] == role
        assert math.isnan(row["diff"]) and math.isnan(row["ci_low"]) and math.isnan(row["p"])
        assert not row["sig"]


def test_significant_and_null_cases(summary: pd.DataFrame) -> None:
    summ = _row(summary, "hanoi/summary")
    assert summ["role"] == "compared" and summ["baseline_run"] == "hanoi/full"
    assert summ["paired"] and summ["n_test"] == 6
    assert summ["p"] == pytest.approx(2 / 64)  # exact sign-flip: all six differences > 0
    assert summ["test"] == "sign-flip (exact)"
    assert summ["diff"] == pytest.approx(0.3)
    assert 0.0 < summ["ci_low"] <= 0.3 <= summ["ci_high"]
    assert summ["sig"] and summ["p"] < 0.05
    oracle = _row(summary, "hanoi/oracle")
    assert oracle["diff"] == pytest.approx(0.0, abs=1e-12)
    assert oracle["ci_low"] < 0.0 < oracle["ci_high"]
    assert not oracle["sig"] and oracle["p"] > 0.5


def test_unmatched_unpaired_and_no_baseline() -> None:
    episodes = make_episodes()
    other_model = episodes[episodes["run"] == "hanoi/summary"].assign(
        run="hanoi/llama-summary", model="llama"
    )
    shifted = episodes[episodes["run"] == "hanoi/oracle"].assign(
        run="hanoi/oracle-late", format="json", seed=lambda d: d["seed"] + 100
    )
    full_json = episodes[episodes["run"] == "hanoi/full"].assign(
        run="hanoi/full-json", format="json"
    )
    summary = summarise(pd.concat([episodes, other_model, shifted, full_json]), {"history": "full"})
    lonely = _row(summary, "hanoi/llama-summary")
    assert lonely["role"] == "unmatched" and math.isnan(lonely["diff"])
    late = _row(summary, "hanoi/oracle-late")  # no shared seeds: unpaired test
    assert late["baseline_run"] == "hanoi/full-json" and not late["paired"]
    assert not late["sig"]
    plain = summarise(episodes, None)
    assert set(plain["role"]) == {"none", "expert"} and not plain["sig"].any()


def test_bad_input_raises() -> None:
    episodes = make_episodes()
    with pytest.raises(ValueError, match="unknown axes"):
        summarise(episodes, {"memory": "full"})
    with pytest.raises(ValueError, match="lacks columns"):
        summarise(episodes.drop(columns=["score"]), None)
    mixed = episodes.copy()
    mixed.loc[0, "model"] = "other"
    with pytest.raises(ValueError, match="not constant"):
        summarise(mixed, None)


def _table_rows(md: str) -> list[list[str]]:
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]


def test_markdown_marks_only_the_significant_cell(summary: pd.DataFrame) -> None:
    md = to_markdown(summary, "Table 3: granularity")
    header, _sep, *rows = _table_rows(md)
    assert header[:3] == ["Env", "Agent", "History"]  # model/format/grounding do not vary
    score_col = header.index("Score mean (SD)")
    starred = [r for r in rows for c in r if c.endswith("*")]
    assert len(starred) == 1 and starred[0][2] == "summary"
    assert starred[0][score_col] == "0.70 (0.15)*"
    assert starred[0][header.index("p (pairs)")] == "0.0312 (6 pairs)"
    by_history = {r[2]: r for r in rows}
    assert by_history["full"][score_col] == "0.40 (0.14)"
    assert by_history["full"][header.index("Δ vs baseline [95% CI]")] == "baseline"
    assert by_history["oracle"][score_col] == "0.40 (0.14)"
    assert by_history["summary"][header.index("n")] == "6 (+1 failed)"
    assert rows[-1][1] == "privileged expert"  # expert rows last
    legend = md.strip().splitlines()[-1]
    assert not legend.startswith("|")
    assert "history = full" in legend and "10,000 resamples" in legend
    assert "95% CI" in legend and "paired by seed" in legend and "sign-flip" in legend
    assert "sample SD" in legend and "Privileged expert" in legend
    assert "Table 3: granularity" in md


def test_json_round_trips(summary: pd.DataFrame) -> None:
    payload = to_json(summary)
    back = json.loads(json.dumps(payload, allow_nan=False))
    assert back["baseline"] == {"history": "full"}
    runs = {r["run"]: r for r in back["runs"]}
    assert runs["hanoi/summary"]["sig"] is True and runs["hanoi/summary"]["n"] == 6
    assert runs["hanoi/expert"]["in_per_step"] is None
    assert runs["hanoi/full"]["diff"] is None
    assert runs["hanoi/oracle"]["sig"] is False


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 5_000


def test_plots_write_valid_pngs(summary: pd.DataFrame, tmp_path: Path) -> None:
    _assert_png(plot_scores(summary, tmp_path / "s.png"))
    _assert_png(plot_score_per_token(summary, tmp_path / "t.png"))
    empty = summary.iloc[0:0]
    _assert_png(plot_scores(empty, tmp_path / "empty.png"))


def test_write_report(tmp_path: Path) -> None:
    out = tmp_path / "nested" / "report"
    paths = write_report(make_episodes(), {"history": "full"}, out, "Granularity", adjust="none")
    assert set(paths) == {"markdown", "json", "scores", "score_per_token"}
    assert all(p.parent == out and p.exists() for p in paths.values())
    md = paths["markdown"].read_text()
    assert md.startswith("# Granularity")
    assert "](scores.png)" in md and "](score_per_token.png)" in md
    assert "0.70 (0.15)*" in md
    data = json.loads(paths["json"].read_text())
    assert data["title"] == "Granularity" and len(data["runs"]) == 4
    _assert_png(paths["scores"])
    _assert_png(paths["score_per_token"])


def test_report_markdown_shows_labels_as_text_never_markup(tmp_path):
    """A model name holding <script> or | is escaped in report.md (issue 10.18)."""
    from statelab.analysis._md import md_cell, md_row

    assert md_cell("<script>alert(1)</script>") == "&lt;script>alert(1)&lt;/script>"
    assert md_cell("a|b\nc") == "a\\|b c"
    assert md_cell("p<0.05") == "p<0.05"
    assert md_row(["x", "<img src=x>"]) == "| x | &lt;img src=x> |"


def test_a_model_named_script_never_reaches_report_md_as_a_tag(tmp_path):
    import json

    from statelab.analysis.reporting import make_report
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    where = tmp_path / "<script>alert(1)<"
    where.mkdir()
    script = where / "r.json"
    script.write_text(json.dumps(["Action: Move the top disk of rod A to the top of rod C"]))
    plain = tmp_path / "plain.json"
    plain.write_text(script.read_text())
    exp = parse_experiment(
        {
            "name": "x",
            "seeds": [0, 1],
            "grid": {"env": ["hanoi"], "model": [f"scripted:{script}", f"scripted:{plain}"]},
            "max_steps": 2,
            "out": str(tmp_path / "out"),
            "cache": None,
        }
    )
    run_sync(exp, progress=None)
    rep = make_report(exp.out_dir / "store.sqlite", tmp_path / "rep")
    assert "<script" not in rep.markdown and "&lt;script>" in rep.markdown
