"""The trajectory page in a real headless browser (Debian's chromium through Selenium and
chromium-driver): it renders, the --run filter shows only the runs asked for, and a
``<script>`` planted in a model reply does not run.

Skipped, saying why, where chromium, chromium-driver or selenium is missing
(``apt-get install chromium chromium-driver``; ``pip install selenium``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.viewer import write_viewer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no headless browser: apt-get install chromium chromium-driver",
)

# the planted script would change the title and add an element, and the image's onerror too
PLANTED = (
    "<script>document.title='pwned';document.body.insertAdjacentHTML('beforeend',"
    "'<p id=pwned>ran</p>')</script>"
    "<img src=x onerror=\"document.title='pwned'\"> "
    "Action: Move the top disk of rod A to the top of rod C"
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    script = tmp / "r.json"
    script.write_text(
        json.dumps([PLANTED, "Action: Move the top disk of rod A to the top of rod B"])
    )
    exp = parse_experiment(
        {
            "name": "v",
            "model": f"scripted:{script}",
            "seeds": [0, 1],
            "max_steps": 3,
            "grid": {"env": ["hanoi"], "history": ["full", "summary"]},
            "out": str(tmp),
            "cache": None,
            "expert": False,
            "random": False,
        }
    )
    assert run_sync(exp, progress=None).done == 4
    return exp.out_dir / "store.sqlite"


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def _open(browser, page: Path):  # type: ignore[no-untyped-def]
    browser.get(page.resolve().as_uri())
    return browser


def test_the_page_renders_every_episode_and_its_steps(store: Path, tmp_path: Path, browser):  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    b = _open(browser, write_viewer(store, tmp_path / "all.html"))
    assert b.find_element(By.TAG_NAME, "h1").text.startswith("statelab trajectories")
    heads = [h.text for h in b.find_elements(By.TAG_NAME, "h2")]
    assert len(heads) == 4 and sum("summary" in h for h in heads) == 2
    steps = b.find_elements(By.TAG_NAME, "details")
    assert len(steps) == 4 * 3
    steps[0].find_element(By.TAG_NAME, "summary").click()  # a step opens on a click
    assert steps[0].get_attribute("open") is not None


def test_the_run_filter_shows_only_those_runs(store: Path, tmp_path: Path, browser):  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    b = _open(browser, write_viewer(store, tmp_path / "summary.html", run="summary", seeds=[1]))
    heads = [h.text for h in b.find_elements(By.TAG_NAME, "h2")]
    assert len(heads) == 1 and "summary" in heads[0] and "seed 1" in heads[0]


def test_a_planted_script_does_not_run(store: Path, tmp_path: Path, browser):  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    b = _open(browser, write_viewer(store, tmp_path / "all.html"))
    assert b.title == "statelab"
    assert b.find_elements(By.ID, "pwned") == []
    assert b.execute_script("return document.scripts.length") == 0
    # the reply is shown as text, the script tag included
    shown = b.find_element(By.TAG_NAME, "body").get_attribute("textContent")
    assert "<script>document.title='pwned'" in shown
