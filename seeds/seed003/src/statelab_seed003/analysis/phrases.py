"""The command-phrase fraction of each run's stored states (seed 003, NO-HINT: section 5.3).

The states are the ``memory`` of every stored step (the state the reader saw before acting,
its header line dropped); the measure is :func:`statelab.state.phrases.command_fraction`,
averaged over a run's states that hold at least one clause.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from statelab.state.phrases import mean_command_fraction


def command_fractions(store: Any | str | Path) -> dict[str, dict[str, Any]]:
    """Per run of a store (a :class:`~statelab.run.store.Store` or its path): its history
    spelling, the mean command-phrase fraction of its states (None: no state with text) and
    how many states it averages. Runs whose steps hold no memory are left out."""
    from statelab.run.store import Store

    st = store if isinstance(store, Store) else Store(Path(store), readonly=True)
    out: dict[str, dict[str, Any]] = {}
    for r in st.rows("runs", ["run", "spec"]):
        memories = [s["memory"] for s in st.rows("steps", ["memory"], {"run": r["run"]})]
        if not any(memories):
            continue
        mean, n = mean_command_fraction(m for m in memories if m)
        history = json.loads(r["spec"] or "{}").get("history", "")
        out[r["run"]] = {"history": history, "command_fraction": mean, "states": n}
    return out
