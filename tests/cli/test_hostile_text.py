"""Issue 23 item 12: a run label is any text. A model spelling (a scripted file's name) holding
an ESC sequence, U+202E, live HTML and Markdown images and links reaches neither the terminal
(progress lines) nor report.md as anything but plain text: no control character survives,
and report.md rendered as Markdown holds no tag, image or link made of it (Fig. 2's list and
every table cell included)."""

from __future__ import annotations

import io
import json
import re

import pytest

from statelab.analysis._md import md_cell, md_text
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync

HOSTILE = "r\x1b[31m\x1b]0;t\x07\u202e<img src=x onerror=alert(1)>![i](http:e.png)[l](http:e)|"
MOVE = "Action: Move the top disk of rod A to the top of rod C"


def _render(md: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def test_md_text_and_cells_render_as_text():
    for value in (HOSTILE, r"[x\](u)", "[a][b]", "[r]: http://e", "<http://e>", "a\\|b"):
        html = _render(f"| h |\n|---|\n| {md_cell(value)} |\n\n- {md_text(value)}\n")
        assert not re.search(r"<(img|a|script)\b", html), (value, html)
        assert html.count("<td>") == 1  # one cell: no | split it
    assert md_cell("CI [0.1, 0.3]") == "CI [0.1, 0.3]" and md_cell("p<0.05") == "p<0.05"
    assert "\x1b" not in md_text(HOSTILE) and "\u202e" not in md_text(HOSTILE)


@pytest.fixture
def hostile_run(tmp_path):
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps([MOVE]))
    hostile = tmp_path / f"{HOSTILE}.json"
    hostile.write_text(json.dumps([MOVE]))
    exp = parse_experiment(
        {
            "name": "hostile",
            "model": f"scripted:{plain}",
            "seeds": [0, 1],
            "grid": {"env": ["hanoi"], "model": [f"scripted:{plain}", f"scripted:{hostile}"]},
            "baseline": {"model": f"scripted:{plain}"},
            "report": {"rows": ["model"], "columns": ["env"]},
            "out": str(tmp_path / "results"),
            "cache": None,
            "max_steps": 2,
            "expert": False,
        }
    )
    progress = io.StringIO()
    res = run_sync(exp, progress=progress)
    assert res.failed == 0, res.failures
    return exp, progress.getvalue()


def test_progress_lines_carry_no_terminal_controls(hostile_run):
    _, progress = hostile_run
    assert "onerror" in progress  # the label is shown, as text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", progress)


def test_report_md_shows_a_hostile_label_as_text(hostile_run):
    from statelab.analysis.reporting import make_report

    exp, _ = hostile_run
    rep = make_report(exp.out_dir / "store.sqlite", exp.out_dir / "report")
    md = rep.files["markdown"].read_text()
    assert "## Difference from baseline" in md and "onerror" in md
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", md)
    html = _render(md)
    # the report's own images are its PNGs and its own links go to the viewer's page; none
    # comes from the label, and no other tag or link
    images = re.findall(r'<img src="([^"]*)"', html)
    assert images and all(src.endswith(".png") and "http" not in src for src in images)
    links = re.findall(r"<a\b[^>]*>", html)
    assert links and all(re.fullmatch(r'<a href="\.\./view/index\.html#run=[0-9a-f]+">', a)
                         for a in links)  # fmt: skip
    assert not re.search(r"<script\b|onerror=alert\(1\)>", html)
    fig2 = md.split("## Difference from baseline")[1]
    assert "&lt;img src=x onerror=alert(1)>" in fig2  # Fig. 2's list: the label as text
