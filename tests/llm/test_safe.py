"""Text made storable and printable; specs made credential-free."""

from __future__ import annotations

import json
import sqlite3
import time

from hypothesis import example, given, settings
from hypothesis import strategies as st

from statelab.llm import public_spec, storable, terminal_safe

_ODD = st.sampled_from(
    ["\ud800", "\udfff", "\ud83d", "\ude00", "\x00", "\x1b", "[", "]", "\x07", "\x9b", "\\", "m"]
)
ANY_TEXT = st.lists(st.one_of(st.characters(exclude_categories=()), _ODD), max_size=80).map("".join)


def test_storable_known() -> None:
    assert storable("plain text, ünïcode ✓") == "plain text, ünïcode ✓"
    assert storable("a\ud800b") == "a\ufffdb"
    assert storable("nul\x00byte") == "nul\ufffdbyte"
    assert storable("\ud83d\ude00") == "😀"  # a surrogate pair split in two is joined back
    assert storable("\ude00\ud83d") == "\ufffd\ufffd"
    # what a server's JSON escape decodes to
    assert storable(json.loads('"ok \\ud800 \\u0000"')) == "ok \ufffd \ufffd"


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_storable_always_encodes_and_stores(text: str) -> None:
    out = storable(text)
    out.encode("utf-8")  # never raises
    assert "\x00" not in out
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (x TEXT)")
    db.execute("INSERT INTO t VALUES (?)", (out,))
    assert db.execute("SELECT x FROM t").fetchone()[0] == out
    if "\x00" not in text and not any("\ud800" <= c <= "\udfff" for c in text):
        assert out == text  # text that was fine is left alone


def test_terminal_safe_known() -> None:
    assert terminal_safe("\x1b[31;1mred\x1b[0m plain") == "red plain"
    assert terminal_safe("\x1b]0;owned title\x07after") == "after"
    assert terminal_safe("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\") == "link"
    assert terminal_safe("\x9b2Jclear \x1bcreset") == "clear reset"
    assert terminal_safe("line\r\nnext\ttab\x08\x07") == "line\nnext\ttab"
    assert terminal_safe("abc\u202edcba") == "abcdcba"  # no right-to-left override
    assert terminal_safe("lone \ud800") == "lone \ufffd"


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
@example("\x1b[" * 50)
@example("\x1b]" + "x" * 50)
def test_terminal_safe_leaves_no_control_character(text: str) -> None:
    out = terminal_safe(text)
    out.encode("utf-8")
    assert not any(
        (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u2066"
        for c in out
    )


def test_terminal_safe_and_storable_are_linear() -> None:
    for unit in ("\x1b[", "\x1b]", "\x1b", "\ud800", "\x1b[0", "a\x00"):
        small, big = unit * 10_000, unit * 100_000
        t0 = time.perf_counter()
        terminal_safe(small)
        t_small = time.perf_counter() - t0
        t0 = time.perf_counter()
        terminal_safe(big)
        t_big = time.perf_counter() - t0
        assert t_big < 40 * t_small + 0.25, (unit, t_small, t_big)


def test_public_spec_known() -> None:
    assert (
        public_spec("openai-compat:http://user:secret@127.0.0.1:8000/v1#m?timeout=3")
        == "openai-compat:http://127.0.0.1:8000/v1#m?timeout=3"
    )
    assert (
        public_spec("openai-compat:https://h/v1?api-version=2&api_key=sk-1#gpt?retries=2&token=x")
        == "openai-compat:https://h/v1?api-version=2#gpt?retries=2"
    )
    assert public_spec("openai-compat:http://h/v1?key=1#m") == "openai-compat:http://h/v1#m"
    assert public_spec("openai-compat:http://u:p/w:x@h/v1#m") == "openai-compat:http://h/v1#m"
    for spec in ("openai:gpt-4o-mini", "llamacpp:hf:a/b/c.gguf", "scripted:r.json"):
        assert public_spec(spec) == spec


_CRED = st.text(st.characters(exclude_characters="@#?", exclude_categories=()), min_size=4)


@settings(max_examples=200, deadline=None)
@given(_CRED, _CRED, st.sampled_from(["api_key", "token", "X-Signature", "password", "key"]))
def test_public_spec_never_keeps_a_credential(user: str, password: str, name: str) -> None:
    value = password.replace("&", "%26")  # a raw '&' would end the value
    spec = f"openai-compat:http://{user}:{password}@h:1/v1?{name}={value}&v=1#m?retries=1"
    out = public_spec(spec)
    assert "@" not in out and f"{name}=" not in out
    assert out == "openai-compat:http://h:1/v1?v=1#m?retries=1"
