"""Image grounding end to end: the runner sends PNG image parts to a real local server."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            reply = {"choices": [{"message": {"content": "Action: Move North"}}],
                     "usage": {"prompt_tokens": 100, "completion_tokens": 4}}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        thread.join()


@pytest.mark.parametrize("env", ["hanoi", "messenger", "babyai/goto"])
def test_image_parts_reach_the_server(server, tmp_path, env):
    url, seen = server
    exp = parse_experiment({
        "name": "img", "model": f"openai-compat:{url}#vlm?constrain=off", "seeds": [0],
        "max_steps": 2,
        "grid": {"env": [env], "history": ["full"], "grounding": ["image"]},
        "out": str(tmp_path), "cache": None, "expert": False, "random": False,
    })
    res = run_sync(exp, progress=None)
    assert res.done == 1 and res.failed == 0
    assert len(seen) == 2  # one acting call per step
    for body in seen:
        user = body["messages"][-1]["content"]
        assert isinstance(user, list) and user[0]["type"] == "text"
        (img,) = [p for p in user if p["type"] == "image_url"]
        url_ = img["image_url"]["url"]
        assert url_.startswith("data:image/png;base64,")
        assert base64.b64decode(url_.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    steps = Store(exp.out_dir / "store.sqlite").table("steps")
    assert list(steps.grounding) == ["[image]", "[image]"]


@pytest.mark.parametrize("env", ["hanoi", "messenger", "babyai/pickup"])
def test_vot_and_oracle_vot_are_stored_with_each_step(tmp_path, env):
    script = tmp_path / "r.json"
    drawn = "Map (Top-Down View):\n. A .\n. . B\nLegend: A = agent, B = ball"
    script.write_text(json.dumps([drawn, "Action: go forward"] * 4))
    exp = parse_experiment({
        "name": "vot", "model": f"scripted:{script}", "seeds": [0], "max_steps": 2,
        "grid": {"env": [env], "history": ["summary"], "grounding": ["vot", "oracle-vot"]},
        "out": str(tmp_path), "cache": None, "expert": False, "random": False,
    })
    assert run_sync(exp, progress=None).done == 2
    store = Store(exp.out_dir / "store.sqlite")
    runs = store.table("runs").set_index("run")
    steps = store.table("steps")
    vot = steps[steps.run == runs.index[runs.grounding == "vot"][0]]
    oracle = steps[steps.run == runs.index[runs.grounding == "oracle-vot"][0]]
    assert (vot.grounding != "").all() and "Legend: A = agent" in vot.grounding.iloc[0]
    assert oracle.grounding.str.startswith("Map (Top-Down View):\n").all()
    calls = store.table("calls")
    kinds = calls[calls.run == vot.run.iloc[0]].kind.tolist()
    assert kinds.count("vot") == 2 and kinds.count("act") == 2
