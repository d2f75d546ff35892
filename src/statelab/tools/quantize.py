"""Vector quantization of geodesic windows into a tool library (seed 001, section 4.2).

The five-step windows cut from sampled geodesics (:mod:`statelab.tools.geodesics`) are
clustered with k-medoids (FasterPAM, from the ``kmedoids`` package, on a precomputed distance
matrix); each medoid is a member of the set, so it is a real five-letter action sequence, and
becomes a tool named by its letters. :func:`tool_library` adds the five one-move primitives.

The distance between two windows. Each window, reset to the origin, is the path it draws:
the agent's offset (dr, dc) after each of its five steps, stacked into a vector of ten
numbers (``window_vectors``); two windows are as far apart as the Euclidean distance between
these vectors, i.e. the root of the summed squared distances between where the two paths are
at each time step. This is the distance of the seed's reference code, and the right one for
this world: it compares where the agent *is*, step by step, so

- it respects geometry: ``U`` against ``D`` costs more than ``U`` against ``W`` (a letter
  Hamming distance would call all three mismatches equal);
- it respects timing, which matters when every car moves each step: ``DRRRR`` and ``RRRRD``
  end on the same cell but pass through different cells at different times (an endpoint
  distance would merge them);
- early differences weigh more than late ones, because an early deviation shifts every later
  position: the first move decides most of where a tool goes.

Scale: there are at most 5^5 = 3,125 distinct windows, however many are sampled, so the
distances are computed once between distinct windows (vectorised) and spread to the full
matrix in float32 (10,000 windows: 400 MB, which FasterPAM takes in about two seconds;
its random initialisation, seeded, is used: BUILD costs O(n^2 k) for no better result here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from statelab.envs.traffic_world import DELTAS, PRIMITIVES, TOOL_LEN

#: one move then four waits, and five waits (appended to the medoids, seed 001 appendix A.2)
PRIMITIVE_TOOLS: tuple[str, ...] = (
    *(a + "W" * (TOOL_LEN - 1) for a in PRIMITIVES[1:]),
    "W" * TOOL_LEN,
)


def window_vectors(windows: Sequence[str]) -> np.ndarray:
    """``(m, 2 * len)`` int array: cumulative (dr, dc) after each step of each window."""
    if not windows:
        return np.zeros((0, 2 * TOOL_LEN), dtype=np.int64)
    length = len(windows[0])
    if any(len(w) != length for w in windows):
        raise ValueError("all windows must have the same length")
    table = np.array([DELTAS[a] for a in PRIMITIVES], dtype=np.int64)
    index = {a: i for i, a in enumerate(PRIMITIVES)}
    try:
        codes = np.array([[index[a] for a in w] for w in windows], dtype=np.int64)
    except KeyError as err:
        raise ValueError(f"window letters must be among {''.join(PRIMITIVES)}: {err}") from None
    steps = table[codes]  # (m, len, 2)
    return np.cumsum(steps, axis=1).reshape(len(windows), 2 * length)


def distance_matrix(vectors: np.ndarray, dtype: type = np.float32) -> np.ndarray:
    """Pairwise Euclidean distances between rows (vectorised; exact for integer rows)."""
    x = np.asarray(vectors, dtype=np.float64)
    sq = (x * x).sum(axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (x @ x.T)
    np.maximum(d2, 0.0, out=d2)
    return np.sqrt(d2).astype(dtype)


def window_distances(windows: Sequence[str], dtype: type = np.float32) -> np.ndarray:
    """The full ``(m, m)`` distance matrix, computed between distinct windows only."""
    unique, inverse = np.unique(np.asarray(windows, dtype=object), return_inverse=True)
    d = distance_matrix(window_vectors([str(u) for u in unique]), dtype)
    inv = inverse.reshape(-1)
    return d[np.ix_(inv, inv)]


@dataclass(frozen=True)
class Quantization:
    """k-medoids of a set of windows: clusters ordered by size (largest first)."""

    medoids: tuple[str, ...]  # the medoid windows, members of the set
    medoid_indices: tuple[int, ...]  # their positions in the input
    labels: tuple[int, ...]  # cluster of each input window (index into ``medoids``)
    loss: float  # sum of distances to the nearest medoid

    def members(self, windows: Sequence[str], cluster: int) -> list[str]:
        return [w for w, lab in zip(windows, self.labels, strict=True) if lab == cluster]


def quantize(
    windows: Sequence[str], k: int = 5, seed: int = 0, max_iter: int = 100
) -> Quantization:
    """k-medoids (FasterPAM from ``seed``-drawn medoids, single-threaded, so the result is a
    function of ``windows``, ``k`` and ``seed``) of five-step windows under the
    cumulative-offset Euclidean distance. When the set has at most ``k`` distinct windows,
    each distinct window is a medoid."""
    import kmedoids

    if not windows:
        raise ValueError("nothing to quantize")
    distinct = list(dict.fromkeys(windows))
    if len(distinct) <= k:
        idx = [list(windows).index(w) for w in distinct]
        labels = [distinct.index(w) for w in windows]
        return _ordered(windows, idx, labels, 0.0)
    diss = window_distances(windows)
    result = kmedoids.fasterpam(
        diss, k, max_iter=max_iter, init="random", random_state=seed, n_cpu=1
    )
    return _ordered(
        windows,
        [int(i) for i in result.medoids],
        [int(x) for x in result.labels],
        float(result.loss),
    )


def _ordered(
    windows: Sequence[str], medoids: list[int], labels: list[int], loss: float
) -> Quantization:
    """Relabel clusters by decreasing size (ties: medoid string), so names are stable."""
    sizes = np.bincount(labels, minlength=len(medoids))
    order = sorted(range(len(medoids)), key=lambda j: (-sizes[j], windows[medoids[j]]))
    rank = {old: new for new, old in enumerate(order)}
    return Quantization(
        medoids=tuple(windows[medoids[j]] for j in order),
        medoid_indices=tuple(medoids[j] for j in order),
        labels=tuple(rank[lab] for lab in labels),
        loss=loss,
    )


def tool_library(medoids: Sequence[str]) -> tuple[str, ...]:
    """The five primitives (one move then four waits, and five waits) then the medoids,
    without repeats: the seed's ten-tool library for K = 5, each named by its letters, in the
    order seed 001's code offers them (primitives first)."""
    return tuple(dict.fromkeys([*PRIMITIVE_TOOLS, *medoids]))
