"""The names seed 003's audit stores its rows under, and its leak check's shortest secret."""

from __future__ import annotations

#: privileged strings shorter than this are not checked (e.g. "look")
MIN_SECRET = 6
AUDIT_TABLE = "seed003_audit"
LEAK_TABLE = "seed003_leaks"
#: one row per ``statelab audit``: when it started, and when it finished (NULL: it did not)
AUDIT_RUNS_TABLE = "seed003_audit_runs"
