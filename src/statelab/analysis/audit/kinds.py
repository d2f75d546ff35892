"""Audit kinds: what ``statelab audit --kind NAME`` runs. The lab's own is ``general`` (the
decision-sufficiency audit of any env, :func:`statelab.analysis.audit.run.audit_sufficiency`);
a plugin adds its own with :func:`register_audit_kind` from its entry point, and ``--kind
auto`` picks the first plugin kind (by name) that claims the experiment, else ``general``.
The kinds are read after :func:`statelab.core.load_plugins`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from statelab.core import ConfigError, load_plugins

#: the lab's own kind, and the one ``auto`` falls back on
GENERAL = "general"


@dataclass(frozen=True)
class AuditRequest:
    """What the command line asked of an audit (docs/audit.md); a kind uses what it knows."""

    reader: str | None = None
    points: int = 8
    how: str = "spread"
    relevance: bool = False
    samples: int = 8
    max_budget: int = 256
    open_test: bool = False
    force: bool = False
    concurrency: int = 1
    say: Callable[[str], None] = print


@dataclass(frozen=True)
class AuditOutcome:
    """An audit's one summary line and the reasons of its failed episodes."""

    line: str
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AuditKind:
    """One audit: its name, a line of help, how it runs, and (for ``auto``) whether it claims
    an experiment (None: never picked by ``auto``)."""

    name: str
    help: str
    run: Callable[[Any, AuditRequest], AuditOutcome]
    claims: Callable[[Any], bool] | None = None


_KINDS: dict[str, AuditKind] = {}


def register_audit_kind(kind: AuditKind) -> None:
    """Add ``kind`` (once per name: another kind under a registered name is refused)."""
    known = _KINDS.get(kind.name)
    if known is not None and known is not kind:
        raise ValueError(f"audit kind {kind.name!r} is registered twice")
    _KINDS[kind.name] = kind


def audit_kinds() -> dict[str, AuditKind]:
    """Every audit kind, after loading the plugins, by name."""
    load_plugins()
    return {k: _KINDS[k] for k in sorted(_KINDS)}


def resolve_kind(name: str, exp: Any) -> AuditKind:
    """The kind ``name`` names (``auto``: the first plugin kind that claims ``exp``, else
    ``general``); an unknown name is one :class:`ConfigError` listing the known ones."""
    kinds = audit_kinds()
    if name == "auto":
        for kind in kinds.values():
            if kind.name != GENERAL and kind.claims is not None and kind.claims(exp):
                return kind
        return kinds[GENERAL]
    if name not in kinds:
        known = ", ".join(["auto", *kinds])
        raise ConfigError(f"--kind {name!r} is no audit kind; the kinds are {known}")
    return kinds[name]


def _general(exp: Any, req: AuditRequest) -> AuditOutcome:
    from statelab.analysis.audit.run import audit_sufficiency

    got = audit_sufficiency(exp, reader=req.reader, points=req.points, how=req.how,
                            relevance=req.relevance, samples=req.samples,
                            max_budget=req.max_budget, open_test=req.open_test,
                            force=req.force, say=req.say, concurrency=req.concurrency)  # fmt: skip
    skips = ", ".join(f"{n} {why}" for why, n in sorted(got["skipped"].items()))
    line = (f"{exp.name}: {got['points']} decision points audited in {got['episodes']} "
            f"episodes, {len(got['failed'])} failed; skipped: {skips or 'none'} | "
            f"{got['seconds']:.1f} s")  # fmt: skip
    return AuditOutcome(line, list(got["failed"]))


register_audit_kind(
    AuditKind(GENERAL, "the decision-sufficiency audit of any env (docs/audit.md)", _general)
)


__all__ = [
    "GENERAL",
    "AuditKind",
    "AuditOutcome",
    "AuditRequest",
    "audit_kinds",
    "register_audit_kind",
    "resolve_kind",
]
