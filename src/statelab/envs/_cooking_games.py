"""TextWorld cooking games for the ``cooking`` env (seed 003), generated once and cached.

A game is made by TextWorld's own generator (``tw-make tw-cooking``, 4-12 s a game on this
machine) and cached on disk under ``$STATELAB_CACHE/cooking`` (default
``~/.cache/statelab/cooking``), keyed by the generator options (seed, recipe seed, split,
recipe size, rooms): a game is built at most once per cache, by whichever process asks first
(a lock file per game), and written atomically.

Every env seed names one game (:func:`spec_for`): the options are drawn from the seed, so room
counts vary (1, 6, 9 or 12 rooms) and recipes hold 1 to 3 ingredients, all of which must be
found (``--take`` = recipe size); doors and containers must be opened, ingredients cooked and
cut (``--open --cook --cut``). We do not pass ``--drop`` (a limited inventory): with it
TextWorld's own solver gives no policy, and the expert's a* comes from that solver.

Unseen foods and preparations: tw-make's ``--split`` draws from three disjoint subsets of
food items, and divides the ways training foods are prepared in three. ``--split valid`` (our
``validation`` seeds) holds validation foods plus training foods with preparations no training
game uses; ``--split test`` the same with the test subsets. Train seeds use ``--split train``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: bump when a change alters any generated game (the cache is keyed by it)
GEN_VERSION = 1
#: env seed ranges: disjoint, and each on its own tw-make split
SPLITS: dict[str, range] = {
    "train": range(0, 240),
    "validation": range(1000, 1045),
    "test": range(2000, 2090),
}
#: tw-make's split name for each of ours (seeds outside every range play train games)
TW_SPLIT = {"train": "train", "validation": "valid", "test": "test"}
#: room counts tw-cooking offers (``--go``)
ROOMS = (1, 6, 9, 12)
#: draws of a game per env seed at most (a draw failing the env's Phase-A check is redrawn)
MAX_DRAWS = 16
#: the tw-make seed of redraw k of env seed s is s + k * REDRAW_STRIDE (no env seed's own)
REDRAW_STRIDE = 100_000


@dataclass(frozen=True)
class GameSpec:
    """The tw-make options of one game."""

    seed: int
    split: str  # tw-make's: train | valid | test
    recipe: int  # ingredients in the recipe (1-3), all to be found
    rooms: int  # 1, 6, 9 or 12
    #: which draw of its env seed this game is (0: the first; see :func:`spec_for`)
    draw: int = 0

    def args(self) -> list[str]:
        return [
            "tw-cooking",
            "--recipe", str(self.recipe),
            "--take", str(self.recipe),
            "--go", str(self.rooms),
            "--open", "--cook", "--cut",
            "--split", self.split,
            "--seed", str(self.seed),
            "--recipe-seed", str(self.seed),
        ]  # fmt: skip

    @property
    def key(self) -> str:
        text = " ".join(self.args())
        digest = hashlib.sha1(f"v{GEN_VERSION} {text}".encode()).hexdigest()[:10]
        return f"{self.split}-{self.seed}-r{self.recipe}-g{self.rooms}-{digest}"


def split_of(seed: int) -> str:
    """Our split name for an env seed (``train`` outside every range)."""
    for name, r in SPLITS.items():
        if seed in r:
            return name
    return "train"


def spec_for(seed: int, draw: int = 0) -> GameSpec:
    """Draw ``draw`` of the game an env seed plays: options drawn from the seed alone.

    Draw 0 is the seed's own game. A later draw (the env redraws a game whose Phase A fails
    to show every ingredient and tool before the reveal) keeps the seed's split and draws
    rooms, recipe size and the tw-make seed (``seed + draw * REDRAW_STRIDE``) anew from
    (seed, draw), so a redraw is a different game, deterministically."""
    rng = random.Random(f"cooking:{seed}" if draw == 0 else f"cooking:{seed}:draw{draw}")
    rooms = ROOMS[rng.randrange(len(ROOMS))]
    recipe = rng.randint(1, 3)
    split = TW_SPLIT[split_of(seed)]
    return GameSpec(seed + draw * REDRAW_STRIDE, split, recipe, rooms, draw)


#: bump when the env's Phase-A check changes (older rejection marks are then ignored)
CHECK_VERSION = 2  # 2: Phase A opens with ``look``


def _rejected_mark(spec: GameSpec) -> Path:
    return game_path(spec).with_suffix(f".rejected{CHECK_VERSION}")


def rejected(spec: GameSpec) -> bool:
    """Whether the env found this game failing its Phase-A check before (a mark in the
    cache, so a redrawn seed does not replay the failing draw's Phase A at every reset)."""
    return _rejected_mark(spec).exists()


def reject(spec: GameSpec) -> None:
    """Mark this game as failing the env's Phase-A check."""
    mark = _rejected_mark(spec)
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.touch()


def cache_root() -> Path:
    """``$STATELAB_CACHE/cooking`` (default ``~/.cache/statelab/cooking``)."""
    base = os.environ.get("STATELAB_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "statelab") / "cooking"


def game_path(spec: GameSpec) -> Path:
    return cache_root() / f"v{GEN_VERSION}" / f"{spec.key}.z8"


def _tw_make() -> list[str]:
    exe = Path(sys.executable).parent / "tw-make"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "textworld.scripts.tw_make"]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_game(spec: GameSpec) -> Path:
    """The compiled game of ``spec``, generated now if the cache lacks it."""
    path = game_path(spec)
    if path.exists():
        return path
    with _locked(path):
        if path.exists():  # another process built it while we waited
            return path
        tmp_dir = path.parent / f".tmp-{spec.key}-{os.getpid()}"
        tmp_dir.mkdir(parents=True, exist_ok=True)
        out = tmp_dir / "game.z8"
        cmd = [*_tw_make(), *spec.args(), "--output", str(out), "--silent", "-f"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError(f"tw-make failed for {spec.key}: {done.stderr.strip()[-300:]}")
        for f in tmp_dir.iterdir():  # game.z8 and its game.json, next to each other
            f.replace(path.parent / f"{spec.key}{f.suffix}")
        tmp_dir.rmdir()
    return path


def ensure_games(seeds: range | list[int]) -> list[Path]:
    """Generate (or find) the games of ``seeds``, in order (``statelab`` tests and
    benchmarks call it once up front)."""
    return [ensure_game(spec_for(s)) for s in seeds]
