"""``statelab run --dry-run``: build everything a run would build, call no model.

What a user's CI runs on their configs: every axis value (already built dry at load), every
run's components, every env with its options and budget, every model spec as far as it can be
built without loading weights or sending a request, and the output paths.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from statelab.core import ACTING, ConfigError
from statelab.envs import make_env
from statelab.llm import MODELS, check_spec, make_llm
from statelab.llm.cache import not_a_cache
from statelab.run.components import describe_run
from statelab.run.config import Experiment
from statelab.run.store import check_store, writable

#: backends whose construction loads weights: a dry run checks their spelling only (built
#: dry: for ``hf:`` the options and an adapter, one a stage before writes counted as planned)
# TODO(lead): a "loads weights" flag on the MODELS registry would replace this list
_LOADS_WEIGHTS = ("llamacpp", "hf")


@dataclass
class DryRun:
    #: one line per run: its label and how many episodes it would play
    lines: list[str] = field(default_factory=list)
    runs: int = 0
    episodes: int = 0
    #: model specs checked by spelling only (their construction would load weights)
    not_loaded: list[str] = field(default_factory=list)


def _models(exp: Experiment) -> tuple[list[str], list[str]]:
    """Build every model spec of ``exp`` (no request sent); returns (built, not loaded)."""
    specs = sorted({*exp.models(), *(w for w in exp.grid.values("writer") if w != ACTING)})
    built, skipped = [], []
    for spec in specs:
        if MODELS.split(spec)[0] in _LOADS_WEIGHTS:
            check_spec(spec)
            skipped.append(spec)
            continue
        llm = make_llm(spec)  # no cache: a dry run writes nothing
        asyncio.run(llm.aclose())
        built.append(spec)
    return built, skipped


def check_cache_path(path: Path) -> None:
    """The response cache at ``path`` could be opened and written, checked without writing:
    a new file's folder is writable (:func:`writable`: not a folder, no file in its way); an
    existing one is a file this process may read and write, and an SQLite database (a
    response cache, or empty). One :class:`ConfigError` line otherwise."""
    writable(path, "cache")
    if not path.exists():
        probe = path.parent
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        try:  # what os.access cannot tell (root, a read-only or virtual file system): an
            with tempfile.TemporaryFile(dir=probe):  # unnamed file, gone when closed
                pass
        except OSError as e:
            why = e.strerror or e
            raise ConfigError(f"cache: cannot create a file in {probe} ({why})") from None
        return
    if not path.is_file():
        raise ConfigError(f"cache: {path} is not a regular file")
    if not os.access(path, os.R_OK | os.W_OK):
        raise ConfigError(f"cache: {path} is not readable and writable by this user")
    wrong = not_a_cache(path)
    if wrong:
        raise ConfigError(f"cache: {path} {wrong}")


def dry_run(exp: Experiment) -> DryRun:
    """Everything :func:`~statelab.run.runner.run_experiment` would build, or one
    :class:`ConfigError` naming the first thing that would fail."""
    store = exp.out_dir / "store.sqlite"
    writable(store, "out")
    if store.exists():
        check_store(store)
    if exp.cache is not None:
        check_cache_path(Path(exp.cache))
    for env in exp.grid.env:
        try:
            make_env(env, max_steps=exp.budget(env))
        except (ValueError, TypeError, ImportError) as e:
            raise ConfigError(f"grid.env: {env!r}: {e}") from None
    out = DryRun()
    _, out.not_loaded = _models(exp)
    for spec in exp.runs():
        describe_run(spec)
        n = len(exp.episodes(spec.env))
        out.runs += 1
        out.episodes += n
        seeds, rollouts = len(exp.env_seeds(spec.env)), exp.n_rollouts(spec.env)
        out.lines.append(
            f"{spec.label}: {seeds} seeds x {rollouts} rollouts = {n} episodes"
            + (f", at most {spec.max_steps} steps each" if spec.max_steps else "")
        )
    return out


__all__ = ["DryRun", "check_cache_path", "dry_run"]
