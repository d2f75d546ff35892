"""An experiment's episodes as one page that needs no server and no network.

``write_viewer(store, out)`` writes ``out/index.html`` (the page: its script, its style, and
the index of runs and episodes embedded as JSON) and beside it ``out/data/`` (for a page
``x.html``: ``x_data/``): scripts of :data:`CHUNK` episodes each (``c<N>.js``, loaded only
when one of them is opened) and ``text.js`` (every distinct line of the replies and
memories, loaded only when the text filter is used). Data files are scripts because
browsers block ``fetch`` of ``file://``. ``statelab view`` reads the store one episode at a
time, so its memory does not grow with the store's calls.

The page addresses an episode as ``index.html#run=<run id>&seed=<s>&rollout=<r>`` and two
runs side by side as ``...#run=<a>&vs=<b>&seed=<s>&rollout=<r>`` (a report links so).

Model text is never markup: the page builds its elements with ``createElement`` and puts
every text in as a text node (no ``innerHTML``); a content security policy admits only the
page's own script (by nonce) and the data scripts it adds; bidi controls are shown by name.
"""

from __future__ import annotations

import html
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from statelab.run.store import Store
from statelab.viewer._episode import TextIndex, episode_data
from statelab.viewer._index import choose, index_data, marks_of, stats_of, strip_of
from statelab.viewer._text import js_call, json_for_html

#: the page's scripts, in order (one scope: later files use the earlier ones' names)
SCRIPTS = ("core.js", "overview.js", "episode.js", "compare.js", "main.js")
#: the data folder beside the page
DATA = "data"
#: episodes per data script (one file each would cost a file creation per episode)
CHUNK = 16


@dataclass(frozen=True)
class ViewResult:
    """What ``write_viewer`` wrote, with the counts it states."""

    page: Path
    shown: int
    selected: int
    total: int
    runs: int
    seeds: int

    def summary(self) -> str:
        """One line: how many episodes of how many, in how many runs and seeds."""
        chosen = "" if self.selected == self.total else f", {self.selected} chosen"
        cut = f", the first {self.shown} written (--limit)" if self.shown < self.selected else ""
        return (
            f"{self.shown} episode{'s' * (self.shown != 1)} of {self.total} in the store"
            f"{chosen}{cut}; {self.runs} run{'s' * (self.runs != 1)} x {self.seeds}"
            f" seed{'s' * (self.seeds != 1)}"
        )


def _asset(name: str) -> str:
    return (resources.files("statelab.viewer") / "static" / name).read_text(encoding="utf-8")


def page_html(index: dict[str, object], version: str, folder: str = DATA) -> str:
    """The page: style, embedded index, and its script admitted by a fresh nonce."""
    nonce = secrets.token_urlsafe(18)
    csp = (
        "default-src 'none'; "
        f"script-src 'nonce-{nonce}' 'strict-dynamic' file:; "
        "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    )
    script = "\n".join(_asset(n) for n in SCRIPTS)
    title = html.escape(f"statelab · {index['name']}")
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{csp}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{title}</title><style>{_asset('viewer.css')}</style></head><body>"
        "<div id='app'><noscript>This page needs JavaScript to draw the episodes"
        " (it runs none from the store: every text is shown as text).</noscript></div>"
        f"<script type='application/json' id='statelab-index'>{json_for_html(index)}</script>"
        f"<script nonce='{nonce}' data-dir='{html.escape(folder)}' data-v='{version}'>"
        f"(function(){{\n{script}\n}})();</script></body></html>"
    )


def _page_path(out: Path) -> Path:
    return out if out.suffix == ".html" else out / "index.html"


def write_viewer(
    store_path: str | Path,
    out: str | Path,
    runs: Sequence[str] = (),
    seeds: Sequence[int] = (),
    limit: int | None = None,
) -> ViewResult:
    """Write the page of the episodes of ``runs`` (labels or ids, exact; all when empty)
    and ``seeds`` into ``out`` (a folder, or the page's ``.html`` path), at most ``limit``
    episodes. An unknown run or seed raises :class:`~statelab.core.ConfigError`."""
    page = _page_path(Path(out))
    folder = DATA if page.name == "index.html" else f"{page.stem}_data"
    data_dir = page.parent / folder
    store = Store(store_path)
    try:
        chosen = choose(store, runs, seeds, limit)
        data_dir.mkdir(parents=True, exist_ok=True)
        eps = chosen.episodes
        keys = [
            (r, int(s), int(k))
            for r, s, k in zip(eps["run"], eps["seed"], eps["rollout"], strict=True)
        ]
        starts = list(eps["start_state"]) if "start_state" in eps else [None] * len(keys)
        files = [f"c{i // CHUNK}.js" for i in range(len(keys))]
        text = TextIndex()
        strip, marks, stats = {}, {}, {}
        chunk: list[str] = []
        for i, key in enumerate(keys):
            start = starts[i] if isinstance(starts[i], str) else None
            data, texts = episode_data(store, *key, start_state=start)
            chunk.append(js_call("statelabEpisode", data["key"], data))
            if i % CHUNK == CHUNK - 1 or i == len(keys) - 1:
                (data_dir / files[i]).write_text("".join(chunk))
                chunk = []
            text.add(i, data, texts)
            strip[key] = strip_of(data["steps"])
            marks[key] = marks_of(data["steps"])
            stats[key] = stats_of(data["steps"])
    finally:
        store.close()
    (data_dir / "text.js").write_text(js_call("statelabText", text.data()))
    keep = set(files)
    for old in data_dir.glob("c*.js"):  # an earlier, larger page's episodes
        if old.name not in keep:
            old.unlink()
    version = secrets.token_hex(6)
    index = index_data(chosen, strip, files, marks, stats)
    page.write_text(page_html(index, version, folder), encoding="utf-8")
    return ViewResult(
        page=page,
        shown=len(keys),
        selected=chosen.selected,
        total=chosen.total,
        runs=len(chosen.runs),
        seeds=len(set(eps["seed"])),
    )
