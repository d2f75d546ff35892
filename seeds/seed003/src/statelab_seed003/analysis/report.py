"""Seed 003's report section: Tables 1 and 5, paired differences, Fig. 6, provenance."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from statelab.analysis._md import md_cell, md_text
from statelab.analysis.audit.measures import LAG_THRESHOLD, form_of
from statelab.analysis.sections import Blocks, ReportInputs, report_section
from statelab.analysis.stats import RESAMPLES, Interval, clustered_bootstrap, paired_bootstrap
from statelab.run.provenance import OPENINGS_TABLE, PROVENANCE_TABLE  # noqa: F401 - registers
from statelab.run.store import Store
from statelab_seed003.analysis.audit import AUDITED_TABLE
from statelab_seed003.analysis.episodes import audit_rows, by_game, cooking_cells
from statelab_seed003.analysis.measures import AUDIT_RUNS_TABLE, AUDIT_TABLE, LEAK_TABLE


# -- the report section --------------------------------------------------------------------
def _cells(st: Store) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """Episodes of cooking runs (keyed by row: form, reader model, writer), the audit rows
    (each with its run's row) and the failed episodes per run (left out)."""
    cells = cooking_cells(st)
    return cells.eps, audit_rows(st, cells.row_of_run, AUDIT_TABLE), cells.failed


def success_by(eps: list[dict[str, Any]], row: str, lag: int, budget: int | None) -> Interval:
    """Success of one cell (a row at F′ and B; ``budget`` None: every budget) over games."""
    got = {
        e["seed"]: e["success"]
        for e in eps
        if e["row"] == row and e["lag"] == lag and (e["budget"] == budget or budget is None)
    }
    return paired_bootstrap(got)


def kappa_by(
    audit: list[dict[str, Any]], row: str, lag: int, budget: int | None, key: str = "kappa"
) -> Interval:
    """Mean κ (or ``key``) of one cell's audited points, game-clustered."""
    by: dict[int, list[float]] = {}
    for r in audit:
        if (
            r.get("row", form_of(r["history"])) == row
            and r["lag"] == lag
            and r["budget"] == budget
            and r[key] is not None
        ):
            by.setdefault(int(r["seed"]), []).append(float(r[key]))
    return clustered_bootstrap(by)


def _fig6(audit: list[dict[str, Any]], path: Path) -> bool:
    pts = [r for r in audit if r["kappa"] is not None and r["rewrites"] is not None]
    if not pts:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name in sorted({r["history"] for r in pts}):
        by: dict[int, list[float]] = {}
        for r in pts:
            if r["history"] == name:
                by.setdefault(int(r["rewrites"]), []).append(float(r["kappa"]))
        xs = sorted(by)
        ax.plot(xs, [float(np.mean(by[x])) for x in xs], marker="o", label=name)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("rewrites since the reveal")
    ax.set_ylabel("mean κ (nats)")
    ax.set_title("Write-time regret by rewrites since the reveal")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def seed003_markdown(st: Store, out_dir: Path) -> tuple[list[str], dict[str, Path]]:
    eps, audit, failed = _cells(st)
    files: dict[str, Path] = {}
    md: list[str] = []
    if not eps:
        return md, files
    lags = sorted({e["lag"] for e in eps})
    budgets = sorted({e["budget"] for e in eps if e["budget"] is not None})
    forms = sorted(
        {e["row"] for e in eps}, key=lambda f: (f.split(" ")[0] in ("full", "expert"), f)
    )
    md += ["## Seed 003: success and write-time regret by lag and budget", ""]
    md += [
        "Success: % of games won (mean over games, paired percentile bootstrap over games, "
        f"{RESAMPLES:,} resamples). κ, β: nats at audited decision points (game-clustered "
        "bootstrap); `statelab audit CONFIG` computes them. Rows tagged reads-privileged are "
        "references (never shown to a writer).",
        "",
    ]
    md += _partial_audit(st, audit)
    if failed:
        md += [
            f"Failed episodes: {sum(failed.values())} (in {len(failed)} run(s)), left out of "
            "every cell below.",
            "",
        ]
    # Table 5: every budget
    privileged = {e["row"] for e in eps if e["privileged"]}

    def label(form: str) -> str:  # a table cell: the spelling as text
        return md_cell(f"{form} †" if form in privileged else form)

    head = "| history | B | games | " + " | ".join(f"F′={f} success" for f in lags)
    head += " | " + " | ".join(f"F′={f} κ" for f in lags) + " |"
    md += [
        "### Table 5: success (%) and κ by lag and budget",
        "",
        head,
        "|" + "---|" * (3 + 2 * len(lags)),
    ]
    for form in forms:
        for b in [None] if _unbudgeted(form) else budgets:
            cell = [e for e in eps if e["row"] == form and (b is None or e["budget"] == b)]
            if not cell:
                continue
            games = len({e["seed"] for e in cell})
            succ = [success_by(eps, form, f, b).text(1, 100) for f in lags]
            kap = [kappa_by(audit, form, f, b).text(2) for f in lags]
            md.append(f"| {label(form)} | {b or '–'} | {games} | " + " | ".join(succ + kap) + " |")
    md += ["", "† reads privileged data: a reference row, never shown to a writer.", ""]
    # Table 1: B = 128 (else the smallest budget run), with the next budget's success
    if budgets:
        b1 = 128 if 128 in budgets else budgets[0]
        b2 = next((b for b in budgets if b > b1), None)
        md += [
            f"### Table 1: success (%) and mean κ by lag at B = {b1}"
            + (f", with B = {b2} success" if b2 else ""),
            "",
        ]
        head = (
            "| history | "
            + " | ".join(f"F′={f}: success · κ · β" + (f" · B={b2}" if b2 else "") for f in lags)
            + " |"
        )
        md += [head, "|" + "---|" * (1 + len(lags))]
        for form in forms:
            if form.split(" ")[0] == "expert":
                continue
            b = None if _unbudgeted(form) else b1
            if not any(e["row"] == form and e["budget"] == b for e in eps):
                continue
            cells = []
            for f in lags:
                c = (
                    f"{success_by(eps, form, f, b).text(1, 100)} · "
                    f"{kappa_by(audit, form, f, b).text(2)} · "
                    f"{kappa_by(audit, form, f, b, 'beta').text(2)}"
                )
                if b2 and not _unbudgeted(form):
                    c += f" · {success_by(eps, form, f, b2).text(1, 100)}"
                cells.append(c)
            md.append(f"| {label(form)} | " + " | ".join(cells) + " |")
        md.append("")
    md += _paired_vs_summary(eps, lags, budgets, label)
    if audit:
        defined = [r for r in audit if r.get("rel_lag") is not None]
        tried = [r for r in audit if r.get("rel_gain") is not None]
        n_points = len({(r["run"], r["seed"]) for r in audit})
        md += [f"Audited: {len(audit)} decision points in {n_points} episodes."]
        if tried:
            reveal = sum(int(r.get("rel_is_reveal") or 0) for r in defined)
            lags_seen = [int(r["rel_lag"]) for r in defined]
            md += [
                f"Relevance lag (leave-one-chunk-out, undefined below {LAG_THRESHOLD} nats): "
                f"defined at {len(defined)} of {len(tried)} points"
                + (
                    f"; median lag {float(np.median(lags_seen)):.0f} steps; the cookbook chunk "
                    f"was the most consequential at {reveal} of {len(defined)}"
                    if defined
                    else ""
                )
                + "."
            ]
        path = out_dir / "seed003_fig6.png"
        if _fig6(audit, path):
            files["seed003_fig6"] = path
            md += ["", f"![κ by rewrites since the reveal (Fig. 6)]({path.name})"]
        md.append("")
    leaks = st.rows(LEAK_TABLE)
    audited = st.rows(AUDITED_TABLE)
    if audited:
        md += [
            f"Leak check: {len(leaks)} privileged strings found in prompts before they were"
            " observed"
            + (
                f" (first: run {leaks[0]['run']} seed {leaks[0]['seed']} step "
                f"{leaks[0]['t']}: {leaks[0]['secret']!r})"
                if leaks
                else ""
            )
            + " (reads-privileged runs are not checked).",
            "",
        ]
    if audited and audited[-1].get("failed"):
        failed = json.loads(audited[-1]["failed"] or "[]")
        if failed:
            md += [
                f"Audit: {len(failed)} episode(s) could not be audited (first: {failed[0]}).",
                "",
            ]
    md += _openings(st) + _audits_and_amendments(st) + _provenance(st)
    data = {"audit_points": len(audit), "leaks": len(leaks)}
    path = out_dir / "seed003.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    files["seed003"] = path
    return md, files


def _unbudgeted(row: str) -> bool:
    return row.split(" ")[0] in ("full", "expert")


def _pair(e: dict[str, Any]) -> tuple[Any, ...]:
    """What a row shares with its baseline: the reader, the writer and the filler protocol."""
    return e["model"], e["writer"], e.get("protocol")


def _paired_vs_summary(
    eps: list[dict[str, Any]], lags: list[int], budgets: list[int], label: Callable[[str], str]
) -> list[str]:
    """Success differences from ``bounded:summary`` at the same B and F′, paired by game."""
    base = "bounded:summary"
    # the same reader, writer and filler protocol's summary row is each row's baseline
    base_of = {
        e["row"]: next(
            (z["row"] for z in eps
             if z["form"] == base and _pair(z) == _pair(e)),
            None,
        )
        for e in eps if e["budget"] is not None and e["form"] != base
    }  # fmt: skip
    others = sorted(r for r, b in base_of.items() if b is not None)
    if not others:
        return []
    md = [
        f"### Success difference from {base} (points, paired bootstrap over games)",
        "",
        "| history | B | " + " | ".join(f"F′={f}" for f in lags) + " |",
        "|" + "---|" * (2 + len(lags)),
    ]
    for form in others:
        for b in budgets:
            cells = []
            for f in lags:
                a = {e["seed"]: e["success"] for e in eps
                     if e["row"] == form and e["lag"] == f and e["budget"] == b}  # fmt: skip
                z = by_game(eps, row=base_of[form], lag=f, budget=b)
                cells.append(paired_bootstrap(a, z).text(1, 100) if a and z else "–")
            if any(c != "–" for c in cells):
                md.append(f"| {label(form)} | {b} | " + " | ".join(cells) + " |")
    return [*md, ""]


def _partial_audit(st: Store, audit: list[dict[str, Any]]) -> list[str]:
    """A warning line when the κ and β below come from an audit that did not finish (killed,
    or still running): its tables then hold only the episodes it reached."""
    runs = st.rows(AUDIT_RUNS_TABLE)
    last = runs[-1] if runs else None
    if last is not None and last["finished"] is None:
        return [
            f"**Partial audit**: the last `statelab audit` (started {last['started']}) did"
            f" not finish: it audited {last['audited']} of {last['episodes']} episodes, so κ"
            " and β below cover only those; run it again for the rest.",
            "",
        ]
    if audit and last is None and not st.rows(AUDITED_TABLE):
        return [
            "**Partial audit**: the audit rows below come from an audit that did not finish"
            " (no finished `statelab audit` is recorded); run it again for every episode.",
            "",
        ]
    return []


def _openings(st: Store) -> list[str]:
    rows = st.rows("test_openings")
    if not rows:
        return ["The test split was not opened (no `statelab open-test` in this store).", ""]
    first = rows[0]
    lines = [
        f"**The test split was opened**: {len(rows)} opening(s) recorded in this store; "
        f"the {first['split']!r} split of {first['env']!r} first at {first['opened']}."
    ]
    for r in rows:
        writers = json.loads(r["writers"] or "[]")
        names = md_text(", ".join(sorted({w["history"] for w in writers})))
        forced = " (FORCED: a second opening)"
        lines.append(
            f"- opening {r['opening']} of that split{forced if r['forced'] else ''}"
            f" at {r['opened']}, config hash {r['config_hash'][:12]}, writers: {names}"
        )
    return [*lines, ""]


def _audits_and_amendments(st: Store) -> list[str]:
    """The recorded audits of the test split (``statelab audit --open-test``) and the
    amendments of the ledger beside the store's experiment folder (``statelab amend``)."""
    from statelab.run.ledgers import AUDITS_TABLE, amendments

    lines = []
    audits = st.rows(AUDITS_TABLE)
    if audits:
        forced = sum(int(a["forced"] or 0) for a in audits)
        lines.append(
            f"**The test split was audited**: {len(audits)} audit(s) recorded, first at "
            f"{audits[0]['started']}" + (f"; {forced} FORCED (a rerun)" if forced else "") + "."
        )
    for a in amendments(st.path.parent.parent):
        after = f", after {a['openings_before']} test opening(s)" if a["openings_before"] else ""
        stage = f" (before {a['stage']})" if a.get("stage") else ""
        lines.append(md_text(f"- amendment {a['id']}{stage}, {a['recorded']}{after}: {a['text']}"))
    return [*lines, ""] if lines else []


def _provenance(st: Store) -> list[str]:
    rows = st.rows("provenance")
    if not rows:
        return []
    models = {(r["model"], (r["model_hash"] or "–")[:12]) for r in rows}
    adapters = {(r["history"], r["history_hash"][:12]) for r in rows if r["history_hash"]}
    lines = [
        "Provenance: " + md_text("; ".join(f"model {m} sha256 {h}" for m, h in sorted(models)))
    ]
    lines += [md_text(f"- history {h} names files with sha256 {x}") for h, x in sorted(adapters)]
    return [*lines, ""]


@report_section("seed003-diagnostics", order=10)
def _section(inputs: ReportInputs) -> Blocks | None:
    """Seed 003's tables (success, κ, β by lag and budget), Fig. 6, leaks, test openings."""
    md, files = seed003_markdown(inputs.store, inputs.out_dir)
    return Blocks(["\n".join(md) + "\n"], files) if md else None
