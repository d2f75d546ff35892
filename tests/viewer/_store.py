"""The viewer tests' store (scripted Hanoi episodes with rollouts) and readers of a page."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

MOVE = "Action: Move the top disk of rod {} to the top of rod {}"
#: a reply that tries markup, a script and a right-to-left override on the page
PLANTED = (
    "<script>document.title='pwned';document.body.insertAdjacentHTML('beforeend',"
    "'<p id=pwned>ran</p>')</script><img src=x onerror=\"document.title='pwned'\"> "
    "abc\u202edcba " + MOVE.format("A", "C")
)
#: the act replies and summaries alike come from this script, so `summary` (two calls a
#: step) falls out of step with `full` (one) after the first step
REPLIES = [
    PLANTED,
    MOVE.format("A", "B"),
    "ZEBRA note: " + MOVE.format("C", "B"),
    MOVE.format("B", "A"),
    MOVE.format("A", "C"),
]


#: a loop on Hanoi (its small disk from rod A to B and back, then one illegal move twice):
#: steps 2-4 return to earlier states, steps 5 and 6 repeat step 4's action and change nothing
LOOP = [MOVE.format("A", "B"), MOVE.format("B", "A"), MOVE.format("A", "B"), MOVE.format("B", "A")]


def build(tmp: Path, replies: list[str] | None = None, **over: Any) -> Path:
    """A finished experiment (full, summary, oracle-summary on Hanoi, the model replying
    ``replies``, :data:`REPLIES` by default); its store's path."""
    script = tmp / "r.json"
    script.write_text(json.dumps(REPLIES if replies is None else replies))
    cfg: dict[str, Any] = {
        "name": "v",
        "model": f"scripted:{script}",
        "seeds": [0, 1],
        "rollouts": 2,
        "max_steps": 4,
        "grid": {"env": ["hanoi"], "history": ["full", "summary", "oracle-summary"]},
        "out": str(tmp),
        "cache": None,
        "expert": False,
        "random": False,
    }
    cfg.update(over)
    exp = parse_experiment(cfg)
    res = run_sync(exp, progress=None)
    assert res.failed == 0
    return exp.out_dir / "store.sqlite"


def read_js(path: Path) -> list[list[Any]]:
    """The arguments of each ``window.f(...)`` call a data file makes (one a line)."""
    out = []
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"window\.\w+\((.*)\);", line)
        assert m, line[:100]
        out.append(json.loads("[" + m.group(1) + "]"))
    return out


def decode(items: list[Any]) -> list[str]:
    """The page's ``decodeTexts``, indexes in UTF-16 units as JavaScript counts them."""
    out: list[str] = []
    for it in items:
        if isinstance(it, str):
            out.append(it)
            continue
        ref, p, mid, s = it
        r = out[ref].encode("utf-16-le", "surrogatepass")
        head = r[: 2 * p].decode("utf-16-le", "surrogatepass")
        tail = r[len(r) - 2 * s :].decode("utf-16-le", "surrogatepass")
        out.append(head + mid + tail)
    return out


def episode_file(page: Path, i: int) -> dict[str, Any]:
    """The decoded data of the page's episode number ``i`` (from the file its index names)."""
    row = index_of(page)["episodes"][i]
    run = index_of(page)["runs"][row[0]]["id"]
    want = f"{run}|{row[1]}|{row[2]}"
    (key, data), *_ = [c for c in read_js(page.parent / "data" / row[8]) if c[0] == want]
    texts = decode(data["texts"])
    for st in data["steps"]:
        for f in ("action", "reply", "view", "grounding", "observation", "memory", "gold"):
            st[f] = texts[st[f]]
        for c in st["calls"]:
            c["text"] = texts[c["text"]]
            c["messages"] = [(role, texts[j]) for role, j in c["messages"]]
        st["queries"] = [(texts[q], texts[a]) for q, a in st["queries"]]
    data["key"] = key
    return data


def index_of(page: Path) -> dict[str, Any]:
    """The index a page embeds."""
    m = re.search(
        r"<script type='application/json' id='statelab-index'>(.*?)</script>", page.read_text()
    )
    assert m
    return json.loads(m.group(1))


def loop_store(tmp: Path) -> Path:
    """One Hanoi episode of 6 steps replaying :data:`LOOP` (its last reply repeats)."""
    grid = {"env": ["hanoi"], "history": ["full"]}
    return build(tmp, LOOP, name="loop", seeds=[0], rollouts=1, max_steps=6, grid=grid)


def stored_rows(store: Path, sql: str, *args: object) -> list[tuple]:
    """``sql`` over the store's tables as the store reads them back (texts resolved, so the
    test's SQL names ``view``, ``memory`` and ``messages`` in either layout)."""
    st = Store(store, readonly=True)
    mem = sqlite3.connect(":memory:")
    try:
        for name in ("runs", "episodes", "steps", "calls", "queries"):
            st.table(name).to_sql(name, mem, index=False)
        return mem.execute(sql, args).fetchall()
    finally:
        st.close()
        mem.close()
