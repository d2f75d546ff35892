"""``statelab cache``: see, prune and clear the response cache (:mod:`statelab.llm.cache`), safe
while a run uses it. The cache is named by its path, or by an experiment config (its
``cache:``); by default ``results/cache.sqlite``, every config's default."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from statelab.core import ConfigError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="See, prune or clear the response cache (safe while a run uses it).",
)

DEFAULT = Path("results/cache.sqlite")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

CacheArg = Annotated[
    Path | None,
    typer.Argument(
        help="the cache file, or an experiment config whose cache it is "
        "(default: results/cache.sqlite)"
    ),
]


def cache_of(where: Path | None) -> Path:
    """The cache file ``where`` names: itself, or a config's ``cache:`` (refused when the
    config turns the cache off)."""
    if where is None:
        return DEFAULT
    if where.suffix in (".yaml", ".yml"):
        from statelab.run.config import load_experiment

        exp = load_experiment(where)
        if exp.cache is None:
            raise ConfigError(f"{where}: its cache is off (cache: null)")
        return Path(exp.cache)
    return where


def parse_age(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s``: seconds (one line when unreadable)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if m is None:
        raise ConfigError(f"--older-than {text!r}: a number and a unit (s, m, h, d, w), e.g. 30d")
    return float(m[1]) * _UNITS[m[2]]


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


@app.command()
def stats(where: CacheArg = None) -> None:
    """Entries per model id: how many of each kind, their size, the oldest and newest."""
    from statelab.llm.cache import cache_stats

    path = cache_of(where)
    rows = cache_stats(path)
    total = sum(r["entries"] for r in rows)
    typer.echo(f"{path}: {total} entries, {len(rows)} model(s), file {_size(path.stat().st_size)}")
    for r in rows:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(r["kinds"].items()))
        typer.echo(f"  {r['model']}: {r['entries']} ({kinds}), {_size(r['bytes'])}, "
                   f"{r['oldest']} .. {r['newest']}")  # fmt: skip


@app.command()
def prune(
    where: CacheArg = None,
    older_than: Annotated[
        str | None, typer.Option("--older-than", help="entries older than this: 30d, 12h, 2w")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="entries of model ids matching this (a glob: 'hf:*')"),
    ] = None,
    vacuum: Annotated[
        bool, typer.Option("--vacuum", help="then compact the file (refused mid-write)")
    ] = False,
) -> None:
    """Delete the entries older than an age and/or of some models; a run using the cache
    meanwhile asks the model again for what was deleted."""
    from statelab.llm.cache import prune_cache

    path = cache_of(where)
    age = parse_age(older_than) if older_than is not None else None
    gone, left = prune_cache(path, older_than_s=age, model=model)
    typer.echo(f"{path}: pruned {gone} entries, {left} left")
    _compact(path, vacuum)


@app.command()
def clear(
    where: CacheArg = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="clear it (nothing is cleared without)")
    ] = False,
    vacuum: Annotated[
        bool, typer.Option("--vacuum", help="then compact the file (refused mid-write)")
    ] = False,
) -> None:
    """Delete every entry (the file stays; a run using it meanwhile asks the model again for
    what it had cached, and its new replies are cached as usual)."""
    from statelab.llm.cache import prune_cache

    path = cache_of(where)
    if not yes:
        raise ConfigError(f"{path}: clearing deletes every cached reply; say --yes")
    gone, _ = prune_cache(path, everything=True)
    typer.echo(f"{path}: cleared {gone} entries")
    _compact(path, vacuum)


def _compact(path: Path, vacuum: bool) -> None:
    if vacuum:
        from statelab.llm.cache import vacuum_cache

        typer.echo(f"{path}: compacted, {_size(max(0, vacuum_cache(path)))} freed")


__all__ = ["app", "cache_of", "clear", "parse_age", "prune", "stats"]
