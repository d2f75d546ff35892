"""Seed-style pivot tables, heat shading, Fig. 2 and change counts on hand-made summaries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from statelab.analysis import (
    cell_colours,
    change_counts,
    change_sentences,
    fig2_png,
    heat_table_png,
    pivot,
    pivot_markdown,
    pivot_records,
    write_report,
)
from statelab.analysis._heat import HEAT_STOPS, heat_colour, text_colour

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FIRST, MIDDLE, LAST = (c for _, c in HEAT_STOPS)
NAN = float("nan")


def _run(
    env: str,
    model: str,
    history: str,
    mean: float,
    sd: float = 0.1,
    *,
    role: str = "compared",
    sig: bool = False,
    diff: float = NAN,
    **kw: Any,
) -> dict[str, Any]:
    agent = "expert" if role == "expert" else "react"
    row = {
        "run": f"{env}/{model}/{history}",
        "env": env,
        "model": model,
        "agent": agent,
        "history": history,
        "mean": mean,
        "sd": sd,
        "n": 5,
        "role": role,
        "sig": sig,
        "diff": diff,
    }
    row.update(kw)
    return row


def _summary(rows: list[dict[str, Any]], baseline: dict[str, str] | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    frame.attrs.update(
        baseline=baseline if baseline is not None else {"history": "full"},
        axes=[a for a in ("env", "model", "agent", "history", "format", "grounding") if a in frame],
        n_resamples=10_000,
        ci=0.95,
    )
    return frame


@pytest.fixture
def table() -> pd.DataFrame:
    """Two models x two envs x {full, summary}; messenger appears first; llama lacks a run."""
    return _summary(
        [
            _run("messenger", "phi4", "full", 0.24, 0.11, role="baseline"),
            _run("messenger", "phi4", "summary", 0.14, 0.06, sig=True, diff=-0.10),
            _run("messenger", "llama", "full", 0.26, 0.10, role="baseline"),
            _run("messenger", "llama", "summary", 0.31, 0.05, diff=0.05),
            _run("hanoi", "phi4", "full", 0.16, 0.12, role="baseline"),
            _run("hanoi", "phi4", "summary", 0.08, 0.10, diff=-0.08),
            _run("hanoi", "llama", "full", 0.46, 0.12, role="baseline"),
            # hanoi/llama/summary is missing on purpose
            _run("hanoi", "-", "-", 1.0, 0.0, role="expert"),
            _run("messenger", "-", "-", 0.9, 0.05, role="expert"),
        ]
    )


def test_pivot_cells_stars_and_order(table: pd.DataFrame) -> None:
    p = pivot(table, ["model"], ["env", "history"])
    assert list(p.index) == ["phi4", "llama", "privileged expert"]
    assert p.index.name == "model"
    assert list(p.columns.names) == ["env", "history"]
    assert list(p.columns) == [
        ("messenger", "full"),
        ("messenger", "summary"),
        ("hanoi", "full"),
        ("hanoi", "summary"),
    ]
    assert p.loc["phi4", ("messenger", "full")] == "0.24 (0.11)"
    assert p.loc["phi4", ("messenger", "summary")] == "0.14 (0.06)*"
    assert p.loc["llama", ("messenger", "summary")] == "0.31 (0.05)"
    starred = [(r, c) for r in p.index for c in p.columns if p.loc[r, c].endswith("*")]
    assert starred == [("phi4", ("messenger", "summary"))]


def test_pivot_missing_expert_and_no_mean(table: pd.DataFrame) -> None:
    rows = [*table.to_dict("records"), _run("maze", "phi4", "full", NAN, NAN, role="baseline")]
    p = pivot(_summary(rows), "model", ["env", "history"])
    assert p.loc["llama", ("hanoi", "summary")] == ""  # no such run
    assert p.loc["llama", ("maze", "full")] == ""
    assert p.loc["phi4", ("maze", "full")] == "–"  # a run without finished episodes
    # The expert row repeats its env's score under each of that env's columns.
    assert p.loc["privileged expert", ("hanoi", "full")] == "1.00 (0.00)"
    assert p.loc["privileged expert", ("hanoi", "summary")] == "1.00 (0.00)"
    assert p.loc["privileged expert", ("messenger", "full")] == "0.90 (0.05)"
    assert p.loc["privileged expert", ("maze", "full")] == ""
    no_expert = pivot(table[table["agent"] != "expert"], ["model"], ["env", "history"])
    assert "expert" not in no_expert.index


def test_pivot_multi_level_rows_and_expert_only_env(table: pd.DataFrame) -> None:
    rows = [*table.to_dict("records"), _run("maze", "-", "-", 0.7, 0.0, role="expert")]
    p = pivot(_summary(rows), ["env", "history"], ["model"])
    assert list(p.index.names) == ["env", "history"]
    assert list(p.index) == [
        ("messenger", "full"),
        ("messenger", "summary"),
        ("messenger", "privileged expert"),
        ("hanoi", "full"),
        ("hanoi", "summary"),
        ("hanoi", "privileged expert"),
        ("maze", "privileged expert"),  # maze has only an expert run
    ]
    assert list(p.columns) == [("phi4",), ("llama",)]
    assert p.loc[("hanoi", "privileged expert"), ("phi4",)] == "1.00 (0.00)"
    assert p.loc[("hanoi", "privileged expert"), ("llama",)] == "1.00 (0.00)"
    assert p.loc[("maze", "privileged expert"), ("llama",)] == "0.70 (0.00)"
    # An env with expert runs only gets columns of its own when env is a column axis.
    by_model = pivot(_summary(rows), ["model"], ["env", "history"])
    assert by_model.columns[-1] == ("maze", "-")
    assert by_model.loc["privileged expert", ("maze", "-")] == "0.70 (0.00)"
    assert by_model.loc["phi4", ("maze", "-")] == ""
    # rows=["env"]: the expert keeps its env and gets a row of its own.
    by_env = pivot(_summary(rows), ["env"], ["model", "history"])
    assert list(by_env.index) == [
        "messenger",
        "messenger (privileged expert)",
        "hanoi",
        "hanoi (privileged expert)",
        "maze (privileged expert)",
    ]


def test_pivot_rejects_two_runs_in_one_cell(table: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"same pivot cell.*\['history'\]"):
        pivot(table, ["model"], ["env"])
    with pytest.raises(ValueError, match="not in the summary"):
        pivot(table, ["format"], ["env"])
    with pytest.raises(ValueError, match="repeated"):
        pivot(table, ["env"], ["env", "history"])


def test_pivot_markdown(table: pd.DataFrame) -> None:
    md = pivot_markdown(table, ["model"], ["env", "history"], "Table 3: granularity")
    lines = md.splitlines()
    assert lines[0] == "**Table 3: granularity**"
    table_lines = [ln for ln in lines if ln.startswith("|")]
    header = [c.strip() for c in table_lines[0].strip("|").split("|")]
    assert header == [
        "Model",
        "messenger · full",
        "messenger · summary",
        "hanoi · full",
        "hanoi · summary",
    ]
    assert table_lines[2] == "| phi4 | 0.24 (0.11) | 0.14 (0.06)* | 0.16 (0.12) | 0.08 (0.10) |"
    assert table_lines[3] == "| llama | 0.26 (0.10) | 0.31 (0.05) | 0.46 (0.12) |  |"
    assert table_lines[4].startswith("| privileged expert |")
    legend = md.strip().splitlines()[-1]
    assert "`*`" in legend and "history = full" in legend
    assert "10,000 resamples" in legend and "95% CI" in legend and "expert" in legend
    records = pivot_records(table, ["model"], ["env", "history"])
    assert records[0] == {
        "model": "phi4",
        "messenger · full": "0.24 (0.11)",
        "messenger · summary": "0.14 (0.06)*",
        "hanoi · full": "0.16 (0.12)",
        "hanoi · summary": "0.08 (0.10)",
    }


def test_heat_colour_scale_matches_the_seed() -> None:
    assert heat_colour(0.0) == FIRST == "#FCFDBF"
    assert heat_colour(0.5) == MIDDLE == "#FC8961"
    assert heat_colour(1.0) == LAST == "#B73779"
    assert heat_colour(0.25) == "#FCC390"  # seed Table 6: 0.25 -> FCC390
    assert heat_colour(-1.0) == FIRST and heat_colour(2.0) == LAST
    assert text_colour(FIRST) == "black" and text_colour(MIDDLE) == "black"
    assert text_colour(LAST) == "white"


def test_cell_colours_normalise_within_each_env() -> None:
    summary = _summary(
        [
            _run("hanoi", "a", "full", 0.1, role="baseline"),
            _run("hanoi", "b", "full", 0.2, role="baseline"),
            _run("hanoi", "c", "full", 0.3, role="baseline"),
            _run("messenger", "a", "full", 0.6, role="baseline"),
            _run("messenger", "b", "full", 0.9, role="baseline"),
            _run("babyai", "a", "full", 0.4, role="baseline"),
            _run("babyai", "b", "full", 0.4, role="baseline"),
            _run("hanoi", "-", "-", 1.0, 0.0, role="expert"),
        ]
    )
    colours = cell_colours(summary, ["model"], ["env"])
    assert colours.loc["a", ("hanoi",)] == FIRST
    assert colours.loc["b", ("hanoi",)] == MIDDLE
    assert colours.loc["c", ("hanoi",)] == LAST
    assert colours.loc["a", ("messenger",)] == FIRST  # 0.6 is messenger's min
    assert colours.loc["b", ("messenger",)] == LAST
    assert colours.loc["c", ("messenger",)] == ""  # no run
    assert colours.loc["a", ("babyai",)] == colours.loc["b", ("babyai",)] == MIDDLE
    assert colours.loc["privileged expert", ("hanoi",)] == ""  # expert cells are not shaded
    unit = cell_colours(summary, ["model"], ["env"], scale="unit")
    assert unit.loc["b", ("messenger",)] == heat_colour(0.9)
    assert unit.loc["a", ("babyai",)] == heat_colour(0.4)
    with pytest.raises(ValueError, match="scale"):
        cell_colours(summary, ["model"], ["env"], scale="log")  # type: ignore[arg-type]


def _grounding_summary() -> pd.DataFrame:
    rows = []
    diffs = {  # (image diff, vot diff) per (env, model)
        ("hanoi", "a"): (0.10, 0.30),
        ("hanoi", "b"): (-0.20, 0.39 - 0.38),  # 0.01 despite float noise: improves
        ("messenger", "a"): (0.005, -0.009),
        ("messenger", "b"): (0.0, NAN),  # a NaN difference is not counted
    }
    for (env, model), (d_img, d_vot) in diffs.items():
        rows.append(_run(env, model, "-", 0.4, role="baseline", grounding="text"))
        for g, d in (("image", d_img), ("vot", d_vot)):
            rows.append(
                _run(env, model, "-", 0.4 + d, sig=abs(d) > 0.15, diff=d, grounding=g)
                | {"run": f"{env}/{model}/{g}"}
            )
    rows.append(_run("hanoi", "c", "-", 0.5, role="unmatched", diff=NAN, grounding="vot"))
    return _summary(rows, {"grounding": "text"})


def test_change_counts_and_sentences() -> None:
    counts = change_counts(_grounding_summary())
    assert counts == {
        "image": {"improves": 1, "degrades": 1, "neutral": 2, "total": 4},
        "vot": {"improves": 2, "degrades": 0, "neutral": 1, "total": 3},
    }
    assert change_sentences(counts) == [
        "image: improves in 1/4, degrades in 1/4, neutral in 2/4",
        "vot: improves in 2/3, degrades in 0/3, neutral in 1/3",
    ]
    strict = change_counts(_grounding_summary(), neutral=0.0)
    assert strict["image"] == {"improves": 2, "degrades": 1, "neutral": 1, "total": 4}
    assert strict["vot"] == {"improves": 2, "degrades": 1, "neutral": 0, "total": 3}
    assert change_counts(_grounding_summary().iloc[0:0]) == {}
    with pytest.raises(ValueError, match="neutral"):
        change_counts(_grounding_summary(), neutral=-0.1)


def test_change_counts_name_variants_by_the_differing_baseline_axes() -> None:
    rows = [
        _run("hanoi", "a", "full", 0.2, role="baseline", format="nl"),
        _run("hanoi", "a", "summary", 0.3, diff=0.1, format="nl"),
        _run("hanoi", "a", "full", 0.1, diff=-0.1, format="json") | {"run": "j"},
        _run("hanoi", "a", "summary", 0.2, diff=0.0, format="json") | {"run": "sj"},
    ]
    counts = change_counts(_summary(rows, {"history": "full", "format": "nl"}))
    assert list(counts) == ["summary", "json", "summary / json"]


def _assert_png(path: Path, min_bytes: int = 5_000) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > min_bytes


def test_pngs_are_written(table: pd.DataFrame, tmp_path: Path) -> None:
    _assert_png(heat_table_png(table, ["model"], ["env", "history"], tmp_path / "t.png", "T3"))
    _assert_png(heat_table_png(table, ["env", "history"], "model", tmp_path / "t7.png", "T7"))
    _assert_png(heat_table_png(table.iloc[0:0], ["model"], ["env"], tmp_path / "e.png", "none"))
    grounding = _grounding_summary()
    _assert_png(fig2_png(grounding, tmp_path / "f.png", "Grounding"))
    one_model = grounding[grounding["model"] == "a"]
    _assert_png(fig2_png(one_model, tmp_path / "f1.png", "One model"))
    _assert_png(fig2_png(table.iloc[0:0], tmp_path / "f0.png", "Nothing"), 1_000)


def _episodes() -> pd.DataFrame:
    rows = []
    base = [0.2, 0.3, 0.4, 0.5, 0.6, 0.4]  # six seeds: enough pairs for p < 0.05
    for env in ("hanoi", "messenger"):
        for model in ("phi4", "llama"):
            for history, shift in (("full", 0.0), ("summary", 0.3)):
                for seed, b in enumerate(base):
                    score = round(b + shift + 0.01 * seed * (model == "llama"), 10)
                    rows.append(
                        {
                            "run": f"{env}/{model}/{history}",
                            "env": env,
                            "model": model,
                            "agent": "react",
                            "history": history,
                            "seed": seed,
                            "status": "done",
                            "score": score,
                            "success": score > 0.8,
                            "agent_calls": 10,
                            "agent_in": 1000,
                            "agent_out": 50,
                        }
                    )
        for seed in range(3):
            rows.append(
                {
                    "run": f"{env}/expert",
                    "env": env,
                    "model": "-",
                    "agent": "expert",
                    "history": "-",
                    "seed": seed,
                    "status": "done",
                    "score": 1.0,
                    "success": True,
                    "agent_calls": 0,
                    "agent_in": 0,
                    "agent_out": 0,
                }
            )
    return pd.DataFrame(rows)


def test_write_report_with_layout(tmp_path: Path) -> None:
    layout = {"rows": ["model"], "columns": ["env", "history"]}
    paths = write_report(
        _episodes(), {"history": "full"}, tmp_path, "Granularity", layout=layout, adjust="none"
    )
    assert set(paths) == {"markdown", "json", "scores", "score_per_token", "table", "fig2"}
    _assert_png(paths["table"])
    _assert_png(paths["fig2"])
    md = paths["markdown"].read_text()
    assert "](table.png)" in md and "](fig2.png)" in md
    assert "| Model | hanoi · full | hanoi · summary | messenger · full |" in md
    assert "0.70 (0.14)*" in md
    assert "- summary: improves in 4/4, degrades in 0/4, neutral in 0/4" in md
    data = json.loads(paths["json"].read_text())
    assert data["layout"] == layout
    assert [r["model"] for r in data["pivot"]] == ["phi4", "llama", "privileged expert"]
    assert data["pivot"][0]["hanoi · summary"] == "0.70 (0.14)*"
    assert data["counts"] == {"summary": {"improves": 4, "degrades": 0, "neutral": 0, "total": 4}}


def test_write_report_layout_without_baseline_and_bad_layout(tmp_path: Path) -> None:
    layout = {"rows": "model", "columns": ["env", "history"]}
    paths = write_report(_episodes(), None, tmp_path / "plain", "Plain", layout=layout)
    assert "table" in paths and "fig2" not in paths
    md = paths["markdown"].read_text()
    assert "](table.png)" in md and "fig2" not in md
    data = json.loads(paths["json"].read_text())
    assert data["counts"] == {} and len(data["pivot"]) == 3
    assert not (tmp_path / "plain" / "fig2.png").exists()
    with pytest.raises(ValueError, match="columns"):
        write_report(_episodes(), None, tmp_path / "bad", "Bad", layout={"rows": ["model"]})
    with pytest.raises(ValueError, match="same pivot cell"):
        write_report(
            _episodes(),
            None,
            tmp_path / "clash",
            "Clash",
            layout={"rows": ["model"], "columns": ["env"]},
        )
    assert not (tmp_path / "bad").exists() and not (tmp_path / "clash").exists()
