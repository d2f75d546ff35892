"""Issue 37 on the page's data: loops in the strip (a repeated action, a return to an earlier
state), each episode's figures (tokens, cost, model time, decoding) and each call's, checked
against stores with known answers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.viewer._store import episode_file, index_of, stored_rows

from statelab.viewer import write_viewer
from statelab.viewer._episode import loops
from statelab.viewer._index import ALPHABET, REPEAT, REVISIT


def _copy(store: Path, to: Path) -> Path:
    """A copy of ``store`` to change (SQLite's backup: the WAL's pages included)."""
    to.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(store), sqlite3.connect(to / "store.sqlite")
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return to / "store.sqlite"


def _sql(store: Path, *statements: tuple[str, tuple[object, ...]]) -> None:
    db = sqlite3.connect(store)
    try:
        for sql, args in statements:
            db.execute(sql, args)
        db.commit()
    finally:
        db.close()


def test_loops_name_the_run_of_one_action_and_the_latest_earlier_state() -> None:
    steps = [
        {"t": 1, "action": "a", "env_state": "s1", "observation": "x"},
        {"t": 2, "action": "b", "env_state": "s0", "observation": "y"},
        {"t": 3, "action": "b", "env_state": "s0", "observation": "x"},
        {"t": 4, "action": "b", "env_state": "s2", "observation": "x"},
        {"t": 5, "action": "a", "env_state": "s1", "observation": ""},
    ]
    assert loops(steps, "s0") == [
        (1, None, "state"), (1, 0, "state"), (2, 2, "state"), (3, None, "state"), (1, 1, "state"),
    ]  # fmt: skip
    # without a start state nothing returns to the start
    assert [b for _, b, _ in loops(steps)] == [None, None, 2, None, 1]
    # no fingerprints: the observation after the step decides (an empty one never matches)
    bare = [{k: v for k, v in s.items() if k != "env_state"} for s in steps]
    assert loops(bare, "s0") == [
        (1, None, "observation"), (1, None, "observation"), (2, 1, "observation"),
        (3, 3, "observation"), (1, None, "observation"),
    ]  # fmt: skip
    assert loops([]) == []


def test_a_looping_episode_is_marked_on_its_strip(looping: Path, tmp_path: Path) -> None:
    # the store's own fingerprints: A->B, B->A twice, then B->A (illegal) twice
    (start,) = stored_rows(looping, "SELECT start_state FROM episodes")[0]
    states = [s for (s,) in stored_rows(looping, "SELECT env_state FROM steps ORDER BY t")]
    actions = [a for (a,) in stored_rows(looping, "SELECT action FROM steps ORDER BY t")]
    assert start and len(states) == 6 and len(set(states)) == 2
    assert states[1] == states[3] == states[4] == states[5] == start != states[0] == states[2]
    assert actions[3] == actions[4] == actions[5] != actions[2]
    page = write_viewer(looping, tmp_path / "v").page
    (row,) = index_of(page)["episodes"]
    assert index_of(page)["marks"] == {"repeat": REPEAT, "revisit": REVISIT}
    none, back, both = ALPHABET[0], ALPHABET[REVISIT], ALPHABET[REPEAT | REVISIT]
    assert row[11] == none + back * 3 + both * 2 == "022233"
    assert row[12][8:] == [3, 5]  # longest run of one action, returns to an earlier state
    steps = episode_file(page, 0)["steps"]
    assert [(s["t"], s["repeat"], s["back"], s["back_by"]) for s in steps] == [
        (1, 1, None, "state"), (2, 1, 0, "state"), (3, 1, 1, "state"),
        (4, 1, 2, "state"), (5, 2, 4, "state"), (6, 3, 5, "state"),
    ]  # fmt: skip


def test_without_fingerprints_the_observation_marks_the_return(
    looping: Path, tmp_path: Path
) -> None:
    old = _copy(looping, tmp_path / "old")  # a store written before states were fingerprinted
    _sql(
        old,
        ("UPDATE steps SET env_state = NULL", ()),
        ("UPDATE episodes SET start_state = NULL", ()),
    )
    obs = [o for (o,) in stored_rows(old, "SELECT observation FROM steps ORDER BY t")]
    assert obs[0] == obs[2] and obs[1] == obs[3] and obs[4] == obs[5] != obs[3]
    page = write_viewer(old, tmp_path / "v").page
    steps = episode_file(page, 0)["steps"]
    assert [(s["back"], s["back_by"]) for s in steps] == [
        (None, "observation"), (None, "observation"), (1, "observation"),
        (2, "observation"), (None, "observation"), (5, "observation"),
    ]  # fmt: skip
    assert index_of(page)["episodes"][0][11] == "002213"


def test_an_episode_s_figures_come_from_its_calls(store: Path, tmp_path: Path) -> None:
    priced = _copy(store, tmp_path / "priced")
    (run,) = stored_rows(priced, "SELECT run FROM runs WHERE history='summary'")[0]
    key = (run, 0, 0)
    where = "run=? AND seed=? AND rollout=?"
    _sql(
        priced,
        (f"UPDATE calls SET decoding='trie', cost=0.002, latency=0.5 WHERE {where}"
         " AND kind='act'", key),
        (f"UPDATE calls SET decoding='free', cost=NULL, latency=0.25 WHERE {where}"
         " AND kind!='act'", key),
        (f"UPDATE calls SET cached=1, latency=0 WHERE {where} AND t=1 AND i=0", key),
    )  # fmt: skip
    sql = f"SELECT kind, count(*) FROM calls WHERE {where} GROUP BY kind"
    kinds = dict(stored_rows(priced, sql, *key))
    (writer,) = set(kinds) - {"act"}
    n, m = kinds["act"], kinds[writer]
    assert n == m == 4  # one acting and one summary call a step
    tok_in, tok_out = stored_rows(
        priced, f"SELECT sum(input_tokens), sum(output_tokens) FROM calls WHERE {where}", *key
    )[0]
    assert (tok_in, tok_out) == stored_rows(
        priced, f"SELECT agent_in + aux_in, agent_out + aux_out FROM episodes WHERE {where}", *key
    )[0]
    page = write_viewer(priced, tmp_path / "v").page
    idx = index_of(page)
    rows = {
        (idx["runs"][r[0]]["id"], int(r[1]), r[2]): (i, r) for i, r in enumerate(idx["episodes"])
    }
    i, row = rows[key]
    assert row[12] == [
        tok_in, tok_out,
        0.006,  # three acting calls at $0.002; the cached one cost nothing, the writer's no price
        3 * 0.5 + 4 * 0.25,
        "free+trie",  # as many of each: by name
        f"act: trie 4; {writer}: free 4",
        8, 1, row[12][8], row[12][9],
    ]  # fmt: skip
    # an episode left as the scripted model stored it: no price, no model time to speak of
    _, other = rows[(run, 1, 0)]
    assert other[12][2] is None and other[12][4] == "free" and other[12][6:8] == [8, 0]
    # every call's figures are in the episode's file
    want = stored_rows(
        priced,
        f"SELECT t, i, kind, latency, decoding, cost, cached FROM calls WHERE {where}"
        " ORDER BY t, i",
        *key,
    )
    got = [
        (s["t"], c["i"], c["kind"], c["latency"], c["decoding"], c["cost"], int(c["cached"]))
        for s in episode_file(page, i)["steps"]
        for c in s["calls"]
    ]
    assert got == [tuple(w) for w in want]
    sql = f"SELECT latency FROM steps WHERE {where} ORDER BY t"
    assert [s["latency"] for s in episode_file(page, i)["steps"]] == [
        x for (x,) in stored_rows(priced, sql, *key)
    ]
