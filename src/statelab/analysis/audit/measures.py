"""The measures of a decision-sufficiency audit (docs/audit.md): decision loss, its
decomposition into β and κ, the relevance lag, and what a run's history spelling says about
the state it keeps (its budget B, its form across budgets).

- **decision loss** δ = the reader's negative log-likelihood (nats) of the optimal action a*
  among the labelled admissible actions, log-softmax normalised over them.
- **β = δ_oracle − δ_full** (budget loss: what a B-token state loses even in hindsight) and
  **κ = δ_W − δ_oracle** (write-time regret); δ_W − δ_full = β + κ. β may be negative: the
  oracle is a reference, not a bound.
- **relevance lag**: leave-one-chunk-out rescoring of the full history: Δ_i = δ(history
  without chunk i) − δ(history). Undefined when max Δ_i < :data:`LAG_THRESHOLD` nats; else
  the chunk of largest Δ (ties: the earliest) at lag n − 1 − i steps before the decision.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statelab.analysis._components import arguments, without

LAG_THRESHOLD = 0.5


# -- decision loss, β and κ ---------------------------------------------------------------
def decision_loss(logprobs: Mapping[str, float], a_star: str | None) -> float | None:
    """−log p(a*) from a reader's normalised log-probabilities of every command (None when
    a* is unknown or not among them)."""
    if a_star is None or a_star not in logprobs:
        return None
    return -float(logprobs[a_star])


@dataclass(frozen=True)
class Decomposition:
    """δ_full, δ_oracle, δ_W at one decision point, and β, κ."""

    full: float
    oracle: float
    writer: float

    @property
    def beta(self) -> float:
        """Budget loss: δ_oracle − δ_full."""
        return self.oracle - self.full

    @property
    def kappa(self) -> float:
        """Write-time regret: δ_W − δ_oracle."""
        return self.writer - self.oracle


def decompose(full: float, oracle: float, writer: float) -> Decomposition:
    """The :class:`Decomposition` of one point's three decision losses."""
    return Decomposition(full, oracle, writer)


# -- relevance lag ------------------------------------------------------------------------
@dataclass(frozen=True)
class RelevanceLag:
    """The relevance lag of one decision point (:func:`relevance_lag`)."""

    #: steps between the most consequential chunk and the decision (None: undefined)
    lag: int | None
    #: that chunk's index (oldest first), and the NLL increase its removal caused
    chunk: int | None
    gain: float


def relevance_lag(
    base: float, without: Sequence[float], threshold: float = LAG_THRESHOLD
) -> RelevanceLag:
    """The lag from the NLL with every chunk (``base``) and with each chunk left out."""
    if not without:
        return RelevanceLag(None, None, 0.0)
    gains = [w - base for w in without]
    best = max(gains)
    if best < threshold:
        return RelevanceLag(None, None, best)
    i = next(k for k, g in enumerate(gains) if g == best)  # ties: the earliest chunk
    return RelevanceLag(len(gains) - 1 - i, i, best)


async def leave_one_chunk_out(
    chunks: Sequence[str], nll: Callable[[Sequence[str]], Awaitable[float]]
) -> tuple[float, list[float]]:
    """``nll`` of the whole history and of the history without each chunk in turn."""
    base = await nll(chunks)
    without = [await nll([c for j, c in enumerate(chunks) if j != i]) for i in range(len(chunks))]
    return base, without


# -- what a run's history spelling records (parsed by its registry, never here) ----------
def budget_of(history: str, stored: Any = None) -> int | None:
    """B of a run's history: its ``budget`` argument (``last-k:64``, ``bounded:summary:128``,
    ``oracle-readtime:64:2``: 64); None for an unbudgeted one."""
    budget = arguments("history", history, stored).get("budget")
    return int(budget) if budget is not None else None


def form_of(history: str) -> str:
    """The history without its budget (and samples): ``bounded:summary``, ``last-k``,
    ``oracle-readtime``, ``full`` (the row key across budgets)."""
    return without("history", history, "budget", "samples")


def oracle_view(oracle: Any, history: str, obs: Any) -> str:
    """The reader's view with ``history`` (a rendered memory) before the observation."""
    from statelab.state.view import compose_view

    return compose_view(history, oracle.render_obs(obs), oracle.view_goal(obs.goal))


__all__ = [
    "LAG_THRESHOLD",
    "Decomposition",
    "RelevanceLag",
    "budget_of",
    "decision_loss",
    "decompose",
    "form_of",
    "leave_one_chunk_out",
    "oracle_view",
    "relevance_lag",
]
