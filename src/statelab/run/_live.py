"""Progress of a run, live: what is done, what is playing, what the model is answering.

:class:`Tracker` holds the state: per run, episodes done of its total, failures (the first
one's reason kept), the running mean score, tokens and dollars; per episode in flight, its
label, seed, current step, tokens and dollars so far and when it started; the model requests
being answered now. Tokens and dollars count as each step is played (not when its episode
ends), and the ETA comes from the steps played: steps per second over every step of the
model episodes so far, times the steps left (the mean steps of a run's finished episodes,
else its ``max_steps``, for each episode not finished). Two views read it:

- :class:`PlainProgress` (not a terminal, CI, ``TERM=dumb``): one line per finished episode,
  a failed one with its reason, as logs want, and a **heartbeat** line when nothing was
  printed for :data:`HEARTBEAT_S` seconds, naming the slowest episodes in flight and their
  current step, with the tokens so far, so a long ScienceWorld or household episode is never
  silent for minutes;
- :class:`LiveProgress` (a terminal): ``rich.progress`` columns redrawn a few times a
  second, a row per run (its label shortened to what tells it from the other runs, by
  :func:`distinct_labels`, within the terminal's width) with its bar, episodes done,
  failures, mean score, tokens and cost so far; under them what every run shares, the
  totals, the ETA, the first failure's reason when one failed, and the current step of the
  slowest episodes. No line is wider than the terminal (nothing wraps).

A run stopped by Ctrl-C ends either view with one line (the runner's: episodes done of all,
in flight lost, and that a rerun resumes).

An episode tells the tracker about each step through :data:`STEP_HOOK`, a context variable
the runner sets around each episode (the episode loop calls it after every step with the
steps played and the episode's record so far, its token counts and cost).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from statelab.llm import requests_in_flight, terminal_safe
from statelab.run.records import FINISHED, TRUNCATED, EpisodeRecord

#: seconds without a line before the plain view prints a heartbeat
HEARTBEAT_S = 60.0
#: the slowest episodes in flight a heartbeat or the live view names
SLOWEST = 3
#: called by the episode loop after each step with the steps played so far and the
#: episode's record (its tokens and cost so far)
STEP_HOOK: contextvars.ContextVar[Callable[[int, EpisodeRecord], None] | None] = (
    contextvars.ContextVar("statelab_step_hook", default=None)
)


def cancel_pending() -> bool:
    """Whether the current task was asked to stop (a Ctrl-C: ``asyncio.run`` cancels the
    run) though the cancellation may not have reached it: Python 3.11's
    ``asyncio.wait_for`` swallows one that comes as the awaited call finishes (an env call
    on its thread), and the episode would play on to its end."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)  # Python 3.11+
    return bool(cancelling is not None and cancelling())


def fmt_time(s: float) -> str:
    """``4m05s``, or ``1h02m`` from an hour on."""
    s = int(s)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


# -- labels that fit ------------------------------------------------------------------------

#: between a run label's parts (:attr:`statelab.run.spec.RunSpec.label`)
SEP = " | "
#: where a shared prefix of two parts may be cut (a model spec's scheme, path, fragment,
#: query): the part shown starts after one of these
_CUTS = ":/#?&,;@"
#: shared text shorter than this is left in a part (eliding ``hf:`` saves nothing)
_MIN_ELIDED = 8
#: the narrowest a label column is made
MIN_LABEL = 12


def _cut_prefix(a: str, b: str) -> int:
    """How much of ``a`` to drop as shared with ``b``: their common prefix, back to the end
    of its last cut character (:data:`_CUTS`), so the part shown starts at a whole field."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    if n == len(a):  # a is all shared with b: nothing to tell them apart by
        return 0
    cut = max(a.rfind(c, 0, n) for c in _CUTS) + 1
    return cut if cut >= _MIN_ELIDED else 0


def _cut_suffix(a: str, b: str) -> int:
    """How much of ``a``'s end to drop as shared with ``b``'s (from a cut character on)."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    if n == len(a):
        return 0
    tail = a[len(a) - n :]
    at = min((i for i, ch in enumerate(tail) if ch in _CUTS), default=-1)
    kept = n - at if at >= 0 else 0
    return kept if kept >= _MIN_ELIDED else 0


def _elide(part: str, others: list[str]) -> tuple[str, str]:
    """``part`` without the longest prefix (and suffix) it shares with one of ``others``, an
    ellipsis in their place; and what was dropped, an ellipsis for the rest ("": none)."""
    head = max((_cut_prefix(part, o) for o in others if o != part), default=0)
    tail = max((_cut_suffix(part[head:], o) for o in others if o != part), default=0)
    shown = part[head : len(part) - tail]
    if not (head or tail) or not shown.strip():
        return part, ""
    dropped = part[:head] + "…" + part[len(part) - tail :]
    return ("…" if head else "") + shown + ("…" if tail else ""), dropped


def _middle(label: str, width: int) -> str:
    """``label`` cut to ``width`` characters in its middle (a spec's end tells runs apart)."""
    if len(label) <= width:
        return label
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 3
    return label[:head] + "…" + label[len(label) - (width - 1 - head) :]


def _unique(labels: list[str]) -> bool:
    return len(set(labels)) == len(labels)


def _shorten(uniq: list[str]) -> tuple[list[str], str]:
    """:func:`distinct_labels` without the width: the labels, and what they share."""
    if len(uniq) < 2:
        return list(uniq), ""
    parts = [u.split(SEP) for u in uniq]
    common = set(parts[0]).intersection(*parts[1:])
    rest = [[p for p in ps if p not in common] or ps for ps in parts]
    if not _unique([SEP.join(r) for r in rest]):
        return list(uniq), ""
    elided = [
        [_elide(p, [q for j, rr in enumerate(rest) if j != i for q in rr]) for p in r]
        for i, r in enumerate(rest)
    ]
    short = [SEP.join(text for text, _ in row) for row in elided]
    if not _unique(short):
        return [SEP.join(r) for r in rest], SEP.join(p for p in parts[0] if p in common)
    first = dict(zip(rest[0], elided[0], strict=True))
    shared = SEP.join(
        p if p in common else first[p][1]
        for p in parts[0]
        if p in common or (p in first and first[p][1])
    )
    return short, shared


def distinct_labels(
    labels: list[str], width: int | None = None, group: set[str] | None = None
) -> tuple[dict[str, str], str]:
    """Each run label shortened to what tells it from the others, within ``width``
    characters; and what they all share (the parts dropped, the prefixes elided).

    The parts every label holds are dropped (the env of a one-env grid, the agent, the
    model of a one-model grid); a part that shares a long prefix with another label's part
    keeps what follows it (``…template=chatml`` of two specs that differ in their template);
    a label still wider than ``width`` is cut in its middle. ``group`` (the runs that call a
    model) is shortened among itself, the other labels (``random``, ``expert``) among all,
    so the model runs lose what they share even though the model-free runs lack it; what is
    shared is then the group's. The labels stay distinct: where a step would make two alike,
    it is not taken (at worst, each label gets its number)."""
    uniq = list(dict.fromkeys(labels))
    shown, shared = _shorten(uniq)
    inside = [u for u in uniq if group is not None and u in group]
    if len(inside) > 1 and len(inside) < len(uniq):
        mine, mine_shared = _shorten(inside)
        by = dict(zip(uniq, shown, strict=True)) | dict(zip(inside, mine, strict=True))
        if _unique(list(by.values())):
            shown, shared = [by[u] for u in uniq], mine_shared
    if width is not None:
        width = max(width, 1)
        fitted = [_middle(s, width) for s in shown]
        if not _unique(fitted):
            fitted = [s if len(s) <= width else "…" + s[len(s) - width + 1 :] for s in shown]
        if not _unique(fitted):
            fitted = [_middle(f"#{i + 1} {s}", width) for i, s in enumerate(shown)]
        shown = fitted
    return dict(zip(uniq, shown, strict=True)), shared


@dataclass
class RunState:
    """One run's episodes so far."""

    label: str
    total: int
    done: int = 0
    failed: int = 0
    score_sum: float = 0.0
    scored: int = 0
    #: tokens in and out so far, those of the episodes in flight included
    tokens: int = 0
    cost: float | None = None
    #: steps of its finished episodes that were not failed, and how many those are
    steps_sum: int = 0
    steps_n: int = 0

    @property
    def mean(self) -> float:
        return self.score_sum / self.scored if self.scored else math.nan


@dataclass
class Playing:
    """An episode in flight, with the tokens and dollars it had spent at its last step."""

    label: str
    seed: int
    rollout: int
    started: float
    step: int = 0
    tin: int = 0
    tout: int = 0
    cost: float | None = None


@dataclass
class Tracker:
    """The state both views draw (see the module); ``clock`` is injectable for tests.

    ``budgets`` gives a run's ``max_steps`` by label (the ETA's guess of an episode's length
    before one of the run finished); ``model_runs`` the labels whose episodes call a model
    (None: all), the only ones the ETA counts (model-free episodes finish at once)."""

    totals: dict[str, int]
    model_total: int
    clock: Callable[[], float] = time.perf_counter
    budgets: dict[str, int | None] = field(default_factory=dict)
    model_runs: set[str] | None = None
    runs: dict[str, RunState] = field(default_factory=dict)
    playing: dict[int, Playing] = field(default_factory=dict)
    n: int = 0
    model_n: int = 0
    tin: int = 0
    tout: int = 0
    cost: float | None = None
    failed: int = 0
    #: the first failed episode: its label, and ``seed=S: reason``
    first_failure: tuple[str, str] | None = None
    #: steps of the finished model episodes (failed ones too)
    played: int = 0

    def __post_init__(self) -> None:
        self.start = self.clock()
        self.runs = {label: RunState(label, n) for label, n in self.totals.items()}
        self._next = 0

    @property
    def total(self) -> int:
        return sum(self.totals.values())

    def _run(self, label: str) -> RunState:
        return self.runs.setdefault(label, RunState(label, 0))

    def uses_model(self, label: str) -> bool:
        return self.model_runs is None or label in self.model_runs

    def started(self, label: str, seed: int, rollout: int) -> int:
        """An episode starts: its handle (for :meth:`step` and :meth:`finished`)."""
        self._next += 1
        self.playing[self._next] = Playing(label, seed, rollout, self.clock())
        return self._next

    def step(
        self,
        handle: int,
        steps: int,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        cost: float | None = None,
    ) -> None:
        """Episode ``handle`` played ``steps`` steps, having spent ``tokens_in`` and
        ``tokens_out`` and ``cost`` dollars so far (None: not told)."""
        p = self.playing.get(handle)
        if p is None:
            return
        p.step = steps
        if tokens_in is not None or tokens_out is not None:
            self._spent(p, tokens_in or 0, tokens_out or 0, cost)

    def _spent(self, p: Playing, tin: int, tout: int, cost: float | None) -> None:
        """``p`` has spent ``tin``, ``tout`` and ``cost`` so far: what is new is added."""
        run = self._run(p.label)
        d_in, d_out = tin - p.tin, tout - p.tout
        self.tin += d_in
        self.tout += d_out
        run.tokens += d_in + d_out
        p.tin, p.tout = tin, tout
        if cost is not None:
            d_cost = cost - (p.cost or 0.0)
            run.cost = (run.cost or 0.0) + d_cost
            self.cost = (self.cost or 0.0) + d_cost
            p.cost = cost

    def finished(self, handle: int | None, label: str, ep: EpisodeRecord, uses_model: bool) -> None:
        p = self.playing.pop(handle or -1, None) or Playing(label, ep.seed, ep.rollout, 0.0)
        p.label = label
        self._spent(p, ep.agent_in + ep.aux_in, ep.agent_out + ep.aux_out, ep.cost)
        self.n += 1
        self.model_n += uses_model
        run = self._run(label)
        run.done += 1
        if uses_model:
            self.played += ep.steps
        if ep.status not in FINISHED:
            run.failed += 1
            self.failed += 1
            if self.first_failure is None:
                where = f"seed={ep.seed}" + (f"/{ep.rollout}" if ep.rollout else "")
                self.first_failure = (label, f"{where}: {ep.error or 'unknown error'}")
            return
        run.steps_sum += ep.steps
        run.steps_n += 1
        if not math.isnan(ep.score):
            run.score_sum += ep.score
            run.scored += 1

    def elapsed(self) -> float:
        return self.clock() - self.start

    def _length(self, run: RunState) -> float | None:
        """The steps an episode of ``run`` is expected to play: the mean of its finished
        ones, else its budget, else the mean over every run (None: nothing to go by)."""
        if run.steps_n:
            return run.steps_sum / run.steps_n
        budget = self.budgets.get(run.label)
        if budget:
            return float(budget)
        n = sum(r.steps_n for r in self.runs.values())
        return sum(r.steps_sum for r in self.runs.values()) / n if n else None

    def steps_left(self) -> float | None:
        """The model steps left to play, by :meth:`_length` (None: unknown)."""
        left = 0.0
        for run in self.runs.values():
            if not self.uses_model(run.label):
                continue
            live = [p.step for p in self.playing.values() if p.label == run.label]
            waiting = run.total - run.done - len(live)
            if waiting <= 0 and not live:
                continue
            length = self._length(run)
            if length is None:
                return None
            left += max(waiting, 0) * length + sum(max(length - s, 0.0) for s in live)
        return left

    def steps_played(self) -> int:
        """Steps of the model episodes so far, those in flight included."""
        live = sum(p.step for p in self.playing.values() if self.uses_model(p.label))
        return self.played + live

    def eta_s(self) -> float | None:
        """Seconds left: the model steps left at the rate steps were played so far; before a
        step was played, extrapolated from finished model episodes (None: unknown)."""
        left = self.model_total - self.model_n
        if left <= 0:
            return 0.0
        played, elapsed = self.steps_played(), self.elapsed()
        steps = self.steps_left()
        if played and elapsed > 0 and steps is not None:
            return steps / (played / elapsed)
        return elapsed / self.model_n * left if self.model_n else None

    def eta(self) -> str:
        s = self.eta_s()
        return "?" if s is None else fmt_time(s)

    def rate(self) -> str:
        """``412 steps, 1.7/s``: the model steps played and their rate (or "")."""
        played, elapsed = self.steps_played(), self.elapsed()
        if not played:
            return ""
        per_s = f", {played / elapsed:.1f}/s" if elapsed > 0 else ""
        return f"{played:,} steps{per_s}"

    def slowest(self, k: int = SLOWEST) -> list[Playing]:
        return sorted(self.playing.values(), key=lambda p: p.started)[:k]

    def tokens_text(self) -> str:
        return f"tokens in={self.tin:,} out={self.tout:,}{_cost_text(self.cost)}"

    def heartbeat_line(self) -> str:
        """What is playing now: episodes in flight, the slowest with their step, requests."""
        now = self.clock()
        slow = ", ".join(
            f"{p.label} seed={p.seed}{f'/{p.rollout}' if p.rollout else ''} at step {p.step}"
            f" ({fmt_time(now - p.started)})"
            for p in self.slowest()
        )
        return (
            f"{self.counter()} still playing: {len(self.playing)} episodes in flight,"
            f" {requests_in_flight()} model requests | slowest: {slow or '-'}"
            f" | {self.tokens_text()} | elapsed {fmt_time(self.elapsed())} eta {self.eta()}"
        )

    def counter(self) -> str:
        """``[4/9]``, or ``[4/9, 1 failed]``."""
        failed = f", {self.failed} failed" if self.failed else ""
        return f"[{self.n}/{self.total}{failed}]"


def _cost_text(cost: float | None) -> str:
    return f" cost=${cost:,.4f}" if cost is not None else ""


class PlainProgress:
    """Lines for logs: one per finished episode, and heartbeats (see the module)."""

    def __init__(self, tracker: Tracker, out: TextIO | None) -> None:
        self.t, self.out = tracker, out
        self.last_line = tracker.clock()

    def say(self, line: str) -> None:
        if self.out is None:
            return
        try:  # a label or an error is any text: one terminal-safe line
            print(" ".join(terminal_safe(line).split()), file=self.out, flush=True)
        except OSError:  # the reader went away (a closed pipe): the run goes on, unseen
            self.out = None
        self.last_line = self.t.clock()

    def episode(self, label: str, ep: EpisodeRecord) -> None:
        t = self.t
        what = (
            f"score={ep.score:.2f} steps={ep.steps}" if ep.status in FINISHED
            else f"FAILED after {ep.steps} steps: {ep.error}"
        )  # fmt: skip
        if ep.status == TRUNCATED:
            what += f" truncated ({ep.reason})"
        self.say(
            f"{t.counter()} {label} seed={ep.seed}"
            + (f"/{ep.rollout}" if ep.rollout else "")
            + f" {what} | {t.tokens_text()}"
            f" | elapsed {fmt_time(t.elapsed())} eta {t.eta()}"
        )

    def tick(self) -> None:
        """A heartbeat when nothing was said for :data:`HEARTBEAT_S` seconds."""
        if self.t.playing and self.t.clock() - self.last_line >= HEARTBEAT_S:
            self.say(self.t.heartbeat_line())

    def close(self) -> None:
        pass


def _line(text: str) -> Any:
    """One line of the live view: cut with an ellipsis at the width, never wrapped."""
    from rich.text import Text

    return Text(" ".join(terminal_safe(text).split()), no_wrap=True, overflow="ellipsis")


class LiveProgress:
    """``rich.progress`` columns on a terminal (see the module). ``width`` fixes the
    console's width (tests); by default it is the terminal's."""

    def __init__(self, tracker: Tracker, out: TextIO, width: int | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
        from rich.table import Column

        self.t = tracker
        self.console = Console(file=out, width=width)
        self.tasks: dict[str, Any] = {}
        self.shared = ""
        self.short: dict[str, str] = {}
        self.closing: str | None = None
        self.ready = False  # rich draws once as it builds the display: nothing to draw yet
        view = self

        class _Progress(Progress):
            def get_renderables(self) -> Iterable[Any]:
                if view.ready:
                    yield from view.renderables()

        def text(key: str) -> TextColumn:
            return TextColumn(f"{{task.fields[{key}]}}", markup=False, justify="right",
                              table_column=Column(no_wrap=True, justify="right"))  # fmt: skip

        self.label_column = Column(no_wrap=True, overflow="ellipsis")
        self.progress = _Progress(
            TextColumn("{task.description}", markup=False, table_column=self.label_column),
            BarColumn(bar_width=10),
            MofNCompleteColumn(),
            text("failed"),
            text("mean"),
            text("tokens"),
            text("cost"),
            console=self.console,
            auto_refresh=False,  # redrawn by tick(), on the event loop that changes the state
            transient=False,
        )
        self._add_rows()
        self.ready = True
        self.progress.start()

    @staticmethod
    def _fields(run: RunState) -> dict[str, Any]:
        return {
            "failed": f"✗{run.failed}" if run.failed else "",
            "mean": "-" if math.isnan(run.mean) else f"{run.mean:.2f}",
            "tokens": f"{run.tokens:,} tok",
            "cost": "" if run.cost is None else f"${run.cost:,.4f}",
        }

    def _add_rows(self) -> None:
        """A row for each run without one (a label the totals did not name, later)."""
        for label, run in self.t.runs.items():
            if label not in self.tasks:
                self.tasks[label] = self.progress.add_task(
                    label, total=max(run.total, 1), **self._fields(run)
                )

    def _sync(self) -> None:
        """The rows from the tracker, each label as short as the width asks."""
        t, width = self.t, self.console.width
        fields = {label: self._fields(run) for label, run in t.runs.items()}
        others = max(len(str(r.total)) * 2 + 1 for r in t.runs.values()) if t.runs else 3
        for key in ("failed", "mean", "tokens", "cost"):
            widest = max((len(f[key]) for f in fields.values()), default=0)
            others += widest + 1 if widest else 1
        budget = max(MIN_LABEL, width - others - 11 - 2)  # the bar and its padding
        self.short, self.shared = distinct_labels(list(t.runs), budget, t.model_runs)
        self.label_column.max_width = budget
        for label, run in t.runs.items():
            if label not in self.tasks:
                continue
            self.progress.update(
                self.tasks[label],
                description=terminal_safe(self.short[label]),
                completed=run.done,
                total=max(run.total, 1),
                **fields[label],
            )

    def lines(self) -> list[str]:
        """The lines under the rows: shared parts, totals and ETA, failures, the slowest."""
        t, now = self.t, self.t.clock()
        every = t.model_runs is None or set(t.runs) <= t.model_runs
        out = [f"{'all' if every else 'model'} runs: {self.shared}"] if self.shared else []
        out.append(
            f"{t.n}/{t.total} episodes · {len(t.playing)} in flight · {requests_in_flight()}"
            f" requests · tokens {t.tin:,} in {t.tout:,} out"
            + (f" · ${t.cost:,.4f}" if t.cost is not None else "")
        )
        rate = t.rate()
        out.append(
            f"elapsed {fmt_time(t.elapsed())} · eta {t.eta()}" + (f" ({rate})" if rate else "")
        )
        if t.first_failure is not None:
            label, what = t.first_failure
            out.append(f"✗ {t.failed} failed; first: {self.short.get(label, label)} {what}")
        for p in t.slowest():
            out.append(
                f"slowest: {self.short.get(p.label, p.label)} seed={p.seed}"
                + (f"/{p.rollout}" if p.rollout else "")
                + f" step {p.step} ({fmt_time(now - p.started)})"
            )
        return out

    def renderables(self) -> Iterator[Any]:
        from rich.console import Group

        self._sync()
        yield Group(self.progress.make_tasks_table(self.progress.tasks),
                    *(_line(x) for x in self.lines()))  # fmt: skip

    def render(self) -> Any:
        """The display: a row per run, then what every run shares and what is playing."""
        from rich.console import Group

        return Group(*self.renderables())

    def episode(self, label: str, ep: EpisodeRecord) -> None:
        self.tick()

    def say(self, line: str) -> None:
        """``line`` follows the display once it is closed, in full (the Ctrl-C summary)."""
        self.closing = line

    def tick(self) -> None:
        self._add_rows()
        self.progress.refresh()

    def close(self) -> None:
        self.tick()
        self.progress.stop()
        if self.closing is not None:
            text = " ".join(terminal_safe(self.closing).split())
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)


def wants_live(out: TextIO | None) -> bool:
    """A terminal that is not CI's or a dumb one."""
    if out is None or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """The runner's progress: a :class:`Tracker` drawn live on a terminal, as lines otherwise.

    ``totals`` gives each run's episodes by label; ``model_total`` the episodes that call a
    model (the ETA's base); ``budgets`` and ``model_runs`` as :class:`Tracker` takes them."""

    def __init__(
        self,
        totals: dict[str, int],
        model_total: int,
        out: TextIO | None,
        budgets: dict[str, int | None] | None = None,
        model_runs: set[str] | None = None,
    ) -> None:
        self.tracker = Tracker(
            dict(totals), model_total, budgets=dict(budgets or {}), model_runs=model_runs
        )
        self.view: PlainProgress | LiveProgress = (
            LiveProgress(self.tracker, out) if out is not None and wants_live(out)
            else PlainProgress(self.tracker, out)
        )  # fmt: skip

    @contextlib.contextmanager
    def playing(self, label: str, seed: int, rollout: int) -> Iterator[list[int | None]]:
        """Around one episode: its steps, tokens and cost reach the tracker through
        :data:`STEP_HOOK` (which also ends the episode at a Ctrl-C that did not reach it:
        :func:`cancel_pending`)."""
        handle = self.tracker.started(label, seed, rollout)

        def hook(steps: int, ep: EpisodeRecord) -> None:
            self.tracker.step(
                handle, steps, ep.agent_in + ep.aux_in, ep.agent_out + ep.aux_out, ep.cost
            )
            if cancel_pending():  # a Ctrl-C an env call swallowed: the episode stops here
                raise asyncio.CancelledError

        token = STEP_HOOK.set(hook)
        box: list[int | None] = [handle]
        try:
            yield box
        finally:
            STEP_HOOK.reset(token)

    def episode(self, handle: int | None, label: str, ep: EpisodeRecord, uses_model: bool) -> None:
        self.tracker.finished(handle, label, ep, uses_model)
        self.view.episode(label, ep)

    @property
    def in_flight(self) -> int:
        """Episodes started and not finished (at a Ctrl-C: lost)."""
        return len(self.tracker.playing)

    def say(self, line: str) -> None:
        """One last line after the view (the Ctrl-C summary)."""
        self.view.say(line)

    async def beat(self, every: float = 0.25) -> None:
        """Redraw / heartbeat until cancelled."""
        while True:
            await asyncio.sleep(every)
            self.view.tick()

    def close(self) -> None:
        self.view.close()
