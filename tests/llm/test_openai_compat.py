"""OpenAICompatLLM against a real, scripted HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from statelab.core import LLM, Completion, ConfigError, GenParams, ModelError
from statelab.llm import Model, RetryPolicy, check_spec, make_llm, public_spec
from statelab.llm._compat_wire import ModelServerError
from statelab.llm.openai_compat import OpenAICompatLLM, from_spec_compat, from_spec_openai

MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


def chat_reply(text: str | None = "hello", usage: bool = True) -> dict[str, Any]:
    d: dict[str, Any] = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]
    }
    if usage:
        d["usage"] = {"prompt_tokens": 11, "completion_tokens": 3}
    return d


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=chat_reply)  # dict -> JSON; str -> sent raw
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class Server:
    """Answers with the scripted replies in order, then with ``default``; records requests."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.default = Reply()
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with srv.lock:
                    srv.seen.append(Seen(self.path, dict(self.headers), json.loads(raw)))
                    reply = srv.script.pop(0) if srv.script else srv.default
                    srv.in_flight += 1
                    srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
                try:
                    time.sleep(reply.delay)
                    body = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                    data = body.encode()
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    with srv.lock:
                        srv.in_flight -= 1

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=2)


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_COMPAT_API_KEY", "OPENAI_BASE_URL", "SL_TEST_KEY"):
        monkeypatch.delenv(var, raising=False)


def wrap(provider: OpenAICompatLLM, max_retries: int = 5, backoff: float = 0.01) -> Model:
    """The backend as make_llm builds it: inside the model wrapper (retries, guard)."""
    return Model(provider, RetryPolicy(retries=max_retries, backoff=backoff))


def make(server: Server, **kw: Any) -> Model:
    policy = {k: kw.pop(k) for k in ("max_retries", "backoff") if k in kw}
    kw.setdefault("timeout", 5.0)
    return wrap(OpenAICompatLLM(server.url, "my-model", **kw), **policy)


def run_complete(llm: LLM, params: GenParams | None = None, msgs: Any = None) -> Completion:
    async def go() -> Completion:
        try:
            return await llm.complete(msgs or MSGS, params or GenParams())
        finally:
            await llm.aclose()

    return asyncio.run(go())


def test_normal_reply(server: Server) -> None:
    params = GenParams(temperature=0.5, top_p=0.9, max_tokens=17, stop=("\n", "END"), seed=7)
    c = run_complete(make(server), params)
    assert c.text == "hello" and c.usage.input_tokens == 11 and c.usage.output_tokens == 3
    assert c.latency > 0 and not c.cached
    (req,) = server.seen
    assert req.path == "/v1/chat/completions"
    assert req.body == {
        "model": "my-model",
        "messages": MSGS,
        "temperature": 0.5,
        "top_p": 0.9,
        "max_tokens": 17,
        "stop": ["\n", "END"],
        "seed": 7,
    }
    assert "authorization" not in {k.lower() for k in req.headers}


def test_defaults_omit_stop_and_seed_and_estimate_usage(server: Server) -> None:
    server.default = Reply(body=chat_reply("", usage=False))
    c = run_complete(make(server), GenParams(choices=("a", "b")))
    assert c.text == "" and c.usage.output_tokens == 1 and c.usage.input_tokens >= 1
    assert "stop" not in server.seen[0].body and "seed" not in server.seen[0].body


def test_500_then_success(server: Server) -> None:
    server.script = [Reply(500, {"error": "boom"})]
    assert run_complete(make(server)).text == "hello"
    assert len(server.seen) == 2


def test_429_retry_after_then_success(server: Server) -> None:
    server.script = [Reply(429, {"error": "slow down"}, {"Retry-After": "0"})]
    assert run_complete(make(server, backoff=10.0)).text == "hello"  # Retry-After wins
    assert len(server.seen) == 2


def test_garbage_body_is_model_error(server: Server) -> None:
    server.default = Reply(body="<html>not json</html>")
    with pytest.raises(ModelError, match="malformed response from"):
        run_complete(make(server))
    server.default = Reply(body={"choices": []})
    with pytest.raises(ModelError, match="malformed response from"):
        run_complete(make(server))


def test_persistent_503(server: Server) -> None:
    server.default = Reply(503, {"error": "overloaded"})
    with pytest.raises(ModelError, match="503") as e:
        run_complete(make(server, max_retries=3))
    assert len(server.seen) == 4 and "\n" not in str(e.value)


def test_400_fails_at_once(server: Server) -> None:
    server.default = Reply(400, {"error": "bad request"})
    with pytest.raises(ModelError, match="HTTP 400"):
        run_complete(make(server))
    assert len(server.seen) == 1


def test_timeout_and_connection_errors_are_retried(server: Server) -> None:
    server.script = [Reply(delay=0.5)]
    assert run_complete(make(server, timeout=0.1)).text == "hello"
    assert len(server.seen) == 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = wrap(OpenAICompatLLM(f"http://127.0.0.1:{port}/v1", "m"), max_retries=1)
    with pytest.raises(ModelServerError, match="cannot connect") as e:
        run_complete(dead)
    assert e.value.kind == "connect"


def test_api_key_from_env_never_leaks(
    server: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-secret-123456"
    monkeypatch.setenv("SL_TEST_KEY", key)
    llm = make(server, api_key_env="SL_TEST_KEY")
    run_complete(llm)
    assert server.seen[0].headers["Authorization"] == f"Bearer {key}"
    server.script = [Reply(500, {"error": f"bad key {key}"})]
    server.default = Reply(401, {"error": f"Incorrect API key provided: {key}"})
    with caplog.at_level(logging.DEBUG), pytest.raises(ModelError, match="401") as e:
        run_complete(llm)
    for s in (str(e.value), llm.model_id, repr(llm), caplog.text):
        assert key not in s
    assert llm.model_id == f"openai-compat:{server.url}#my-model"


def test_spec_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    llm = from_spec_compat("http://127.0.0.1:8000/v1#my-model")
    assert (llm.base_url, llm.model) == ("http://127.0.0.1:8000/v1", "my-model")
    assert llm.model_id == "openai-compat:http://127.0.0.1:8000/v1#my-model"
    for bad in ("http://127.0.0.1:8000/v1", "http://x/v1#", "127.0.0.1:8000#m"):
        with pytest.raises(ConfigError):
            from_spec_compat(bad)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        from_spec_openai("gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert from_spec_openai("gpt-4o-mini").base_url == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy:9/v1/")
    assert from_spec_openai("gpt-4o-mini").model_id == "openai-compat:http://proxy:9/v1#gpt-4o-mini"


def test_bounded_concurrency(server: Server) -> None:
    server.default = Reply(delay=0.2)
    llm = make(server, max_concurrency=2)

    async def go() -> list[Completion]:
        try:
            return await asyncio.gather(*(llm.complete(MSGS, GenParams()) for _ in range(6)))
        finally:
            await llm.aclose()

    assert [c.text for c in asyncio.run(go())] == ["hello"] * 6
    assert len(server.seen) == 6 and server.max_in_flight == 2


def test_usable_across_event_loops(server: Server) -> None:
    llm = make(server)
    assert asyncio.run(llm.complete(MSGS, GenParams())).text == "hello"
    assert run_complete(llm).text == "hello"


def test_image_parts_pass_through(server: Server) -> None:
    msgs = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        }
    ]
    run_complete(make(server), msgs=msgs)
    assert server.seen[0].body["messages"] == msgs


def test_score_sums_continuation_logprobs(server: Server) -> None:
    prefix = "user: hi\nassistant: "
    tokens = ["user", ":", " hi", "\n", "assistant", ":", " Hello", " there"]
    offsets = [0, 4, 5, 8, 9, 18, 19, 25]
    assert "".join(tokens) == prefix.rstrip(" ") + " Hello there"
    lps = [None, -1.0, -2.0, -0.5, -0.1, -0.2, -1.5, -0.25]
    server.default = Reply(
        body={
            "choices": [
                {
                    "text": "",
                    "logprobs": {"tokens": tokens, "token_logprobs": lps, "text_offset": offsets},
                }
            ]
        }
    )
    llm = make(server)

    async def go() -> list[float]:
        try:
            return await llm.score([{"role": "user", "content": "hi"}], ["Hello there", ""])
        finally:
            await llm.aclose()

    # " Hello" starts one char before the continuation (the space) and is counted
    assert asyncio.run(go()) == [pytest.approx(-1.75), 0.0]
    (req,) = server.seen
    assert req.path == "/v1/completions"
    assert req.body["prompt"] == prefix + "Hello there"
    assert req.body["echo"] is True and req.body["logprobs"] == 1 and req.body["max_tokens"] == 1


def test_score_unsupported_is_model_error(server: Server) -> None:
    server.default = Reply(404, {"error": "not found"})
    with pytest.raises(ModelError, match="cannot score continuations: HTTP 404"):
        asyncio.run(make(server).score(MSGS, ["yes"]))
    assert len(server.seen) == 1


# -- hardening: failures fast and typed, URLs checked, credentials kept out, text made safe --


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("retries", [0, 1, 5])
def test_connection_refused_fails_fast_as_connect(retries: int) -> None:
    """A dead server: 32.6 s per episode before (1 + 2 + 4 + 8 + 16 s of backoff)."""
    dead = wrap(OpenAICompatLLM(f"http://127.0.0.1:{closed_port()}/v1", "m"), retries, 1.0)
    t0 = time.perf_counter()
    with pytest.raises(ModelServerError, match="cannot connect") as e:
        run_complete(dead)
    elapsed = time.perf_counter() - t0
    assert e.value.kind == "connect" and e.value.status is None
    assert f"after {retries + 1} attempts" in str(e.value)
    assert elapsed < 0.5 * retries + 2.0, elapsed  # at most 0.5 s between attempts


def test_hanging_server_times_out_after_two_attempts(server: Server) -> None:
    """A hung server: 6 x 60 s before; now 2 x timeout, whatever ``retries`` says."""
    server.default = Reply(delay=1.5)
    t0 = time.perf_counter()
    with pytest.raises(ModelServerError, match=r"Timeout after 0\.2 s") as e:
        run_complete(make(server, timeout=0.2, max_retries=5))
    assert e.value.kind == "timeout" and len(server.seen) == 2
    assert time.perf_counter() - t0 < 1.4


def test_error_kinds(server: Server) -> None:
    server.default = Reply(400, {"error": "bad"})
    with pytest.raises(ModelServerError) as e:
        run_complete(make(server))
    assert (e.value.kind, e.value.status) == ("http", 400)
    server.default = Reply(503, {"error": "busy"})
    with pytest.raises(ModelServerError) as e:
        run_complete(make(server, max_retries=1))
    assert (e.value.kind, e.value.status) == ("http", 503)
    server.default = Reply(body="not json")
    with pytest.raises(ModelServerError) as e:
        run_complete(make(server))
    assert e.value.kind == "malformed" and isinstance(e.value, ModelError)


def test_spec_options() -> None:
    spec = "openai-compat:http://127.0.0.1:8000/v1#org/m:8b?timeout=2.5&retries=0&concurrency=3"
    llm = make_llm(spec)
    assert isinstance(llm, Model) and isinstance(llm.inner, OpenAICompatLLM)
    got = (llm.inner.model, llm.inner.timeout, llm.policy.retries, llm.max_concurrency)
    assert got == ("org/m:8b", 2.5, 0, 3)
    assert llm.model_id == "openai-compat:http://127.0.0.1:8000/v1#org/m:8b"  # options: not in id
    # a caller's values (from the config) apply unless the spec sets its own
    llm = make_llm("openai-compat:http://h:1/v1#m?retries=1", timeout=9.0, retries=4)
    assert isinstance(llm, Model) and isinstance(llm.inner, OpenAICompatLLM)
    assert (llm.inner.timeout, llm.policy.retries) == (9.0, 1)
    built = make_llm("openai-compat:http://h:1/v1#m", timeout=3.0, retries=2)
    assert isinstance(built, Model) and isinstance(built.inner, OpenAICompatLLM)
    assert (built.inner.timeout, built.policy.retries) == (3.0, 2)
    built = make_llm("openai-compat:http://h:1/v1#m?max_body=100&max_reply=7")
    assert isinstance(built, Model) and isinstance(built.inner, OpenAICompatLLM)
    assert (built.inner.max_body, built.max_reply) == (100, 7)
    bad = {
        "#m?speed=1": "unknown option 'speed'",
        "#m?timeout=soon": "is not a number",
        "#m?timeout=0": "timeout must be > 0",
        "#m?retries=-1": "retries must be >= 0",
        "#m?concurrency=0": "concurrency must be >= 1",
        "#m?max_body=0": "max_body must be >= 1",
        "#m?retries=1&retries=2": "given twice",
        "#m?retries": "name=value",
    }
    for tail, message in bad.items():
        for check in (from_spec_compat, lambda a: check_spec("openai-compat:" + a)):
            with pytest.raises(ConfigError, match=re.escape(message)):
                check("http://h:1/v1" + tail)
    with pytest.raises(ConfigError, match="unknown option"):
        check_spec("openai:gpt-4o-mini?temperature=1")
    check_spec("openai:gpt-4o-mini?timeout=5")  # no key needed to check the spelling


BAD_URLS = {
    "http://127.0.0.1:99999/v1": "Port out of range",
    "http://[::1/v1": "Invalid IPv6 URL",
    "http://127.0.0.1:0/v1": "port 0",
    "http://127.0.0.1:http/v1": "not a valid URL",
    "ftp://127.0.0.1/v1": "must start with http",
    "127.0.0.1:8000/v1": "must start with http",
    "http:///v1": "has no host",
    "http://bad host/v1": "bad host name",
    "http://[zz::1]/v1": "not a valid URL",
    "http://user:hunter22@127.0.0.1:99999/v1": "Port out of range",
}


@pytest.mark.parametrize("url", list(BAD_URLS))
def test_bad_urls_are_one_line_config_errors(url: str) -> None:
    for check in (
        lambda: check_spec(f"openai-compat:{url}#m"),
        lambda: make_llm(f"openai-compat:{url}#m"),
        lambda: OpenAICompatLLM(url, "m"),
    ):
        with pytest.raises(ConfigError, match=re.escape(BAD_URLS[url])) as e:
            check()
        assert "\n" not in str(e.value) and "hunter22" not in str(e.value)


def test_good_urls_pass() -> None:
    for url in ("http://[::1]:8000/v1", "https://api.example.com/v1/", "http://localhost:1/v1"):
        check_spec(f"openai-compat:{url}#m")
        assert OpenAICompatLLM(url, "m").base_url == url.rstrip("/")


def test_credentials_in_url_are_used_never_kept(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    port = server.url.split(":")[2].split("/")[0]
    spec = f"openai-compat:http://alice:s3cr%40t@127.0.0.1:{port}/v1?v=2#my-model"
    with pytest.raises(ConfigError, match="no credentials in the query") as e:
        make_llm(spec.replace("?v=2", "?api_key=k-9&v=2"))
    assert "k-9" not in str(e.value)
    llm = make_llm(spec)
    assert isinstance(llm, Model) and isinstance(llm.inner, OpenAICompatLLM)
    run_complete(llm)
    seen = server.seen[0]
    assert seen.headers["Authorization"] == "Basic " + base64.b64encode(b"alice:s3cr@t").decode()
    assert seen.path == "/v1/chat/completions?v=2"  # the URL's query is sent
    server.script = [Reply(500, {"error": "user alice:s3cr@t"})]
    server.default = Reply(401, {"error": "who is alice s3cr%40t?"})
    with caplog.at_level(logging.DEBUG), pytest.raises(ModelError, match="401") as e:
        run_complete(llm)
    public = f"openai-compat:http://127.0.0.1:{port}/v1?v=2#my-model"
    assert llm.model_id == public_spec(spec) == public
    for text in (str(e.value), llm.model_id, repr(llm), caplog.text, public_spec(spec)):
        for secret in ("alice", "s3cr"):
            assert secret not in text, (secret, text)


def test_bearer_key_wins_over_url_credentials(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SL_TEST_KEY", "sk-1")
    llm = OpenAICompatLLM(server.url.replace("//", "//u:p@"), "m", api_key_env="SL_TEST_KEY")
    run_complete(wrap(llm))
    assert server.seen[0].headers["Authorization"] == "Bearer sk-1"


def test_reply_text_is_made_storable(server: Server) -> None:
    server.default = Reply(body='{"choices": [{"message": {"content": "a\\ud800b\\u0000c"}}]}')
    c = run_complete(make(server))
    assert c.text == "a\ufffdb\ufffdc"
    c.text.encode("utf-8")


def test_error_bodies_lose_terminal_escapes(server: Server) -> None:
    server.default = Reply(400, "\x1b[2J\x1b]0;pwned\x07bad \x1b[31mred\x1b[0m\r\n\x08body")
    with pytest.raises(ModelServerError) as e:
        run_complete(make(server))
    message = str(e.value)
    assert message.endswith(": bad red body")
    assert not any(ord(c) < 32 for c in message)


def test_separate_reasoning_comes_back_as_a_think_block(server: Server) -> None:
    msg = {"role": "assistant", "content": "Action: go north", "reasoning_content": "hm"}
    server.default = Reply(body={"choices": [{"message": msg}]})
    assert run_complete(make(server)).text == "<think>hm</think>Action: go north"
    msg = {"role": "assistant", "content": None, "reasoning": "still"}
    server.default = Reply(body={"choices": [{"message": msg}]})
    assert run_complete(make(server)).text == "<think>still"  # cut inside the reasoning
