"""The page in a real headless browser (Debian's chromium through Selenium and
chromium-driver), against the store it was written from: the runs x seeds table, two runs
side by side with their aligned steps and first divergence, the prompt diff, the acting
prompt on demand, the filters, and a planted script that does not run.

Skipped, saying why, where chromium, chromium-driver or selenium is missing
(``apt-get install chromium chromium-driver``; ``pip install 'statelab[browser]'``).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.viewer._store import stored_rows

from statelab.viewer import write_viewer
from statelab.viewer._text import clean

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no headless browser: apt-get install chromium chromium-driver",
)
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--window-size=1300,900",
)


@pytest.fixture(scope="module")
def page(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_viewer(store, tmp_path_factory.mktemp("page")).page


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = str(CHROMIUM)
    for arg in FLAGS:
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=opts)
    driver.implicitly_wait(5)
    try:
        yield driver
    finally:
        driver.quit()


def _open(b: Any, page: Path, hash_: str = "") -> Any:
    b.get("about:blank")
    b.get(page.resolve().as_uri() + hash_)
    return b


def _css(b: Any, sel: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return b.find_elements(By.CSS_SELECTOR, sel)


def _wait(b: Any, sel: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(b, 10).until(ec.presence_of_element_located((By.CSS_SELECTOR, sel)))


def _errors(b: Any) -> list[str]:
    return [e["message"] for e in b.get_log("browser") if e["level"] == "SEVERE"]


def _q(store: Path, sql: str, *args: object) -> list[tuple]:
    return stored_rows(store, sql, *args)


def _run(store: Path, history: str) -> str:
    return _q(store, "SELECT run FROM runs WHERE history=?", history)[0][0]


def _actions(store: Path, run: str, seed: int, rollout: int) -> list[tuple[int, str]]:
    sql = "SELECT t, action FROM steps WHERE run=? AND seed=? AND rollout=? ORDER BY t"
    return [(int(t), a) for t, a in _q(store, sql, run, seed, rollout)]


def _prompt(store: Path, run: str, seed: int, rollout: int, t: int) -> list[tuple[str, str]]:
    (msgs,) = _q(
        store,
        "SELECT messages FROM calls WHERE run=? AND seed=? AND rollout=? AND t=? AND i=0",
        run, seed, rollout, t,
    )[0]  # fmt: skip
    return [(m["role"], clean(m["content"])) for m in json.loads(msgs)]


def test_the_table_has_a_cell_per_episode_linking_to_it(store: Path, page: Path, browser):  # type: ignore[no-untyped-def]
    b = _open(browser, page)
    _wait(b, "table.grid")
    rows = _css(b, "table.grid tbody tr")
    assert [r.get_attribute("data-run") for r in rows] == [
        r for (r,) in _q(store, "SELECT run FROM runs ORDER BY rowid")
    ]
    cells = _css(b, "table.grid a.cell")
    assert len(cells) == 12  # 3 runs x 2 seeds x 2 rollouts
    scores = {
        (r, str(s), str(k)): round(x, 3)
        for r, s, k, x in _q(store, "SELECT run, seed, rollout, score FROM episodes")
    }
    for c in cells:
        run = c.find_element("xpath", "./ancestor::tr").get_attribute("data-run")
        key = (run, c.get_attribute("data-seed"), c.get_attribute("data-rollout"))
        assert float(c.text) == scores[key]
    cells[-1].click()  # the last: oracle-summary, seed 1, rollout 1
    _wait(b, "details.step")
    want = _actions(store, _run(store, "oracle-summary"), 1, 1)
    got = [
        (int(d.get_attribute("data-t")), d.find_element("css selector", "b.action").text)
        for d in _css(b, "details.step")
    ]
    assert got == want  # this rollout's steps only, not both rollouts'
    assert _errors(b) == []


def test_the_episode_list_holds_only_its_table_when_all_fit(store: Path, page: Path, browser):  # type: ignore[no-untyped-def]
    # replaceChildren(table, null) appended the text "null" under the table (issue 37)
    b = _open(browser, page)
    _wait(b, "#list table.episodes")
    kids = b.execute_script(
        "return Array.from(document.getElementById('list').childNodes)"
        ".map((n) => n.nodeType === 1 ? n.tagName : 'text:' + n.textContent)"
    )
    assert kids == ["TABLE"]
    assert _errors(b) == []


def test_two_runs_side_by_side_align_by_step_and_mark_the_divergence(
    store: Path, page: Path, browser
):  # type: ignore[no-untyped-def]
    from selenium.webdriver.support.ui import Select

    full, summary = _run(store, "full"), _run(store, "summary")
    b = _open(browser, page)
    Select(_wait(b, "#cmp-a")).select_by_value(full)
    Select(_css(b, "#cmp-b")[0]).select_by_value(summary)
    Select(_css(b, "#cmp-seed")[0]).select_by_value("1")
    Select(_css(b, "#cmp-rollout")[0]).select_by_value("1")
    _css(b, "#cmp-go")[0].click()
    _wait(b, "tr.step-row")
    a, s = _actions(store, full, 1, 1), _actions(store, summary, 1, 1)
    rows = _css(b, "tr.step-row")
    got = [
        (int(r.get_attribute("data-t")), r.find_element("css selector", "td.act-a .action").text,
         r.find_element("css selector", "td.act-b .action").text)
        for r in rows
    ]  # fmt: skip
    assert got == [(t, x, y) for (t, x), (_, y) in zip(a, s, strict=True)]
    first = next(t for (t, x), (_, y) in zip(a, s, strict=True) if x != y)
    assert first == 2  # summary's writer takes a scripted reply each step: it falls out at 2
    marked = _css(b, "tr.first-divergence")
    assert [m.get_attribute("data-t") for m in marked] == [str(first)]
    assert _css(b, "#divergence")[0].get_attribute("data-t") == str(first)
    assert [c.get_attribute("data-t") for c in _css(b, ".strip span.diverge")] == [str(first)] * 2
    # the divergence opens on its prompt diff: B's lines that A's prompt lacks are the + lines
    pa = "\n".join(f"--- {r} ---\n{c}" for r, c in _prompt(store, full, 1, 1, first)).split("\n")
    pb = "\n".join(f"--- {r} ---\n{c}" for r, c in _prompt(store, summary, 1, 1, first)).split("\n")
    detail = f'tr.detail[data-t="{first}"] .diff'
    added = Counter(d.get_attribute("textContent")[2:] for d in _css(b, f"{detail} .add"))
    removed = Counter(d.get_attribute("textContent")[2:] for d in _css(b, f"{detail} .del"))
    assert "Summary of past actions:" in added and "Past trajectory:" in removed
    assert added <= Counter(pb) and removed <= Counter(pa)
    assert Counter(pb) - Counter(pa) <= added and Counter(pa) - Counter(pb) <= removed
    assert len(pa) - removed.total() == len(pb) - added.total()  # what is left is shared
    assert _css(b, "tr.step-row.same")[0].get_attribute("data-t") == "1"
    assert _errors(b) == []


def test_the_acting_prompt_shows_every_message(store: Path, page: Path, browser):  # type: ignore[no-untyped-def]
    run = _run(store, "summary")
    b = _open(browser, page, f"#run={run}&seed=0&rollout=1")
    step = _wait(b, 'details.step[data-t="3"]')
    step.find_element("css selector", "summary").click()
    step.find_element("css selector", "button.show-prompt").click()
    shown = [
        (r.text, p.get_attribute("textContent"))
        for r, p in zip(
            step.find_elements("css selector", ".msg-role"),
            step.find_elements("css selector", "pre.msg"),
            strict=True,
        )
    ]
    assert shown == _prompt(store, run, 0, 1, 3) and len(shown) == 2


def test_the_filters_pick_episodes(store: Path, page: Path, browser):  # type: ignore[no-untyped-def]
    full = _run(store, "full")
    b = _open(browser, page)
    _wait(b, "tr.ep-row")
    assert len(_css(b, "tr.ep-row")) == 12
    box = _css(b, "#f-text")[0]
    box.send_keys("ZEBRA")  # in every run's replies; in a memory only where it is the history
    from selenium.webdriver.support.ui import Select, WebDriverWait

    Select(_css(b, "#f-where")[0]).select_by_value("memory")
    WebDriverWait(b, 10).until(lambda d: len(_css(d, "tr.ep-row")) == 4)
    links = b.execute_script(  # read at once: a late redraw replaces the rows
        "return [...document.querySelectorAll('tr.ep-row a')].map(a => a.getAttribute('href'))"
    )
    assert len(links) == 4
    assert all(f"run={full}&" in h for h in links)
    assert "4 of 12 episodes match" in _css(b, "#f-count")[0].text
    Select(_css(b, "#f-where")[0]).select_by_value("reply")
    WebDriverWait(b, 10).until(lambda d: len(_css(d, "tr.ep-row")) == 12)
    scores = _q(store, "SELECT count(*) FROM episodes WHERE score >= 0.3")[0][0]
    _css(b, "#f-min")[0].send_keys("0.3")
    WebDriverWait(b, 10).until(lambda d: len(_css(d, "tr.ep-row")) == scores)
    assert 0 < scores < 12
    assert b.execute_script("return document.querySelectorAll('a.cell.dim').length") == 12 - scores


def test_a_planted_script_does_not_run(store: Path, page: Path, browser):  # type: ignore[no-untyped-def]
    run = _run(store, "full")
    b = _open(browser, page, f"#run={run}&seed=0&rollout=0")
    step = _wait(b, 'details.step[data-t="1"]')
    step.find_element("css selector", "summary").click()
    assert b.title == "statelab · v"
    assert _css(b, "#pwned") == [] and _css(b, "img") == []
    reply = step.find_element("css selector", "pre").get_attribute("textContent")
    assert reply.startswith("<script>document.title='pwned'")
    assert "abc[U+202E]dcba" in reply and "\u202e" not in b.page_source
    assert _errors(b) == []


def test_find_in_an_episode_marks_the_steps_that_hold_the_text(store: Path, page: Path, browser):  # type: ignore[no-untyped-def]
    run = _run(store, "full")
    b = _open(browser, page, f"#run={run}&seed=1&rollout=0")
    _wait(b, "details.step")
    _css(b, "#ep-find")[0].send_keys("zebra")
    want = sorted(
        {
            int(t)
            for (t,) in _q(
                store,
                "SELECT t FROM steps WHERE run=? AND seed=1 AND rollout=0 AND"
                " (reply || memory || view || observation || action) LIKE '%zebra%'",
                run,
            )
        }
        | {
            int(t)
            for (t,) in _q(
                store,
                "SELECT c.t FROM calls c JOIN steps s USING (run, seed, rollout, t) WHERE"
                " c.run=? AND c.seed=1 AND c.rollout=0 AND c.i < s.agent_calls"
                " AND c.messages LIKE '%zebra%'",
                run,
            )
        }
    )
    got = [int(d.get_attribute("data-t")) for d in _css(b, "details.step.found")]
    assert got == want == [3, 4]  # its reply at 3, then in the history
    assert [int(c.get_attribute("data-t")) for c in _css(b, "#ep-strip span.found")] == want
    assert _css(b, "#ep-found")[0].text == f"{len(want)} of 4 steps hold it"


# -- issue 37: sortable columns, loop marks, every call on demand, ended episodes marked ----
@pytest.fixture(scope="module")
def priced_page(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page of a copy of the store whose episodes cost $9 (seed 0, rollout 0), $10
    (seed 0, rollout 1), $100 (seed 1, rollout 0) and nothing known (seed 1, rollout 1)."""
    import sqlite3

    tmp = tmp_path_factory.mktemp("priced")
    src, dst = sqlite3.connect(store), sqlite3.connect(tmp / "store.sqlite")
    src.backup(dst)
    src.close()
    dst.execute("UPDATE calls SET cost = NULL")
    dst.execute(
        "UPDATE calls SET cost = CASE WHEN seed = 0 AND rollout = 0 THEN 9 WHEN seed = 0 THEN 10"
        " WHEN rollout = 0 THEN 100 END WHERE t = 1 AND i = 0"
    )
    dst.commit()
    dst.close()
    return write_viewer(tmp / "store.sqlite", tmp / "v").page


def _row_order(b: Any) -> list[int]:
    return [int(i) for i in b.execute_script(
        "return [...document.querySelectorAll('tr.ep-row')].map(r => r.dataset.i)"
    )]  # fmt: skip


def test_a_header_click_sorts_the_episode_list(priced_page: Path, browser):  # type: ignore[no-untyped-def]
    from tests.viewer._store import index_of

    rows = index_of(priced_page)["episodes"]
    cost = [r[12][2] for r in rows]
    assert sorted({c for c in cost if c is not None}) == [9, 10, 100] and cost.count(None) == 3
    b = _open(browser, priced_page)
    _wait(b, "tr.ep-row")
    assert _row_order(b) == list(range(12))  # the store's order until a header is clicked
    head = _css(b, 'th[data-col="cost"]')[0]
    assert head.get_attribute("aria-sort") == "none"
    head.click()
    known = [i for i in range(12) if cost[i] is not None]
    unknown = [i for i in range(12) if cost[i] is None]
    # numeric ($9 before $10 before $100, where text would put $10 first); unknown cost last
    assert _row_order(b) == sorted(known, key=lambda i: (cost[i], i)) + unknown
    assert _css(b, 'th[data-col="cost"]')[0].get_attribute("aria-sort") == "ascending"
    cells = [c.text for c in _css(b, "tr.ep-row td:nth-child(11)")]
    assert cells[0] == "$9.00" and cells[-1] == "–"
    _css(b, 'th[data-col="cost"]')[0].click()
    assert _row_order(b) == sorted(known, key=lambda i: (-cost[i], i)) + unknown
    assert _css(b, 'th[data-col="cost"]')[0].get_attribute("aria-sort") == "descending"
    # a text column sorts by its text; ties keep the store's order
    _css(b, 'th[data-col="run"]')[0].click()
    short = [index_of(priced_page)["runs"][r[0]]["short"] for r in rows]
    assert _row_order(b) == sorted(range(12), key=lambda i: (short[i], i))
    assert short[_row_order(b)[0]] == "full" and short[_row_order(b)[-1]] == "summary"
    # the order holds through a filter
    _css(b, "#f-min")[0].send_keys("0.3")
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(b, 10).until(lambda d: len(_css(d, "tr.ep-row")) == 4)
    assert _css(b, 'th[data-col="run"]')[0].get_attribute("aria-sort") == "ascending"
    assert _errors(b) == []


def test_the_strip_marks_repeated_actions_and_returns(looping: Path, tmp_path: Path, browser):  # type: ignore[no-untyped-def]
    # LOOP: A->B, B->A, A->B, B->A, then B->A twice more (illegal: nothing changes)
    page = write_viewer(looping, tmp_path / "v").page
    b = _open(browser, page)
    cells = _wait(b, "tr.ep-row .strip") and _css(b, "tr.ep-row .strip span")
    classes = [set((c.get_attribute("class") or "").split()) for c in cells]
    assert [("repeat" in c, "revisit" in c) for c in classes] == [
        (False, False), (False, True), (False, True), (False, True), (True, True), (True, True),
    ]  # fmt: skip
    assert "the same action as the step before" in cells[4].get_attribute("title")
    assert "back to an earlier state" in cells[1].get_attribute("title")
    assert _css(b, ".legend span.repeat") and _css(b, ".legend span.revisit")
    assert _css(b, "tr.ep-row td:nth-child(8)")[0].text == "×3"  # longest repeat
    assert _css(b, "tr.ep-row td:nth-child(9)")[0].text == "5"  # returns
    _css(b, "tr.ep-row a")[0].click()
    _wait(b, "#ep-strip .strip span")
    title = {
        int(c.get_attribute("data-t")): c.get_attribute("title")
        for c in _css(b, "#ep-strip .strip span")
    }
    assert title[1] == "step 1: valid"
    assert title[2] == "step 2: valid; back to the start state (a loop of 2 steps)"
    assert title[4] == "step 4: valid; back to the state after step 2 (a loop of 2 steps)"
    assert title[5] == (
        "step 5: invalid, penalty; the same action as the step before (2 in a row);"
        " no change: the state after step 4 again"
    )
    assert "the same action as the 2 steps before (3 in a row)" in title[6]
    six = _css(b, 'details.step[data-t="6"] summary')[0]
    assert [x.text for x in six.find_elements("css selector", ".badge.loop")] == [
        "repeat ×3", "back to t=5",
    ]  # fmt: skip
    assert "longest repeat ×3 · 5 returns to an earlier state" in _css(b, "#ep-figures")[0].text
    assert _errors(b) == []


def test_every_model_call_of_a_step_shows_on_demand(store: Path, page: Path, browser):  # type: ignore[no-untyped-def]
    run = _run(store, "summary")
    b = _open(browser, page, f"#run={run}&seed=0&rollout=1")
    step = _wait(b, 'details.step[data-t="3"]')
    step.find_element("css selector", "summary").click()
    assert step.find_elements("css selector", "details.call") == []  # not until asked
    step.find_element("css selector", "button.show-calls").click()
    calls = step.find_elements("css selector", "details.call")
    want = _q(
        store,
        "SELECT i, kind, messages, text, input_tokens, output_tokens FROM calls"
        " WHERE run=? AND seed=0 AND rollout=1 AND t=3 ORDER BY i",
        run,
    )
    assert [(c.get_attribute("data-i"), c.get_attribute("data-kind")) for c in calls] == [
        (str(i), k) for i, k, *_ in want
    ]
    assert [k for _, k, *_ in want] == ["act", "summary"]  # the acting call and the writer's
    for call, (_, kind, msgs, text, tin, tout) in zip(calls, want, strict=True):
        line = call.find_element("css selector", "summary")
        assert f"{kind} · {tin} tokens in, {tout} out" in line.text
        assert "decoding free" in line.text
        line.click()
        shown = [
            (r.text, p.get_attribute("textContent"))
            for r, p in zip(
                call.find_elements("css selector", ".msg-role"),
                call.find_elements("css selector", "pre.msg"),
                strict=True,
            )
        ]
        assert shown == [(m["role"], clean(m["content"])) for m in json.loads(msgs)]
        reply = call.find_element("css selector", "pre.reply").get_attribute("textContent")
        assert reply == clean(text)
    assert _errors(b) == []


@pytest.fixture(scope="module")
def ended_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeds 0 and 2 truncated by a token limit, seed 1 failed (test_episode_ends.py)."""
    from tests.viewer.test_episode_ends import SeedOneFails

    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    tmp = tmp_path_factory.mktemp("ended")
    cfg = {
        "name": "ends", "model": "scripted:x", "seeds": [0, 1, 2], "max_steps": 6,
        "grid": {"env": ["hanoi"]}, "out": str(tmp), "cache": None, "expert": False,
        "random": False, "limits": {"tokens": 45},
    }  # fmt: skip
    exp = parse_experiment(cfg)
    run_sync(exp, progress=None, llm_factory=lambda spec: SeedOneFails())
    return write_viewer(exp.out_dir / "store.sqlite", tmp / "v").page


def test_a_truncated_or_failed_episode_is_marked_in_the_list_and_on_its_page(
    ended_page: Path, browser
):  # type: ignore[no-untyped-def]
    b = _open(browser, ended_page)
    _wait(b, "tr.ep-row")
    rows = _css(b, "tr.ep-row")
    assert [r.get_attribute("class").split() for r in rows] == [
        ["ep-row", "end", "truncated"], ["ep-row", "end", "failed"], ["ep-row", "end", "truncated"],
    ]  # fmt: skip
    badges = [r.find_element("css selector", ".badge.end").text for r in rows]
    assert badges == [
        "truncated by tokens after 3 steps", "failed after 2 steps (model)",
        "truncated by tokens after 3 steps",
    ]  # fmt: skip
    rows[1].find_element("css selector", "a").click()
    head = _wait(b, "h1 .badge.end.failed")
    assert head.text == "failed after 2 steps (model)"
    assert head.get_attribute("title") == "ModelError: server went away"
    assert _css(b, "#ep-strip .badge.end.failed")
    assert _errors(b) == []
