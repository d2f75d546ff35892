"""The page's data against the store: episodes, rollouts, counts, runs chosen exactly, text
made safe, and the per-episode files that decode back to every stored text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.viewer._store import decode, episode_file, index_of, read_js, stored_rows
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.viewer import write_viewer
from statelab.viewer._index import ALPHABET, INVALID, PENALTY, REJECTED, REWARD, UNPARSED
from statelab.viewer._text import TextTable, clean

runner = CliRunner()


def _rows(store: Path, sql: str, *args: object) -> list[tuple]:
    return stored_rows(store, sql, *args)


def _labels(store: Path) -> dict[str, str]:
    return dict(_rows(store, "SELECT run, label FROM runs"))


def test_every_episode_has_its_own_steps_rollouts_apart(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from statelab.viewer import html

    monkeypatch.setattr(html, "CHUNK", 5)  # 12 episodes in three data files
    res = write_viewer(store, tmp_path / "v")
    assert sorted(p.name for p in (tmp_path / "v" / "data").glob("c*.js")) == [
        "c0.js", "c1.js", "c2.js",
    ]  # fmt: skip
    idx = index_of(res.page)
    n = _rows(store, "SELECT count(*) FROM episodes")[0][0]
    assert n == 3 * 2 * 2 and res.shown == res.total == n and len(idx["episodes"]) == n
    assert idx["rollouts"] == 2 and idx["seeds"] == ["0", "1"]
    for i, row in enumerate(idx["episodes"]):
        run = idx["runs"][row[0]]["id"]
        seed, rollout = int(row[1]), row[2]
        data = episode_file(res.page, i)
        assert data["key"] == f"{run}|{seed}|{rollout}"
        want = _rows(
            store,
            "SELECT t, action, reply, memory, view FROM steps"
            " WHERE run=? AND seed=? AND rollout=? ORDER BY t",
            run, seed, rollout,
        )  # fmt: skip
        got = [(s["t"], s["action"], s["reply"], s["memory"], s["view"]) for s in data["steps"]]
        assert got == [tuple(clean(v) if isinstance(v, str) else v for v in w) for w in want]


def test_every_message_of_every_call_is_in_the_episode_file(store: Path, tmp_path: Path) -> None:
    import json

    res = write_viewer(store, tmp_path / "v")
    idx = index_of(res.page)
    for i, row in enumerate(idx["episodes"]):
        run, seed, rollout = idx["runs"][row[0]]["id"], int(row[1]), row[2]
        calls = _rows(
            store,
            "SELECT t, kind, messages, text FROM calls"
            " WHERE run=? AND seed=? AND rollout=? ORDER BY t, i",
            run, seed, rollout,
        )  # fmt: skip
        data = episode_file(res.page, i)
        got = [
            (s["t"], c["kind"], c["messages"], c["text"]) for s in data["steps"] for c in s["calls"]
        ]
        want = [
            (t, k, [(m["role"], clean(m["content"])) for m in json.loads(msgs)], clean(text))
            for t, k, msgs, text in calls
        ]
        assert got == want and len(got) >= len(data["steps"])


def test_the_strip_has_one_cell_per_step_with_its_validity(store: Path, tmp_path: Path) -> None:
    idx = index_of(write_viewer(store, tmp_path / "v").page)
    for row in idx["episodes"]:
        run, seed, rollout = idx["runs"][row[0]]["id"], int(row[1]), row[2]
        steps = _rows(
            store,
            "SELECT valid, parsed, reward, meta FROM steps"
            " WHERE run=? AND seed=? AND rollout=? ORDER BY t",
            run, seed, rollout,
        )  # fmt: skip
        want = "".join(
            ALPHABET[
                (0 if v else INVALID)
                | (0 if p else UNPARSED)
                | (REWARD if r > 0 else 0)
                | (PENALTY if r < 0 else 0)
                | (REJECTED if '"rejected"' in (m or "") else 0)
            ]
            for v, p, r, m in steps
        )
        assert row[7] == want and len(want) == row[6]
    # the scripted moves include illegal ones: the strips say so
    assert any(ALPHABET.index(c) & INVALID for row in idx["episodes"] for c in row[7])


@pytest.mark.parametrize("name", ["summary", "history=summary", "RUN", "LABEL"])
def test_summary_is_not_oracle_summary(store: Path, tmp_path: Path, name: str) -> None:
    (run, label), *_ = _rows(store, "SELECT run, label FROM runs WHERE history='summary'")
    name = {"RUN": run, "LABEL": label}.get(name, name)
    res = write_viewer(store, tmp_path / "v", runs=[name])
    idx = index_of(res.page)
    assert [r["id"] for r in idx["runs"]] == [run] and label.endswith("| summary | tagged-list")
    assert res.shown == res.selected == 4 and res.total == 12
    assert {idx["runs"][e[0]]["id"] for e in idx["episodes"]} == {run}


def test_an_unknown_run_is_refused_naming_the_runs(store: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        write_viewer(store, tmp_path / "v", runs=["summ"])
    for label in _labels(store).values():
        assert label in str(e.value)
    res = runner.invoke(app, ["view", str(store), "--run", "summ", "--out", str(tmp_path / "c")])
    assert res.exit_code == 2
    (line,) = res.stderr.splitlines()
    assert line.startswith("error: --run 'summ': no such run") and "| oracle-summary |" in line
    assert not (tmp_path / "c").exists()


def test_limit_counts_are_stated_right(store: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["view", str(store), "--limit", "3", "--out", str(tmp_path / "l")])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.strip() == str(tmp_path / "l" / "index.html")
    assert res.stderr.strip() == (
        "3 episodes of 12 in the store, the first 3 written (--limit); 1 run x 2 seeds"
    )
    idx = index_of(tmp_path / "l" / "index.html")
    assert (idx["shown"], idx["selected"], idx["total"]) == (3, 12, 12)
    assert sorted(p.name for p in (tmp_path / "l" / "data").iterdir()) == ["c0.js", "text.js"]
    assert [c[0].split("|")[1:] for c in read_js(tmp_path / "l" / "data" / "c0.js")] == [
        ["0", "0"], ["0", "1"], ["1", "0"],
    ]  # fmt: skip


def test_an_unknown_seed_is_refused(store: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["view", str(store), "--seed", "7", "--out", str(tmp_path / "s")])
    assert res.exit_code == 2
    assert res.stderr.strip() == (
        "error: --seed 7: no episode of this experiment has this seed; seeds: 0, 1"
    )


def test_model_text_never_reaches_the_page_as_markup(store: Path, tmp_path: Path) -> None:
    res = write_viewer(store, tmp_path / "v")
    page = res.page.read_text()
    assert page.count("<script") == 2  # the index (JSON) and the page's own script
    files = list((res.page.parent / "data").iterdir())
    for f in files:
        raw = f.read_text()
        assert "<" not in raw and "\u202e" not in raw and raw.isascii()
    replies = [s["reply"] for i in range(res.shown) for s in episode_file(res.page, i)["steps"]]
    planted = [r for r in replies if "<script>" in r]
    assert planted and all("abc[U+202E]dcba" in r and "\u202e" not in r for r in planted)


def test_the_text_index_maps_each_line_to_its_episodes(store: Path, tmp_path: Path) -> None:
    res = write_viewer(store, tmp_path / "v")
    ((text,),) = read_js(res.page.parent / "data" / "text.js")
    idx = index_of(res.page)
    for field in ("reply", "memory"):
        for line, eps in zip(text[field]["lines"], text[field]["eps"], strict=True):
            want = []
            for i, row in enumerate(idx["episodes"]):
                run, seed, rollout = idx["runs"][row[0]]["id"], int(row[1]), row[2]
                cells = _rows(
                    store,
                    f"SELECT {field} FROM steps WHERE run=? AND seed=? AND rollout=?",
                    run, seed, rollout,
                )  # fmt: skip
                if any(line in (x.strip() for x in clean(c or "").splitlines()) for (c,) in cells):
                    want.append(i)
            assert eps == want, line
    zebra = [e for x, e in zip(*text["reply"].values(), strict=True) if "ZEBRA" in x]
    assert zebra and zebra[0] == list(range(12))  # every run replied ZEBRA once


def test_a_page_path_keeps_its_data_beside_it(store: Path, tmp_path: Path) -> None:
    res = write_viewer(store, tmp_path / "pages" / "v.html", seeds=[1])
    assert res.page == tmp_path / "pages" / "v.html"
    assert (tmp_path / "pages" / "v_data" / "c0.js").is_file()
    assert "data-dir='v_data'" in res.page.read_text() and res.shown == 6


texts = st.text(alphabet=st.sampled_from("ab\n😀é\u202e<x"), max_size=80)


@given(st.lists(st.tuples(st.sampled_from(["s", "t"]), texts), max_size=12))
def test_a_text_table_decodes_to_its_texts(pairs: list[tuple[str, str]]) -> None:
    table = TextTable()
    ids = [table.add(text, slot) for slot, text in pairs]
    got = decode(table.items)
    assert [got[i] for i in ids] == [clean(t) for _, t in pairs]


def test_a_growing_text_is_kept_once() -> None:
    table = TextTable()
    history = ""
    for t in range(30):
        history += f"step {t}: Move the top disk of rod A to the top of rod C (invalid)\n"
        table.add(history + "Choose one of the six moves.", "prompt")
    size = sum(len(i) if isinstance(i, str) else len(i[2]) for i in table.items)
    assert size < 30 * 80 + 100  # linear in the steps, where the texts sum to ~37,000
    assert decode(table.items)[-1] == history + "Choose one of the six moves."


def test_shared_prefix_and_suffix_match_a_plain_scan() -> None:
    import random

    from statelab.viewer import _text

    rng = random.Random(0)

    def plain(a: str, b: str) -> int:
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        return k

    for _ in range(3000):
        a, b = ("".join(rng.choice("ab") for _ in range(rng.randint(0, 20))) for _ in "ab")
        most = rng.randint(0, 25)
        assert _text._shared_prefix(a, b) == plain(a, b)
        assert _text._shared_suffix(a, b, most) == min(most, plain(a[::-1], b[::-1]))


def test_short_labels_keep_what_tells_runs_apart() -> None:
    from statelab.viewer._index import short_labels

    model = "hanoi | scripted:r.json | act | {} | tagged-list"
    labels = [model.format("full"), model.format("summary"), "hanoi | expert"]
    assert short_labels(labels) == ["full", "summary", "expert"]
    assert short_labels(["a | x", "a | x"]) == ["a | x", "a | x"]  # nothing tells them apart
    assert short_labels(["only | one"]) == ["only | one"]


def test_the_page_script_never_parses_text_as_markup() -> None:
    from statelab.viewer.html import SCRIPTS, _asset

    code = "\n".join(_asset(n) for n in SCRIPTS)
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "Function(",
    ):
        assert sink not in code, sink
    assert "createTextNode" in code


def test_episode_rows_reads_one_episode_in_order(store: Path) -> None:
    from statelab.run.store import Store

    run, seed, rollout = _rows(store, "SELECT run, seed, rollout FROM episodes LIMIT 1")[0]
    s = Store(store)
    try:
        steps = s.episode_rows("steps", run, seed, rollout)
        calls = s.episode_rows("calls", run, seed, rollout)
        with pytest.raises(ValueError):
            s.episode_rows("runs", run, seed, rollout)
    finally:
        s.close()
    assert [r["t"] for r in steps] == [1, 2, 3, 4]
    assert {(r["run"], r["seed"], r["rollout"]) for r in steps + calls} == {(run, seed, rollout)}
    assert [(c["t"], c["i"]) for c in calls] == sorted((c["t"], c["i"]) for c in calls)
    assert all(isinstance(c["messages"], list) and c["messages"] for c in calls)


def test_runs_add_up_and_an_unknown_axis_is_no_run(store: Path, tmp_path: Path) -> None:
    res = write_viewer(store, tmp_path / "v", runs=["full", "summary", "history=full"])
    idx = index_of(res.page)
    assert [r["short"] for r in idx["runs"]] == ["full", "summary"] and res.shown == 8
    with pytest.raises(ConfigError, match="--run 'nosuch=full': no such run"):
        write_viewer(store, tmp_path / "w", runs=["nosuch=full"])
