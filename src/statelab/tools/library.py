"""Build and cache a geometry-derived tool library (seed 001, sections 4.1 to 4.3).

sample geodesics -> k-medoids of their five-step windows -> add the primitives -> describe.

A library is a function of :class:`LibrarySpec` (the grid: size, cars, target, window; and the
sampling: ``n`` geodesics, ``k`` medoids, ``seed``). Its geometry is built once and kept on
disk under ``<cache>/tools/<spec key>/library.json``, where ``<cache>`` is ``$STATELAB_CACHE``
or ``~/.cache/statelab``; the model's descriptions of its tools sit in the same folder, one
file per (model, form, sampling) (:mod:`statelab.tools.describe`). Within a process, finished
libraries are memoised and concurrent builds of the same one share a single build.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from statelab.core import LLM, GenParams
from statelab.envs.traffic_world import TrafficState
from statelab.facts import TrafficFacts
from statelab.facts.traffic import Cell
from statelab.tools.describe import cached_descriptions, exact_text, library_text, write_json
from statelab.tools.geodesics import Geodesic, safe_tools, sample_geodesics, windows
from statelab.tools.quantize import Quantization, quantize, tool_library

#: bump when the geometry pipeline changes: libraries of another version are rebuilt
GEOMETRY_VERSION = 3


def cache_root() -> Path:
    """Where libraries live: ``$STATELAB_CACHE/tools`` or ``~/.cache/statelab/tools``."""
    base = os.environ.get("STATELAB_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "statelab") / "tools"


@dataclass(frozen=True)
class LibrarySpec:
    """Everything a library's geometry depends on (the seed's defaults: 250 geodesics of the
    25x25 grid with 25 cars, K = 5). As seed 001's code plans them by default: with every car
    (``half`` None) and ties broken in frontier order (``ties="frontier"``); ``half=10``
    plans with the cars inside the start's window only, ``ties="random"`` at random."""

    size: int = 25
    n_cars: int = 25
    target: Cell = (24, 24)
    half: int | None = None
    n: int = 250
    k: int = 5
    seed: int = 0
    ties: str = "frontier"

    @property
    def key(self) -> str:
        body = json.dumps({**asdict(self), "version": GEOMETRY_VERSION}, sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    @classmethod
    def from_facts(cls, facts: TrafficFacts, visible: bool = False, **sampling: Any) -> LibrarySpec:
        """The grid of an observation (size, target; the window when geodesics are planned
        with the ``visible`` cars only) with the given sampling (``n_cars``, ``n``, ``k``,
        ``seed``, ``ties``)."""
        target = (int(facts.target[0]), int(facts.target[1]))
        half = facts.half if visible else None
        return cls(size=facts.size, target=target, half=half, **sampling)


@dataclass(frozen=True)
class Geometry:
    """The sampled geodesics, their quantization and the resulting tools (medoids first)."""

    spec: LibrarySpec
    geodesics: tuple[Geodesic, ...]
    quantization: Quantization
    tools: tuple[str, ...]

    @property
    def windows(self) -> list[str]:
        return windows(self.geodesics)

    def to_json(self) -> dict[str, Any]:
        q = self.quantization
        return {
            "spec": asdict(self.spec),
            "version": GEOMETRY_VERSION,
            "tools": list(self.tools),
            "quantization": {
                "medoids": list(q.medoids),
                "medoid_indices": list(q.medoid_indices),
                "labels": list(q.labels),
                "loss": q.loss,
            },
            # what the figures need; the car configurations are not kept
            "geodesics": [[g.start[0], g.start[1], g.actions, g.offset] for g in self.geodesics],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Geometry:
        s = data["spec"]
        spec = LibrarySpec(**{**s, "target": (int(s["target"][0]), int(s["target"][1]))})
        q = data["quantization"]
        quant = Quantization(
            tuple(q["medoids"]), tuple(q["medoid_indices"]), tuple(q["labels"]), float(q["loss"])
        )
        geos = tuple(
            Geodesic(spec.size, (int(r), int(c)), spec.target, (), (), str(a), int(o))
            for r, c, a, o in data["geodesics"]
        )
        return cls(spec, geos, quant, tuple(data["tools"]))


_BUILD_LOCK = threading.Lock()


def library_dir(spec: LibrarySpec, root: Path | None = None) -> Path:
    return (root or cache_root()) / spec.key


def build_geometry(spec: LibrarySpec, root: Path | None = None) -> Geometry:
    """The library's geometry, from the disk cache when there, else built and stored."""
    path = library_dir(spec, root) / "library.json"
    with _BUILD_LOCK:
        if path.is_file():
            data = json.loads(path.read_text())
            if data.get("version") == GEOMETRY_VERSION:
                return Geometry.from_json(data)
        geos = sample_geodesics(
            spec.n, seed=spec.seed, size=spec.size, n_cars=spec.n_cars, target=spec.target,
            half=spec.half, ties=spec.ties,
        )  # fmt: skip
        quant = quantize(windows(geos), k=spec.k, seed=spec.seed)
        geometry = Geometry(spec, tuple(geos), quant, tool_library(quant.medoids))
        write_json(path, geometry.to_json())
        return geometry


@dataclass(frozen=True)
class ToolLibrary:
    """The tools with their descriptions (``form``: ``long`` or ``short``)."""

    geometry: Geometry
    descriptions: dict[str, str] = field(default_factory=dict)
    form: str = "long"

    @property
    def names(self) -> tuple[str, ...]:
        return self.geometry.tools

    @property
    def key(self) -> str:
        return self.geometry.spec.key

    def text(self, names: Sequence[str] | None = None) -> str:
        """The library (or the tools ``names`` of it) as the prompt shows it."""
        return library_text(self.names if names is None else names, self.descriptions)

    def safe(self, facts: TrafficFacts, tools: Sequence[str] | None = None) -> list[str]:
        """The collision check (appendix A.2): the tools that hit no car visible in ``facts``
        when replayed from where the agent stands, in library order."""
        state = TrafficState(facts.size, facts.agent, facts.target, tuple(facts.cars), facts.half)
        return safe_tools(state, self.names if tools is None else tools, visible_only=True)


_MEMO: dict[tuple[Any, ...], ToolLibrary] = {}
_INFLIGHT: dict[tuple[Any, ...], asyncio.Task[ToolLibrary]] = {}


def clear_memo() -> None:
    """Forget the libraries built in this process (the disk cache stays)."""
    _MEMO.clear()
    _INFLIGHT.clear()


async def build_library(
    spec: LibrarySpec,
    llm: LLM | None,
    form: str = "long",
    params: GenParams | None = None,
    root: Path | None = None,
) -> ToolLibrary:
    """The described library: geometry (a worker thread, cached on disk) then descriptions by
    ``llm`` (cached on disk per model). Without a model, descriptions are the exact geometry
    alone. Memoised per (library, model, form, sampling) within the process."""
    base = replace(params or GenParams(), seed=None, choices=None, stop=())
    model = llm.model_id if llm is not None else "-"
    memo_key = (spec.key, str(root), model, form, base.temperature, base.top_p)
    if memo_key in _MEMO:
        return _MEMO[memo_key]
    task = _INFLIGHT.get(memo_key)
    if task is None or task.get_loop() is not asyncio.get_running_loop():
        task = asyncio.ensure_future(_build(spec, llm, form, base, root))
        _INFLIGHT[memo_key] = task
    try:
        library = await asyncio.shield(task)
    finally:
        if task.done() and _INFLIGHT.get(memo_key) is task:
            del _INFLIGHT[memo_key]
    _MEMO[memo_key] = library
    return library


async def _build(
    spec: LibrarySpec, llm: LLM | None, form: str, params: GenParams, root: Path | None
) -> ToolLibrary:
    geometry = await asyncio.to_thread(build_geometry, spec, root)
    if llm is None:
        descriptions = {t: exact_text(t) for t in geometry.tools}
    else:
        descriptions = await cached_descriptions(
            library_dir(spec, root), spec.key, geometry.tools, llm, form, params, spec.seed
        )
    return ToolLibrary(geometry, descriptions, form)


def library_figures(geometry: Geometry, out_dir: str | Path) -> dict[str, Path]:
    """Seed 001, figure 4: the sampled geodesics overlaid (``fig4_geodesics.png``) and one
    panel per k-medoids cluster (``fig4_clusters.png``)."""
    from statelab.tools.plots import plot_clusters, plot_geodesics

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "fig4_geodesics": out / "fig4_geodesics.png",
        "fig4_clusters": out / "fig4_clusters.png",
    }
    plot_geodesics(list(geometry.geodesics), paths["fig4_geodesics"])
    plot_clusters(geometry.windows, geometry.quantization, paths["fig4_clusters"])
    return paths
