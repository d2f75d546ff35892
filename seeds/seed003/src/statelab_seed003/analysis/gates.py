"""Seed 003's pre-registered gates, the selection rule, and the whole analysis plan run
(``statelab seed003 gates PLAN``, ``statelab seed003 tables PLAN``: with
:mod:`~statelab_seed003.analysis.lagtables`).

G1 gates are evaluated on the validation store; G2 gates once on the test store, and only
when its test split was opened (``statelab open-test``): a test store with no recorded opening
is refused, and one opened more than once is evaluated but every G2 line says how many
openings there were. Verdicts: :class:`~statelab_seed003.analysis.plan.Gate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statelab.analysis.stats import Interval, paired_bootstrap
from statelab.core import ConfigError
from statelab.run.ledgers import latest_selection, ledger_entries, record_selection
from statelab.run.store import Store
from statelab_seed003.analysis.episodes import (
    Cells,
    audit_rows,
    by_protocol,
    cooking_cells,
    tag_headers,
)
from statelab_seed003.analysis.lagtables import lag_sections
from statelab_seed003.analysis.measures import AUDIT_TABLE
from statelab_seed003.analysis.pairwise import pairwise_md
from statelab_seed003.analysis.plan import SELECTED, Gate, Plan, ledger_dir
from statelab_seed003.analysis.tables import (
    fig4,
    fig4_md,
    gain_slope,
    kappa_lines,
    lines_md,
    plot_lines,
    pooled_success,
    table2,
    table14,
)


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    interval: Interval
    verdict: str
    note: str = ""

    def line(self) -> str:
        g, i = self.gate, self.interval
        scale = 100.0  # success fractions as points (a slope: points per filler step)
        stat = i.text(2 if g.kind == "slope" else 1, scale)
        bound = "lower bound" if g.rule == "lower" else "mean"
        unit = "points/step" if g.kind == "slope" else "points"
        return (
            f"{g.id} ({g.split}) {g.what}: {stat} {unit}, {i.games} games; pass iff the {bound}"
            f" > {g.above * scale:g}: {self.verdict.upper()}"
            + (f" ({self.note})" if self.note else "")
        )


def verdict(gate: Gate, interval: Interval) -> str:
    """``pass`` iff the statistic's lower bound (rule ``lower``) or mean (rule ``mean``) is
    strictly above the gate's threshold; ``fail`` otherwise, and with no games."""
    if not interval.games:
        return "fail"
    value = interval.low if gate.rule == "lower" else interval.mean
    return "pass" if value > gate.above else "fail"


def gate_interval(gate: Gate, plan: Plan, eps: list[dict[str, Any]]) -> Interval:
    """The gate's statistic over games, from the split's episodes."""
    model = plan.readers[gate.reader] if gate.reader else None
    mine = [e for e in eps if (gate.budget is None or e["budget"] == gate.budget)
            and e.get("protocol", "post") == gate.protocol]  # fmt: skip
    a = plan.writers[gate.a]
    if gate.kind == "level":
        return paired_bootstrap(pooled_success(mine, a, gate.lags, model))
    assert gate.b is not None
    b = plan.writers[gate.b]
    if gate.kind == "slope":
        return paired_bootstrap(gain_slope(mine, a, b, gate.lags, model))
    return paired_bootstrap(
        pooled_success(mine, a, gate.lags, model), pooled_success(mine, b, gate.lags, model)
    )


def evaluate_gate(gate: Gate, plan: Plan, eps: list[dict[str, Any]], note: str = "") -> GateResult:
    i = gate_interval(gate, plan, eps)
    return GateResult(gate, i, verdict(gate, i), note)


# -- the stores -----------------------------------------------------------------------------
def store_path(where: str) -> Path:
    """A store named directly (``.sqlite``) or by its experiment config."""
    if where.endswith(".sqlite"):
        return Path(where)
    from statelab.run.config import load_experiment

    return load_experiment(where).out_dir / "store.sqlite"


def read_store(where: str) -> tuple[Cells, list[dict[str, Any]], int]:
    path = store_path(where)
    if not path.is_file():
        raise ConfigError(f"{path}: no store (run the experiment first)")
    st = Store(path, readonly=True)
    try:
        cells = cooking_cells(st)
        audit = audit_rows(st, cells.row_of_run, AUDIT_TABLE)
        openings = len(st.rows("test_openings"))
    finally:
        st.close()
    return cells, audit, openings


def test_pending(plan: Plan) -> str | None:
    """Why the plan's G2 gates cannot be evaluated yet (no test store, or its split never
    opened), or None when they can: G1 and the selection come first, on validation, and the
    test split is opened only after them."""
    if not any(g.split == "test" for g in plan.gates) or plan.test is None:
        return None
    path = store_path(plan.test)
    if not path.is_file():
        return f"no test store yet ({path}): run the test opening after G1 and the selection"
    st = Store(path, readonly=True)
    try:
        opened = bool(st.rows("test_openings"))
    finally:
        st.close()
    return None if opened else "the test split is not opened yet (`statelab open-test`)"


def evaluate_gates(
    plan: Plan, splits: tuple[str, ...] = ("validation", "test"), selected: str | None = None
) -> list[GateResult]:
    """Every gate of the plan on ``splits``' stores (G2: refused unless the split was
    opened); a gate naming ``selected`` reads the writer ``selected`` names (default: the
    plan's :func:`choose`), and its line says which."""
    names = {x for g in plan.gates if g.split in splits for x in (g.a, g.b)}
    if SELECTED in names:
        selected = selected or choose(plan).selected
        plan = plan.model_copy(update={"writers": {**plan.writers,
                                                   SELECTED: plan.writers[selected]}})  # fmt: skip
    out: list[GateResult] = []
    for split in splits:
        gates = [g for g in plan.gates if g.split == split]
        if not gates:
            continue
        where = getattr(plan, split)
        if where is None:
            raise ConfigError(f"{plan.name}: gates on {split} need `{split}:` (its store)")
        cells, _, openings = read_store(where)
        note = ""
        if split == "test":
            if not openings:
                raise ConfigError(
                    f"{where}: its test split was never opened (`statelab open-test`); G2 is "
                    "evaluated once, on the opened split"
                )
            note = f"test split opened {openings} times" if openings > 1 else ""
        for g in gates:
            which = f"selected: {selected}" if SELECTED in (g.a, g.b) else ""
            out.append(evaluate_gate(g, plan, cells.eps, "; ".join(x for x in (which, note) if x)))
    return out


def select(plan: Plan) -> list[tuple[str, float, int]]:
    """The selection rule on validation: (candidate, mean success, games), best first; ties
    keep the plan's order."""
    sel = plan.selection
    if sel is None or plan.validation is None:
        raise ConfigError(f"{plan.name}: selection needs `selection:` and `validation:`")
    cells, _, _ = read_store(plan.validation)
    model = plan.readers[sel.reader] if sel.reader else None
    eps = [e for e in cells.eps if e["budget"] == sel.budget and e["protocol"] == sel.protocol]
    got = []
    for c in sel.candidates:
        per = pooled_success(eps, plan.writers[c], sel.lags, model)
        got.append((c, sum(per.values()) / len(per) if per else float("nan"), len(per)))
    order = sorted(range(len(got)), key=lambda i: (-(got[i][1] if got[i][2] else -1.0), i))
    return [got[i] for i in order]


@dataclass(frozen=True)
class Choice:
    """The writer the plan's selection stands on: validation's best (:func:`select`) until
    the test split is opened, then the one recorded before the opening (``recorded``, its
    ledger entry), with ``note`` saying when validation now ranks another first."""

    selected: str
    ranking: list[tuple[str, float, int]]
    recorded: dict[str, Any] | None = None
    note: str = ""


def choose(plan: Plan) -> Choice:
    """The selection the plan's gates and the test follow (:class:`Choice`)."""
    ranking = select(plan)
    top = ranking[0][0]
    out = ledger_dir(plan)
    if out is not None and ledger_entries(out):
        e = latest_selection(out, plan.name)
        if e is not None:
            note = "" if e["selected"] == top else f"validation now ranks {top!r} first"
            return Choice(str(e["selected"]), ranking, e, note)
    return Choice(top, ranking)


def record_choice(
    plan: Plan, choice: Choice, results: list[GateResult], by: str = ""
) -> tuple[dict[str, Any], bool] | None:
    """Record ``choice`` in the selections ledger beside the plan's test opening (id: the
    plan's name), with the validation gates evaluated on it and the ranking; None when the
    plan names no test. Returns the entry and whether it was written now."""
    out = ledger_dir(plan)
    if out is None or plan.validation is None:
        return None
    evaluated = [
        {"id": r.gate.id, "verdict": r.verdict, "mean": r.interval.mean,
         "low": r.interval.low, "high": r.interval.high, "games": r.interval.games}
        for r in results if r.gate.split == "validation" and SELECTED in (r.gate.a, r.gate.b)
    ]  # fmt: skip
    ranking = [{"writer": n, "mean": m, "games": g} for n, m, g in choice.ranking]
    return record_selection(out, plan.name, choice.selected, store=store_path(plan.validation),
                            evaluated=evaluated, ranking=ranking, by=by)  # fmt: skip


# -- the tables and figures -----------------------------------------------------------------
def _test_tables(
    plan: Plan, cells: Cells, audit: list[dict[str, Any]], out: Path, suffix: str
) -> tuple[list[str], dict[str, Path]]:
    """Tables 2 and 14 and Figures 9 and 10 of one protocol's test cells."""
    md: list[str] = []
    files: dict[str, Path] = {}
    if plan.table2:
        t = plan.table2
        eps = [e for e in cells.eps if e["budget"] == t.budget]
        md += table2(eps, plan.writers, t.rows, plan.readers, t.contrasts, t.pooled_lags)
    if plan.table14:
        r = plan.table14.reader
        means = {w: plan.writers[w] for w in plan.table14.means}
        md += table14(cells.eps, plan.table14.budgets, plan.readers[r] if r else None, means)
    models = {run: v["model"] for run, v in cells.runs.items()}
    lags = sorted({int(e["lag"]) for e in cells.eps})
    for key, title in (("fig9", "Figure 9: κ by F′ for K"), ("fig10", "Figure 10: κ by F′")):
        groups = getattr(plan, key)
        if not groups:
            continue
        lines = kappa_lines(audit, {k: plan.writers[w] for k, w in groups.items()}, lags, models)
        md += lines_md(lines, f"### {title} (test split, game-clustered 95% intervals)")
        path = out / f"seed003_{key}{suffix}.png"
        if plot_lines(lines, path, title + suffix.replace("_", " · filler ")):
            files[key + suffix.replace("_", " ")] = path
            md += [f"![{title}]({path.name})", ""]
    return md, files


def _pairwise(plan: Plan) -> list[str]:
    cfg = plan.pairwise
    assert cfg is not None
    where = getattr(plan, cfg.split)
    if where is None:
        raise ConfigError(f"{plan.name}: pairwise on {cfg.split} needs `{cfg.split}:`")
    cells, _, _ = read_store(where)
    readers = {cfg.reader: plan.readers[cfg.reader]} if cfg.reader else plan.readers
    md = [f"Store (pairwise, {cfg.split}): {store_path(where)}.", ""]
    for p, c, _ in by_protocol(cells, []):
        md += tag_headers(pairwise_md(c.eps, plan.writers, cfg, readers), p)
    return md


def tables(
    plan: Plan, out: Path | None = None, fig4_records: list[dict[str, Any]] | None = None
) -> tuple[list[str], dict[str, Path]]:
    """Tables 2 and 14, Figures 9, 10 and 4 (as far as the plan names them), from the test
    store; Figure 4 from ``fig4_records``
    (:func:`statelab_seed003.train.retrain.fig4_records` of the plan's score files); §5.5's
    pairwise differences
    (:mod:`~statelab_seed003.analysis.pairwise`); then Table 7, the κ contrasts, the lag grid
    and the a*-tie check (:func:`~statelab_seed003.analysis.lagtables.lag_sections`, each
    from its own store); markdown lines and the files written. A store holding both filler
    protocols gives each section once per protocol (headings marked ``· filler pre|post``,
    figures ``seed003_fig9_<protocol>.png``)."""
    out = Path(out or plan.out)
    out.mkdir(parents=True, exist_ok=True)
    md: list[str] = [f"## Seed 003 on the test split: {plan.name}", ""]
    files: dict[str, Path] = {}
    if plan.test is not None:
        cells, audit, openings = read_store(plan.test)
        md.append(f"Test store: {store_path(plan.test)}; test split openings recorded: {openings}.")
        if cells.failed:
            md.append(f"Failed episodes left out: {sum(cells.failed.values())}.")
        md.append("")
        for p, c, a in by_protocol(cells, audit):
            got, figs = _test_tables(plan, c, a, out, f"_{p}" if p else "")
            md += tag_headers(got, p)
            files.update(figs)
    if fig4_records is not None:
        md += fig4_md(fig4(fig4_records))
    if plan.pairwise is not None:
        md += _pairwise(plan)
    md += lag_sections(plan, read_store, store_path)
    path = out / "seed003_tables.md"
    path.write_text("\n".join(md) + "\n")
    files["tables"] = path
    return md, files


__all__ = [
    "Choice",
    "GateResult",
    "choose",
    "evaluate_gate",
    "evaluate_gates",
    "read_store",
    "record_choice",
    "select",
    "store_path",
    "tables",
    "verdict",
]
