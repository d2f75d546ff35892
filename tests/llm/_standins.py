"""Local stand-ins for OpenAI-compatible servers (real HTTP on 127.0.0.1), each enforcing one
constrained form the way the real servers do, and recording every request body (``delay``:
seconds each reply takes)."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FREE = "I think I will move the biggest disk somewhere."


def _unescape_gbnf(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]), s)


def from_grammar(g: str) -> str:
    """The reply a grammar-enforcing server gives: the prefix and the last alternative."""
    strings = [_unescape_gbnf(x) for x in re.findall(r'"((?:[^"\\]|\\.)*)"', g)]
    head, alts = g.split("(", 1)
    n_head = len(re.findall(r'"((?:[^"\\]|\\.)*)"', head))
    prefix = "".join(strings[:n_head])
    return prefix + strings[-1] if alts else prefix


def from_regex(pattern: str) -> str:
    """The last alternative of ``prefix(a|b)``, checked to match the pattern in full."""
    head, _, rest = pattern.partition("(")
    alts = rest[:-1]
    parts = re.split(r"(?<!\\)\|", alts)
    text = re.sub(r"\\(.)", r"\1", head) + re.sub(r"\\(.)", r"\1", parts[-1])
    assert re.fullmatch(pattern, text), (pattern, text)
    return text


class StandIn:
    """One server: ``form`` is the constrained form it enforces (None: it ignores all);
    ``strict`` rejects fields it does not know with HTTP 400 (OpenAI does); ``probe_only``
    holds only the capability probe to the form and answers every other request with free
    text, as a server that takes the field and then ignores it."""

    def __init__(
        self, form: str | None, *, strict: bool = False, probe_only: bool = False,
        delay: float = 0.0,
    ) -> None:  # fmt: skip
        self.form, self.strict, self.probe_only, self.delay = form, strict, probe_only, delay
        self.bodies: list[dict[str, Any]] = []
        self.completions: list[dict[str, Any]] = []  # /completions bodies
        self.completion_reply: Any = None  # a function body -> reply JSON for /completions
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                status, reply = outer.answer(self.path, body)
                time.sleep(outer.delay)  # the model's time
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if path.endswith("/completions") and not path.endswith("chat/completions"):
            self.completions.append(body)
            assert self.completion_reply is not None
            return self.completion_reply(body)
        self.bodies.append(body)
        known = {"grammar": "grammar", "structured_outputs": None, "response_format": None}
        so, rf = body.get("structured_outputs") or {}, body.get("response_format") or {}
        given = "grammar" if "grammar" in body else None
        given = given or ("choice" if "choice" in so else "regex" if "regex" in so else None)
        if rf.get("type") in ("json_schema", "json_object"):
            given = given or rf["type"]
        if self.strict and given is not None and given != self.form:
            unknown = next(k for k in known if k in body)
            return 400, {"error": {"message": f"Unrecognized request argument: {unknown}"}}
        text = FREE
        if self.probe_only and "qzvex" not in json.dumps(body):
            given = None
        if given == self.form == "grammar":
            text = from_grammar(body["grammar"])
        elif given == self.form == "choice":
            text = so["choice"][-1]
        elif given == self.form == "regex":
            text = from_regex(so["regex"])
        elif given == self.form == "json_schema":
            enum = rf["json_schema"]["schema"]["properties"]["action"]["enum"]
            text = json.dumps({"action": enum[-1]})
        elif given == self.form == "json_object":
            text = json.dumps({"action": rf["schema"]["properties"]["action"]["enum"][-1]})
        message = {"role": "assistant", "content": text}
        usage = {"prompt_tokens": 10, "completion_tokens": 5}
        return 200, {"choices": [{"index": 0, "message": message}], "usage": usage}

    def probes(self) -> int:
        """Requests that were the capability probe (its made-up words)."""
        return sum("qzvex" in json.dumps(b) for b in self.bodies)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
