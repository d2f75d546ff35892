"""Reports and the runner never parse a component spelling: the registries do
(``Registry.parse``/``split``/``without``), and a run's recorded arguments and tags say the
rest. This scans the analysis and run packages for the ways a spelling gets taken apart."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "statelab"
SCANNED = ("analysis", "run")
#: what taking a spelling apart looks like (a colon or slash split, a regex on the text, the
#: agent's name compared with the expert's instead of its ``expert`` tag)
PATTERNS = {
    "split on ':'": re.compile(r"""\.(?:r?split|r?partition)\(\s*["']:["']"""),
    "split on '/'": re.compile(r"""\.(?:r?split|r?partition)\(\s*["']/["']"""),
    "regex": re.compile(r"\bre\.(?:search|sub|match|fullmatch|findall|finditer|split)\("),
    "expert by name": re.compile(
        r"""agent\W{0,3}\s*(?:==|!=)\s*(?:EXPERT\b|["']expert["'])"""
        r"""|(?:EXPERT\b|["']expert["'])\s*(?:==|!=)\s*\S*agent"""
    ),
}
#: lines that match a pattern without parsing a spelling: (file, text in the line, why)
ALLOWED = (
    ("analysis/agentmetrics.py", 're.sub(r"[^a-z0-9 ]+"', "normalises a model's written state"),
    ("analysis/agentmetrics.py", 're.split(r",|\\band\\b"', "splits a model's inventory"),
    ("analysis/audit/stateacc.py", 're.sub(r"[^a-z0-9 ]+"', "normalises a model's written state"),
    ("analysis/budget.py", 're.sub(r"[^A-Za-z0-9_.-]+"', "a file name from a family name"),
    ("analysis/inspect_log.py", 're.sub(r"[^A-Za-z0-9_.-]+"', "a log file name from a run's name"),
    ("run/store.py", 're.fullmatch(r"[a-z][a-z0-9_]*"', "checks an axis name for SQL"),
    ("run/provenance.py", 'spelling.partition(":")', "model specs: the model backends' grammar"),
    ("run/provenance.py", "re.split(r\"[:=?&,#]\"", "looks for paths in any spelling"),
)


def offences(root: Path = SRC) -> list[str]:
    """``file:line: kind: text`` of every line that takes a spelling apart."""
    out = []
    for package in SCANNED:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for n, line in enumerate(path.read_text().splitlines(), 1):
                for kind, pattern in PATTERNS.items():
                    if not pattern.search(line):
                        continue
                    if any(rel == f and text in line for f, text, _ in ALLOWED):
                        continue
                    out.append(f"{rel}:{n}: {kind}: {line.strip()}")
    return out


def test_no_spelling_is_parsed_outside_the_registries() -> None:
    assert offences() == []


def test_the_scan_finds_what_it_is_for(tmp_path: Path) -> None:
    bad = tmp_path / "analysis"
    bad.mkdir()
    (tmp_path / "run").mkdir()
    (bad / "x.py").write_text(
        'lag = env.partition(":")[2]\n'
        'family = env.split("/")[0]\n'
        'm = re.search(r":(\\d+)$", history)\n'
        'experts = df[df["agent"] == "expert"]\n'
        "if row.agent != EXPERT: pass\n"
        'ok = "expert" in tags("agent", agent)\n'
    )
    kinds = [o.split(": ")[1] for o in offences(tmp_path)]
    assert kinds == ["split on ':'", "split on '/'", "regex", "expert by name", "expert by name"]
