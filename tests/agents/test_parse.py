"""The reply parser: linear in any reply, never raising, reasoning blocks skipped."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from statelab.agents._parse import action_text, parse_action, reasoning_open, split_reasoning

ACTIONS = ("go north", "go south", "take key", "open door")

# the pattern before the rewrite: right, but cubic on runs of blank lines
_OLD = re.compile(r"^\s*>?\s*action\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE)


def _old_action_text(reply: str) -> str:
    found = _OLD.findall(reply)
    if found:
        return str(found[-1]).strip()
    return next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")


# -- same answers as before ------------------------------------------------------------------

_PIECES = [" ", "\n", "\t", "\r", "\x0b", "\u2028", ">", ":", "：", "action", "ACTION", "Act", "x"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
@example("Action:\n  go north")
@example(">\n action: x")
@example("Action: \nAction: b")
@example("action\n>action: x")
def test_action_text_as_the_old_pattern_read_it(reply: str) -> None:
    assert action_text(reply) == _old_action_text(reply)


def test_known_replies() -> None:
    assert action_text("Thought: hm.\n  > Action :  open door \nmore") == "open door"
    assert action_text("Action: a\nAction: b") == "b"
    assert action_text("Action:\n\n   take key") == "take key"
    assert action_text("\n\n  go north  \nnext") == "go north"
    assert parse_action("Action: 2", ACTIONS) == ("go south", True)


# -- linear time, whatever the reply -----------------------------------------------------------

_DEGENERATE = [
    " \n",
    "\n",
    " ",
    "\t\n ",
    "> \n",
    ">",
    "action",
    "Action \n",
    "action:",
    "Action: \n",
    "\n>action",
    "<think>",
    "</think>",
    "1",
    "go ",
]


def _best_of(f: Callable[[], object], n: int = 3) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_DEGENERATE), min_size=1, max_size=3).map("".join))
def test_parse_time_is_linear_in_reply_length(unit: str) -> None:
    """10x the reply costs about 10x the time (the old pattern: 1,000x; 2,000 chars took 5 s)."""

    def reply(n: int) -> str:
        return (unit * (n // len(unit) + 1))[:n]

    small, big = reply(20_000), reply(200_000)
    t_small = _best_of(lambda: parse_action(small, ACTIONS))
    t_big = _best_of(lambda: parse_action(big, ACTIONS))
    assert t_big < 40 * t_small + 0.25, (unit, t_small, t_big)


def test_a_reply_of_blank_lines_is_quick() -> None:
    """The reply that froze a run: 3,000 newlines (two one-step episodes took 129 s)."""
    for reply in ("\n" * 3000, " \n" * 100_000):
        t0 = time.perf_counter()
        assert parse_action(reply, ACTIONS) == ("", False)
        assert time.perf_counter() - t0 < 1.0


# -- any text, no exception --------------------------------------------------------------------

_ODD = st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\x00", "\x1b[31m", "²", "٣", "İ", "K"])
_ANY_TEXT = st.lists(
    st.one_of(st.characters(exclude_categories=()), _ODD, st.sampled_from(_PIECES)), max_size=60
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT, st.one_of(st.none(), st.lists(_ANY_TEXT, max_size=4).map(tuple)))
@example("Action: ²", ACTIONS)
@example("Action: " + "1" * 5000, ACTIONS)
@example("<think>\ud800", ACTIONS)
def test_any_unicode_never_raises(reply: str, admissible: tuple[str, ...] | None) -> None:
    action, parsed = parse_action(reply, admissible)
    assert isinstance(action, str) and isinstance(parsed, bool)
    if admissible is not None and parsed:
        assert action in admissible
    reasoning, rest = split_reasoning(reply)
    assert isinstance(reasoning, str) and isinstance(rest, str)
    reasoning_open(reply)


def test_odd_digits_are_not_indices() -> None:
    assert parse_action("Action: ²", ACTIONS) == ("²", False)
    assert parse_action("Action: " + "1" * 5000, ACTIONS) == ("1" * 5000, False)
    assert parse_action("Action: ٣", ACTIONS) == ("take key", True)  # a decimal digit


# -- reasoning blocks --------------------------------------------------------------------------


def test_split_reasoning() -> None:
    assert split_reasoning("Action: go north") == ("", "Action: go north")
    assert split_reasoning("  <think>\nfirst north?\n\nno.</think>\n\nAction: go south") == (
        "first north?\n\nno.",
        "Action: go south",
    )
    assert split_reasoning("<THINK>hm</Think>go north") == ("hm", "go north")
    assert split_reasoning("<think>\nstill thinking") == ("still thinking", "")
    assert split_reasoning("<|begin_of_thought|>a<|end_of_thought|>\nb") == ("a", "b")
    # the template opened the block (Qwen3, R1 distills): only the closing tag is in the reply
    assert split_reasoning("so: north.\n</think>\n\nAction: go north") == (
        "so: north.",
        "Action: go north",
    )
    # a block that does not open the reply is the reply's text
    assert split_reasoning("Sure. <think>x</think> go") == ("", "Sure. <think>x</think> go")


def test_reasoning_open() -> None:
    assert reasoning_open("<think>")
    assert reasoning_open("\n<think>\nOkay, the user")
    assert not reasoning_open("<think>a</think>b")
    assert not reasoning_open("Action: go north")


def test_parse_action_skips_reasoning() -> None:
    reply = "<think>\nShould I go north? Action: go north is tempting.\n</think>\nAction: go south"
    assert parse_action(reply, ACTIONS) == ("go south", True)
    # the actions named in the reasoning do not count as the reply naming one
    assert parse_action("<think>go north or take key</think>\nopen it", ACTIONS) == (
        "open it",
        False,
    )
    assert parse_action("<think>\nhmm, go north", ACTIONS) == ("", False)
