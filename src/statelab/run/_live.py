"""Progress of a run, live: what is done, what is playing, what the model is answering.

:class:`Tracker` holds the state: per run, episodes done of its total, the running mean
score, tokens and dollars; per episode in flight, its label, seed, current step and when it
started; the model requests being answered now. Two views read it:

- :class:`PlainProgress` (not a terminal, CI, ``TERM=dumb``): one line per finished episode,
  as logs want, and a **heartbeat** line when nothing was printed for :data:`HEARTBEAT_S`
  seconds, naming the slowest episodes in flight and their current step, so a long
  ScienceWorld or household episode is never silent for minutes;
- :class:`LiveProgress` (a terminal): a ``rich`` display redrawn a few times a second, a bar
  per run with its mean score, tokens and cost so far, requests in flight, and the current
  step of the slowest episodes.

An episode tells the tracker about each step through :data:`STEP_HOOK`, a context variable
the runner sets around each episode (the episode loop calls it after every step).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from statelab.llm import requests_in_flight, terminal_safe
from statelab.run.records import FINISHED, TRUNCATED, EpisodeRecord

#: seconds without a line before the plain view prints a heartbeat
HEARTBEAT_S = 60.0
#: the slowest episodes in flight a heartbeat or the live view names
SLOWEST = 3
#: called by the episode loop after each step with the steps played so far
STEP_HOOK: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar(
    "statelab_step_hook", default=None
)


def fmt_time(s: float) -> str:
    """``4m05s``, or ``1h02m`` from an hour on."""
    s = int(s)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


@dataclass
class RunState:
    """One run's episodes so far."""

    label: str
    total: int
    done: int = 0
    failed: int = 0
    score_sum: float = 0.0
    scored: int = 0
    tokens: int = 0
    cost: float | None = None

    @property
    def mean(self) -> float:
        return self.score_sum / self.scored if self.scored else math.nan


@dataclass
class Playing:
    """An episode in flight."""

    label: str
    seed: int
    rollout: int
    started: float
    step: int = 0


@dataclass
class Tracker:
    """The state both views draw (see the module); ``clock`` is injectable for tests."""

    totals: dict[str, int]
    model_total: int
    clock: Callable[[], float] = time.perf_counter
    runs: dict[str, RunState] = field(default_factory=dict)
    playing: dict[int, Playing] = field(default_factory=dict)
    n: int = 0
    model_n: int = 0
    tin: int = 0
    tout: int = 0
    cost: float | None = None

    def __post_init__(self) -> None:
        self.start = self.clock()
        self.runs = {label: RunState(label, n) for label, n in self.totals.items()}
        self._next = 0

    @property
    def total(self) -> int:
        return sum(self.totals.values())

    def started(self, label: str, seed: int, rollout: int) -> int:
        """An episode starts: its handle (for :meth:`step` and :meth:`finished`)."""
        self._next += 1
        self.playing[self._next] = Playing(label, seed, rollout, self.clock())
        return self._next

    def step(self, handle: int, steps: int) -> None:
        if handle in self.playing:
            self.playing[handle].step = steps

    def finished(self, handle: int | None, label: str, ep: EpisodeRecord, uses_model: bool) -> None:
        self.playing.pop(handle or -1, None)
        self.n += 1
        self.model_n += uses_model
        self.tin += ep.agent_in + ep.aux_in
        self.tout += ep.agent_out + ep.aux_out
        run = self.runs.setdefault(label, RunState(label, 0))
        run.done += 1
        run.tokens += ep.agent_in + ep.aux_in + ep.agent_out + ep.aux_out
        if ep.status not in FINISHED:
            run.failed += 1
        elif not math.isnan(ep.score):
            run.score_sum += ep.score
            run.scored += 1
        if ep.cost is not None:
            run.cost = (run.cost or 0.0) + ep.cost
            self.cost = (self.cost or 0.0) + ep.cost

    def elapsed(self) -> float:
        return self.clock() - self.start

    def eta(self) -> str:
        """Extrapolated from model episodes only (model-free ones finish at once)."""
        left = self.model_total - self.model_n
        if not left:
            return "0m00s"
        return fmt_time(self.elapsed() / self.model_n * left) if self.model_n else "?"

    def slowest(self, k: int = SLOWEST) -> list[Playing]:
        return sorted(self.playing.values(), key=lambda p: p.started)[:k]

    def heartbeat_line(self) -> str:
        """What is playing now: episodes in flight, the slowest with their step, requests."""
        now = self.clock()
        slow = ", ".join(
            f"{p.label} seed={p.seed}{f'/{p.rollout}' if p.rollout else ''} at step {p.step}"
            f" ({fmt_time(now - p.started)})"
            for p in self.slowest()
        )
        return (
            f"[{self.n}/{self.total}] still playing: {len(self.playing)} episodes in flight,"
            f" {requests_in_flight()} model requests | slowest: {slow or '-'}"
            f" | elapsed {fmt_time(self.elapsed())} eta {self.eta()}"
        )


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
            f"[{t.n}/{t.total}] {label} seed={ep.seed}"
            + (f"/{ep.rollout}" if ep.rollout else "")
            + f" {what} | tokens in={t.tin:,} out={t.tout:,}{_cost_text(t.cost)}"
            f" | elapsed {fmt_time(t.elapsed())} eta {t.eta()}"
        )

    def tick(self) -> None:
        """A heartbeat when nothing was said for :data:`HEARTBEAT_S` seconds."""
        if self.t.playing and self.t.clock() - self.last_line >= HEARTBEAT_S:
            self.say(self.t.heartbeat_line())

    def close(self) -> None:
        pass


class LiveProgress:
    """A ``rich`` live display on a terminal (see the module)."""

    def __init__(self, tracker: Tracker, out: TextIO) -> None:
        from rich.console import Console
        from rich.live import Live

        self.t = tracker
        self.console = Console(file=out)
        self.live = Live(self.render(), console=self.console, refresh_per_second=4,
                         transient=False)  # fmt: skip
        self.live.start()

    def render(self) -> Any:
        """The display: a row per run, then what is playing now."""
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        t = self.t
        table = Table(expand=False, show_edge=False, pad_edge=False)
        for name in ("run", "", "done", "mean score", "tokens", "cost $"):
            table.add_column(name, justify="left" if name in ("run", "") else "right")
        for run in t.runs.values():
            table.add_row(
                Text(terminal_safe(run.label)[:60]),
                ProgressBar(total=max(run.total, 1), completed=run.done, width=20),
                f"{run.done}/{run.total}" + (f" ({run.failed} failed)" if run.failed else ""),
                "-" if math.isnan(run.mean) else f"{run.mean:.2f}",
                f"{run.tokens:,}",
                "-" if run.cost is None else f"{run.cost:,.4f}",
            )
        now = t.clock()
        lines = [
            f"{t.n}/{t.total} episodes | {len(t.playing)} in flight | {requests_in_flight()}"
            f" model requests | tokens in {t.tin:,} out {t.tout:,}{_cost_text(t.cost)}"
            f" | elapsed {fmt_time(t.elapsed())} eta {t.eta()}"
        ]
        for p in t.slowest():
            lines.append(
                f"  slowest: {terminal_safe(p.label)[:60]} seed={p.seed} step {p.step}"
                f" ({fmt_time(now - p.started)})"
            )
        return Group(table, Text("\n".join(lines)))

    def episode(self, label: str, ep: EpisodeRecord) -> None:
        self.tick()

    def tick(self) -> None:
        self.live.update(self.render())

    def close(self) -> None:
        self.tick()
        self.live.stop()


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
    model (the ETA's base)."""

    def __init__(self, totals: dict[str, int], model_total: int, out: TextIO | None) -> None:
        self.tracker = Tracker(dict(totals), model_total)
        self.view: PlainProgress | LiveProgress = (
            LiveProgress(self.tracker, out) if out is not None and wants_live(out)
            else PlainProgress(self.tracker, out)
        )  # fmt: skip

    @contextlib.contextmanager
    def playing(self, label: str, seed: int, rollout: int) -> Iterator[list[int | None]]:
        """Around one episode: its steps reach the tracker through :data:`STEP_HOOK`."""
        handle = self.tracker.started(label, seed, rollout)
        token = STEP_HOOK.set(lambda steps: self.tracker.step(handle, steps))
        box: list[int | None] = [handle]
        try:
            yield box
        finally:
            STEP_HOOK.reset(token)

    def episode(self, handle: int | None, label: str, ep: EpisodeRecord, uses_model: bool) -> None:
        self.tracker.finished(handle, label, ep, uses_model)
        self.view.episode(label, ep)

    async def beat(self, every: float = 0.25) -> None:
        """Redraw / heartbeat until cancelled."""
        while True:
            await asyncio.sleep(every)
            self.view.tick()

    def close(self) -> None:
        self.view.close()
