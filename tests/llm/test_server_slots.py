"""Served concurrency is what the server takes (issue 32 item 8): a server that answers one
request at a time and says so (llama.cpp's ``/props``, llama-cpp-python's ``/v1/models``)
is sent one at a time, so a request waiting for its turn waits here, before its timeout
starts; at ``concurrency=2`` with a timeout shorter than two replies, every request used to
time out behind the other."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from statelab.core import Completion, GenParams, ModelError
from statelab.llm import _server_slots as server_slots
from statelab.llm import make_llm
from statelab.llm._server_slots import slots_from

MSGS = [{"role": "user", "content": "hi"}]
#: what each kind of server answers to the GETs that say its slots
SAYS: dict[str, dict[str, Any]] = {
    "llama.cpp": {"/props": {"total_slots": 1, "model_path": "m.gguf"}},
    "llama-cpp-python": {"/v1/models": {"object": "list", "data": [
        {"id": "m", "object": "model", "owned_by": "me", "permissions": []}]}},
    "two-slots": {"/props": {"total_slots": 2}},
}  # fmt: skip


class Served:
    """A real HTTP server on 127.0.0.1 that answers GETs at once and generates for at most
    ``slots`` chat requests at a time (``delay`` seconds each); the others wait in its
    queue, as llama.cpp's and llama-cpp-python's servers make them wait."""

    def __init__(self, kind: str, slots: int, delay: float) -> None:
        self.says, self.delay = SAYS[kind], delay
        self.turns = threading.Semaphore(slots)
        self.lock = threading.Lock()
        self.busy = self.most = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, status: int, reply: Any) -> None:
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                got = outer.says.get(self.path)
                if self.path == "/v1/models":  # llama-cpp-python's: under its model's lock
                    with outer.turns:
                        pass
                self._send(200 if got is not None else 404, got or {"error": "not found"})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                with outer.turns:  # the queue: one generation per slot
                    with outer.lock:
                        outer.busy += 1
                        outer.most = max(outer.most, outer.busy)
                    time.sleep(outer.delay)
                    with outer.lock:
                        outer.busy -= 1
                message = {"role": "assistant", "content": "ok"}
                usage = {"prompt_tokens": 3, "completion_tokens": 1}
                self._send(200, {"choices": [{"index": 0, "message": message}], "usage": usage})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(autouse=True)
def _fresh():
    server_slots.forget()
    yield
    server_slots.forget()


def _two_at_once(url: str, options: str) -> list[Completion | BaseException]:
    llm = make_llm(f"openai-compat:{url}#m?{options}")

    async def go() -> list[Completion | BaseException]:
        try:
            asked = [llm.complete(MSGS, GenParams(seed=i)) for i in range(2)]
            return list(await asyncio.gather(*asked, return_exceptions=True))
        finally:
            await llm.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("client", ["lean", "httpx"])
@pytest.mark.parametrize("kind", ["llama.cpp", "llama-cpp-python"])
def test_a_one_slot_server_at_concurrency_2_answers_every_request(kind, client, monkeypatch):
    if client == "httpx":
        monkeypatch.setenv("STATELAB_HTTP_CLIENT", "httpx")
    else:
        monkeypatch.delenv("STATELAB_HTTP_CLIENT", raising=False)
    server = Served(kind, slots=1, delay=0.5)
    try:
        # two replies take 1 s; each request's timeout is 0.9 s, from when it is sent
        got = _two_at_once(server.url, "timeout=0.9&retries=0&concurrency=2")
    finally:
        server.close()
    errors = [str(g) for g in got if isinstance(g, BaseException)]
    assert errors == []  # before: "ReadTimeout after 0.9 s" for the request queued second
    assert [g.text for g in got if isinstance(g, Completion)] == ["ok", "ok"]
    assert server.most == 1


def test_a_server_taking_two_gets_two_at_once():
    server = Served("two-slots", slots=2, delay=0.5)
    try:
        got = _two_at_once(server.url, "timeout=5&retries=0&concurrency=2")
    finally:
        server.close()
    assert all(isinstance(g, Completion) for g in got) and server.most == 2


def test_the_spec_slots_are_the_servers_without_asking():
    server = Served("two-slots", slots=2, delay=0.3)
    try:
        got = _two_at_once(server.url, "timeout=5&retries=0&concurrency=2&slots=1")
    finally:
        server.close()
    assert all(isinstance(g, Completion) for g in got) and server.most == 1


def test_what_each_server_says():
    assert slots_from({"total_slots": 4}, None) == (4, "its /props: total_slots")
    assert slots_from(None, SAYS["llama-cpp-python"]["/v1/models"])[0] == 1
    vllm = {"object": "list", "data": [{"id": "m", "owned_by": "vllm", "max_model_len": 8}]}
    assert slots_from(None, vllm) == (None, "")  # vLLM and Ollama do not say
    assert slots_from({"total_slots": True}, {"data": "x"}) == (None, "")


def test_without_a_free_slot_the_timeout_still_holds_a_slow_server():
    server = Served("llama.cpp", slots=1, delay=1.0)
    try:
        got = _two_at_once(server.url, "timeout=0.5&retries=0&concurrency=2")
    finally:
        server.close()
    assert all(isinstance(g, ModelError) and g.kind == "timeout" for g in got)
