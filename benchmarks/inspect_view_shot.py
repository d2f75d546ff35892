"""A screenshot of ``inspect view`` on a folder of eval logs (``statelab export --to inspect``
writes them to ``<out>/inspect``), in headless chromium through Selenium.

    python benchmarks/inspect_view_shot.py results/quickstart/export/inspect docs/inspect_view.png \
        [--expect TEXT] [--open TASK [--sample TEXT]]

Starts ``inspect view start --log-dir DIR`` on a free loopback port, loads its page, waits
until the log list shows (``--expect``: until that text is on the page), with ``--open``
clicks the log whose task is TASK (with ``--sample``: then the first sample showing TEXT,
and its messages), and saves the window (``--size``, default 1400,1000) as a PNG. Exits 0
with the page's visible text on stdout once the text was seen, 1 when it never was (the
screenshot is saved either way, for whoever looks into why). Needs inspect_ai, selenium
(``pip install 'statelab[inspect,browser]'``) and Debian's chromium and chromium-driver.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def inspect_view(log_dir: Path) -> Iterator[str]:
    """``inspect view`` serving ``log_dir``; yields its URL, stops it on exit."""
    port = _free_port()
    inspect = shutil.which("inspect") or str(Path(sys.executable).with_name("inspect"))
    argv = [inspect, "view", "start", "--log-dir", str(log_dir), "--port", str(port)]
    argv += ["--host", "127.0.0.1"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"inspect view exited ({proc.returncode}): {err[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.3)
        else:
            raise RuntimeError("inspect view did not listen within 60 s")
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _driver(size: str = "1400,1000") -> object:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    opts.add_argument(f"--window-size={size}")
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(driver_path), options=opts)


def _wait_text(driver: object, text: str, seconds: float) -> bool:
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if text in driver.find_element(By.TAG_NAME, "body").text:  # type: ignore[attr-defined]
                return True
        time.sleep(0.5)
    return False


def _click_text(driver: object, text: str) -> bool:
    from selenium.webdriver.common.by import By

    xpath = f"//*[contains(normalize-space(text()), {text!r})]"
    for el in driver.find_elements(By.XPATH, xpath):  # type: ignore[attr-defined]
        with contextlib.suppress(Exception):
            el.click()
            return True
    return False


def shoot(
    log_dir: Path,
    png: Path,
    *,
    expect: str,
    open_task: str | None = None,
    sample: str | None = None,
    seconds: float = 60,
    size: str = "1400,1000",
) -> tuple[bool, str]:
    """Screenshot ``inspect view`` on ``log_dir`` into ``png``; returns whether ``expect``
    showed and the page's visible text."""
    from selenium.webdriver.common.by import By

    png.parent.mkdir(parents=True, exist_ok=True)
    with inspect_view(log_dir) as url:
        driver = _driver(size)
        try:
            driver.get(url)  # type: ignore[attr-defined]
            seen = _wait_text(driver, expect, seconds)
            if seen and open_task is not None and _click_text(driver, open_task):
                _wait_text(driver, "SAMPLES", 20)  # the log, then its samples list
                time.sleep(2)
                if sample is not None and _click_text(driver, sample):
                    time.sleep(3)
                    if _click_text(driver, "Messages"):
                        time.sleep(2)
            time.sleep(1)
            driver.save_screenshot(str(png))  # type: ignore[attr-defined]
            text = driver.find_element(By.TAG_NAME, "body").text  # type: ignore[attr-defined]
        finally:
            driver.quit()  # type: ignore[attr-defined]
    return seen, str(text)


def main() -> int:
    """Run from the command line (see the module's text)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log_dir", type=Path)
    ap.add_argument("png", type=Path)
    ap.add_argument("--expect", default="", help="wait until this text shows")
    ap.add_argument("--open", dest="open_task", help="open the log of this task")
    ap.add_argument("--sample", help="then open the first sample showing this text")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--size", default="1400,1000", help="the window, WIDTH,HEIGHT")
    args = ap.parse_args()
    seen, text = shoot(
        args.log_dir,
        args.png,
        expect=args.expect,
        open_task=args.open_task,
        sample=args.sample,
        seconds=args.seconds,
        size=args.size,
    )
    print(text)
    return 0 if seen else 1


if __name__ == "__main__":
    raise SystemExit(main())
