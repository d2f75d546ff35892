"""Issue 36 item 4: every line statelab prints goes through the same guard, the lines it
did not write itself too: a log record quoting a model name (the "enforces none of ..."
warning) and a library's Python warning (matplotlib's glyph warning quoting the text) reach
a non-terminal stderr without escape sequences, control characters or bidi overrides."""

from __future__ import annotations

import subprocess
import sys

HOSTILE = "m\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u202eevil\x08"

SCRIPT = f"""
import logging, warnings
from statelab.cli._common import guard_output
guard_output()
guard_output()  # once per process: a second call adds no second handler
logging.getLogger("statelab.llm._constrain").warning("%s enforces none of grammar", {HOSTILE!r})
logging.getLogger("matplotlib").info("quiet below WARNING")
warnings.warn("Glyph 27 ({HOSTILE}) missing from font", UserWarning, stacklevel=1)
"""


def test_log_records_and_warnings_reach_stderr_without_escapes() -> None:
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    err = res.stderr
    assert "enforces none of grammar" in err and "Glyph 27" in err
    assert err.count("enforces none of grammar") == 1
    assert "quiet below WARNING" not in err
    for bad in ("\x1b", "\x07", "\u202e", "\x08"):
        assert bad not in err, repr(err)
    assert "m]0;pwned" not in err  # the whole OSC sequence is dropped, not only its ESC
