import numpy as np
import pytest

from statelab.tools.geodesics import sample_geodesics, windows
from statelab.tools.plots import plot_clusters, plot_geodesics
from statelab.tools.quantize import (
    PRIMITIVE_TOOLS,
    distance_matrix,
    quantize,
    tool_library,
    window_distances,
    window_vectors,
)

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def sample():
    geos = sample_geodesics(250, seed=0)
    return geos, windows(geos)


def test_window_vectors_are_cumulative_offsets():
    v = window_vectors(["DRDRD", "WWWWW", "ULLUR"])
    assert v.tolist() == [
        [1, 0, 1, 1, 2, 1, 2, 2, 3, 2],
        [0] * 10,
        [-1, 0, -1, -1, -1, -2, -2, -2, -2, -1],
    ]
    with pytest.raises(ValueError):
        window_vectors(["DRDRX"])


def test_distances_are_euclidean_and_dedup_is_exact():
    ws = ["DRDRD", "RRRRR", "DDDDD", "DRDRD", "WWWWW", "RRRRD", "RRRRR"]
    v = window_vectors(ws).astype(float)
    ref = np.linalg.norm(v[:, None, :] - v[None, :, :], axis=-1)
    assert np.allclose(distance_matrix(v), ref, atol=1e-5)
    d = window_distances(ws)
    assert d.dtype == np.float32 and d.shape == (7, 7)
    assert np.allclose(d, ref, atol=1e-5)
    # timing matters: same endpoint, different paths
    assert d[1, 5] > 0 and window_vectors(["DRRRR"])[0, -2:].tolist() == [1, 4]


def test_quantize_returns_k_members_and_is_deterministic(sample):
    _, ws = sample
    q = quantize(ws, k=5, seed=0)
    assert len(q.medoids) == 5 and len(set(q.medoids)) == 5
    assert all(m in ws for m in q.medoids)
    assert [ws[i] for i in q.medoid_indices] == list(q.medoids)
    assert len(q.labels) == len(ws) and set(q.labels) == set(range(5))
    sizes = [q.labels.count(j) for j in range(5)]
    assert sizes == sorted(sizes, reverse=True)
    # every window is assigned to a nearest medoid
    d = window_distances(ws)
    nearest = d[:, list(q.medoid_indices)].min(axis=1)
    assigned = d[np.arange(len(ws)), [q.medoid_indices[lab] for lab in q.labels]]
    assert np.allclose(nearest, assigned)
    assert q.loss == pytest.approx(float(nearest.sum()), rel=1e-4)
    assert quantize(ws, k=5, seed=0) == q
    assert q.members(ws, 0) == [w for w, lab in zip(ws, q.labels, strict=True) if lab == 0]


def test_quantize_with_few_distinct_windows():
    q = quantize(["RRRRR", "DDDDD", "RRRRR"], k=5)
    assert q.medoids == ("RRRRR", "DDDDD") and q.labels == (0, 1, 0) and q.loss == 0.0
    with pytest.raises(ValueError):
        quantize([])


def test_tool_library_adds_the_primitives():
    lib = tool_library(["DRDRD", "RRRRR", "DDDDD", "DRRRR", "DDRDD"])
    # primitives first, as seed 001's code offers them
    assert lib == (*PRIMITIVE_TOOLS, "DRDRD", "RRRRR", "DDDDD", "DRRRR", "DDRDD")
    assert PRIMITIVE_TOOLS == ("UWWWW", "DWWWW", "LWWWW", "RWWWW", "WWWWW")
    assert len(lib) == 10
    assert tool_library(["WWWWW", "RRRRR"]) == (*PRIMITIVE_TOOLS, "RRRRR")


def test_plots_are_png(sample, tmp_path):
    geos, ws = sample
    data = plot_geodesics(geos[:50], tmp_path / "geodesics.png")
    assert data.startswith(PNG) and (tmp_path / "geodesics.png").read_bytes() == data
    q = quantize(ws, k=5, seed=0)
    assert plot_clusters(ws, q, tmp_path / "clusters.png").startswith(PNG)
