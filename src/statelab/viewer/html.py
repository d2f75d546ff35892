"""Episodes of a results store as one self-contained HTML page (no scripts, no fetches).

Every value from the store goes through :func:`html.escape`: model replies, maps and
summaries are untrusted text.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from statelab.run.store import Store

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1100px}
h2{border-bottom:1px solid #ccc;padding-bottom:.2em}
details{margin:.4em 0;border:1px solid #ddd;border-radius:4px;padding:.3em .6em}
summary{cursor:pointer}
pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;border-radius:3px;font-size:12px}
.bad{color:#b00020}.ok{color:#1b5e20}.meta{color:#555;font-size:13px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 8px;font-size:13px}
"""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value))


def _step(row: pd.Series, calls: pd.DataFrame) -> str:
    verdict = "ok" if row["valid"] and row["parsed"] else "bad"
    head = (
        f"t={int(row['t'])} <b>{_e(row['action'])}</b> "
        f"<span class='{verdict}'>reward {_e(row['reward'])}"
        f"{'' if row['parsed'] else ' (unparsed reply)'}</span> "
        f"<span class='meta'>in {int(row['agent_in'])} / out {int(row['agent_out'])} tokens"
        f"{f', aux {int(row.aux_in)}' if row['aux_in'] else ''}</span>"
    )
    parts = [f"<details><summary>{head}</summary>"]
    parts.append(f"<p class='meta'>prompt view</p><pre>{_e(row['view'])}</pre>")
    if row.get("grounding"):
        parts.append(f"<p class='meta'>grounding</p><pre>{_e(row['grounding'])}</pre>")
    parts.append(f"<p class='meta'>reply</p><pre>{_e(row['reply'])}</pre>")
    parts.append(f"<p class='meta'>observation after</p><pre>{_e(row['observation'])}</pre>")
    if row.get("memory"):
        parts.append(f"<p class='meta'>memory after</p><pre>{_e(row['memory'])}</pre>")
    for c in calls.itertuples():
        if c.kind != "act":
            parts.append(f"<p class='meta'>{_e(c.kind)} call</p><pre>{_e(c.text)}</pre>")
    parts.append("</details>")
    return "".join(parts)


def render_episodes(
    store_path: str | Path, run: str | None = None, seeds: list[int] | None = None, limit: int = 50
) -> str:
    """HTML of the episodes (optionally of one run label substring and some seeds)."""
    store = Store(store_path)
    try:
        eps = store.episodes_frame()
        steps = store.table("steps")
        calls = store.table("calls")
    finally:
        store.close()
    if run:
        eps = eps[eps["label"].str.contains(run, regex=False)]
    if seeds:
        eps = eps[eps["seed"].isin(seeds)]
    body = [
        f"<h1>statelab trajectories: {_e(Path(store_path).parent.name)}</h1>",
        f"<p class='meta'>{len(eps)} episodes shown (of at most {limit})</p>",
    ]
    for ep in eps.head(limit).itertuples():
        body.append(
            f"<h2>{_e(ep.label)} · seed {int(ep.seed)}</h2><p class='meta'>status {_e(ep.status)}"
            f" · score {_e(round(float(ep.score or 0), 4))} · success {_e(bool(ep.success))}"
            f" · steps {_e(ep.steps)}{' · ' + _e(ep.error) if ep.error else ''}</p>"
        )
        ep_steps = steps[(steps.run == ep.run) & (steps.seed == ep.seed)].sort_values("t")
        ep_calls = calls[(calls.run == ep.run) & (calls.seed == ep.seed)]
        for row in ep_steps.itertuples(index=False):
            s = pd.Series(row._asdict())
            body.append(_step(s, ep_calls[ep_calls.t == s["t"]]))
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>statelab</title>"
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>"
    )


def write_viewer(store_path: str | Path, out: str | Path, **kw: object) -> Path:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_episodes(store_path, **kw))  # type: ignore[arg-type]
    return path
