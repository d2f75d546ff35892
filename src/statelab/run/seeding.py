"""How the episodes of an experiment are seeded: each (config seed, rollout) pair's env seed
(the instance it plays) and sampling seed (the stream its model calls and components draw
from).

Scheme 2 (this one; episodes record it in the store's ``seeding`` column):

- rollout 0 plays the seed itself, with the seed as its sampling seed;
- with ``replay`` (a config's ``replay: true``) every rollout plays its seed's instance
  with a sampling seed of its own;
- otherwise every (seed, rollout) pair is an instance of its own: a further rollout of a
  seed inside one of the env's splits plays an instance of that split that no other
  (seed, rollout) of the run plays (none of the run's config seeds either), dealt from a
  fixed shuffle of the split; a seed outside every split plays a derived seed outside every
  split (a seed that is no split's cannot land in a sealed test split). A split too small to
  give every rollout an unused instance of its own gives none: its seeds' further rollouts
  replay their seed's instance with sampling seeds of their own, as ``replay`` does, and
  :attr:`Seeding.note` says so in one line (read when the config is; ``statelab run``
  prints it).

Every (env seed, sampling seed) pair of a run is distinct (checked when the config is
read): two episodes of one run are never the same episode, so the seeds stay independent
units for the sign-flip test and the bootstrap. Every run of an env of one experiment gets
the same assignment, so runs stay paired by instance. Scheme 1 (stores written before it
recorded the ``seeding`` column) drew a split rollout by a hash that other seeds' rollout 0
could equal and played ``seed * 1000 + rollout`` outside splits (seed 0's rollout 1 was
seed 1's rollout 0); :func:`stored_seeds` still reads its episodes' seeds, for replaying
them.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from statelab.core import ConfigError
from statelab.envs import env_class

#: the scheme this statelab seeds new episodes by (stored per episode: ``seeding``)
SCHEME = 2
#: the largest env seed a derived one takes (the envs take 63-bit seeds, as configs do)
_BITS = 63
#: SeedSequence words keeping the derivations apart (env seeds, split shuffles)
_ENV_WORD, _SPLIT_WORD = 0x5EED_E, 0x5EED_5


@dataclass(frozen=True)
class EpisodeSeeds:
    """The seeds of one episode: the instance it plays and the stream it samples from."""

    env_seed: int
    sampling_seed: int


def replay_sampling_seed(env_seed: int, rollout: int) -> int:
    """The sampling seed of a rollout replaying its seed's instance: the env seed for
    rollout 0, else a hash of env seed and rollout (the same in both schemes)."""
    if rollout == 0:
        return env_seed
    return int(hashlib.sha256(f"{env_seed}/{rollout}/sampling".encode()).hexdigest()[:15], 16)


def derived_seed(*words: int) -> int:
    """A 63-bit seed derived from non-negative ``words`` by NumPy's SeedSequence (its
    hashing mixes every word into every output bit; different words, independent seeds)."""
    state = np.random.SeedSequence(list(words)).generate_state(1, np.uint64)
    return int(state[0]) >> (64 - _BITS)


def _name_word(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Seeding:
    """The seeds of every episode of one env of an experiment: its config ``seeds``, each
    played ``rollouts`` times, every rollout replaying its seed with ``replay``."""

    env: str
    seeds: tuple[int, ...]
    rollouts: int = 1
    replay: bool = False

    @functools.cached_property
    def _plan(self) -> tuple[dict[tuple[int, int], EpisodeSeeds], tuple[str, ...]]:
        cls = env_class(self.env)
        splits = [(name, r) for name, r in cls.splits.items() if len(r)]
        dealt: dict[tuple[int, int], int] = {}  # a split rollout's instance
        notes: list[str] = []
        replayed: set[int] = set()  # seeds whose split is too small to deal from
        if self.rollouts > 1 and not self.replay:
            used = set(self.seeds)
            for name, split in splits:
                inside = sorted(s for s in used if s in split)
                if not inside:
                    continue
                pool = len(split) - len(inside)
                need = len(inside) * (self.rollouts - 1)
                if need > pool:
                    replayed.update(inside)
                    notes.append(
                        f"rollouts: {self.env}'s split {name!r} has {pool} instances"
                        f" besides the {len(inside)} seeds in it, and {self.rollouts - 1}"
                        f" further rollouts of each need {need}: those rollouts replay their"
                        " seed's instance with sampling seeds of their own (as replay: true)"
                    )
                    continue
                # one fixed shuffle of the whole split, dealt past the run's seeds: a seed
                # added later changes no earlier draw unless it was one
                order = np.random.default_rng([_SPLIT_WORD, _name_word(f"{cls.name}/{name}")])
                free = (split[i] for i in order.permutation(len(split)).tolist())
                picks = (s for s in free if s not in used)
                for s in inside:
                    for r in range(1, self.rollouts):
                        dealt[(s, r)] = int(next(picks))
        table: dict[tuple[int, int], EpisodeSeeds] = {}
        for s in self.seeds:
            for r in range(self.rollouts):
                if r == 0 or self.replay or s in replayed:
                    e, sampling = s, replay_sampling_seed(s, r)
                else:  # an instance of its own, sampled by its own seed
                    e = dealt[(s, r)] if (s, r) in dealt else _outside(s, r, splits)
                    sampling = e
                table[(s, r)] = EpisodeSeeds(e, sampling)
        return table, tuple(notes)

    def of(self, seed: int, rollout: int) -> EpisodeSeeds:
        """The seeds of episode (``seed``, ``rollout``)."""
        try:
            return self._plan[0][(seed, rollout)]
        except KeyError:
            raise ConfigError(
                f"seed {seed} rollout {rollout} is not an episode of this {self.env} run"
                f" ({len(self.seeds)} seeds x {self.rollouts} rollouts)"
            ) from None

    @property
    def episodes(self) -> Mapping[tuple[int, int], EpisodeSeeds]:
        """(seed, rollout) -> its seeds, for every episode (read-only)."""
        return MappingProxyType(self._plan[0])

    @property
    def notes(self) -> tuple[str, ...]:
        """One line per split too small to give every rollout an instance of its own."""
        return self._plan[1]

    def check(self) -> None:
        """Refuse, in one line, an assignment where two episodes share their seeds (a
        derived seed equal to a config seed: never seen, but never left to chance)."""
        seen: dict[EpisodeSeeds, tuple[int, int]] = {}
        for key, got in self._plan[0].items():
            if got in seen:
                raise ConfigError(
                    f"seeds: {self.env} seed {key[0]} rollout {key[1]} would replay seed "
                    f"{seen[got][0]} rollout {seen[got][1]} (env seed {got.env_seed});"
                    " drop one of the two seeds"
                )
            seen[got] = key


def _outside(seed: int, rollout: int, splits: list[tuple[str, range]]) -> int:
    """A derived env seed for (seed, rollout) of a seed outside every split, outside every
    split too (a rare derived seed that lands in one is derived again)."""
    attempt = 0
    while True:
        e = derived_seed(_ENV_WORD, seed, rollout, attempt)
        if not any(e in r for _, r in splits):
            return e
        attempt += 1


@functools.lru_cache(maxsize=256)
def seeding_for(
    env: str, seeds: tuple[int, ...], rollouts: int = 1, replay: bool = False
) -> Seeding:
    """The :class:`Seeding` of one env of an experiment (built once per arguments)."""
    return Seeding(env, seeds, rollouts, replay)


def single(env: str, seed: int, rollout: int, replay: bool = False) -> EpisodeSeeds:
    """The seeds of (``seed``, ``rollout``) played outside an experiment: those it has in a
    run of that seed alone."""
    return seeding_for(env, (seed,), rollout + 1, replay).of(seed, rollout)


def stored_seeds(
    env: str,
    seed: int,
    rollout: int,
    replay: bool,
    env_seed: int | None,
    sampling_seed: int | None,
) -> EpisodeSeeds:
    """The seeds a stored episode played: those it recorded, or, for an episode stored by
    scheme 1 (no sampling seed recorded), what scheme 1 derived from its env seed."""
    if sampling_seed is not None and env_seed is not None:
        return EpisodeSeeds(int(env_seed), int(sampling_seed))
    first = int(env_seed) if env_seed is not None else _scheme1_env_seed(env, seed, rollout, replay)
    return EpisodeSeeds(first, replay_sampling_seed(first, rollout) if replay else first)


#: the episode columns :func:`check_resume` reads
RESUME_COLUMNS = ("run", "seed", "rollout", "env_seed", "sampling_seed", "seeding")


def check_resume(
    done: Iterable[Mapping[str, Any]], plans: Mapping[str, tuple[str, Seeding]]
) -> None:
    """Refuse, in one line, to add episodes to a run whose finished episodes (``done``:
    episode rows with :data:`RESUME_COLUMNS`) were seeded otherwise than this config seeds
    them: by scheme 1 (its rollouts could replay other seeds' episodes, its floor ignored
    the rollout), or with other seeds or rollouts (a split's instances are dealt over the
    run's seeds). ``plans`` maps each run with episodes left to play to its label and
    :class:`Seeding`. A finished run is never refused: its episodes stay as they were."""
    old: dict[str, int] = {}
    # in (run, seed, rollout) order: the line names the same episode whatever order the
    # episodes were committed in
    for row in sorted(done, key=lambda r: (str(r["run"]), int(r["seed"]), int(r["rollout"]))):
        plan = plans.get(str(row["run"]))
        if plan is None:
            continue
        label, seeding_ = plan
        if row["seeding"] is None or int(row["seeding"]) < SCHEME:
            old[label] = old.get(label, 0) + 1
            continue
        key = (int(row["seed"]), int(row["rollout"]))
        if key not in seeding_.episodes:
            continue
        want = seeding_.of(*key)
        if (row["env_seed"], row["sampling_seed"]) != (want.env_seed, want.sampling_seed):
            raise ConfigError(
                f"run {label}: seed {key[0]} rollout {key[1]} is stored on env seed "
                f"{row['env_seed']}, sampling seed {row['sampling_seed']}; this config seeds"
                f" it {want.env_seed}, {want.sampling_seed} (its seeds or rollouts changed):"
                " adding episodes would mix two assignments; restore the seeds, or write to"
                " a new out folder"
            )
    if old:
        label, n = next(iter(old.items()))
        raise ConfigError(
            f"run {label}: its {n} finished episodes were seeded by an earlier statelab (a"
            " rollout could replay another seed's episode, the floor ignored the rollout);"
            " adding episodes would mix two seedings: write this experiment to a new out"
            " folder (the response cache answers the unchanged calls again)"
        )


def _scheme1_env_seed(env: str, seed: int, rollout: int, replay: bool) -> int:
    """Scheme 1's env seed (stores before it recorded one per episode)."""
    if rollout == 0 or replay:
        return seed
    for split in env_class(env).splits.values():
        if seed in split:
            h = int(hashlib.sha256(f"{seed}/{rollout}".encode()).hexdigest()[:15], 16)
            return split[h % len(split)]
    return seed * 1000 + rollout


__all__ = [
    "RESUME_COLUMNS",
    "SCHEME",
    "EpisodeSeeds",
    "Seeding",
    "check_resume",
    "derived_seed",
    "replay_sampling_seed",
    "seeding_for",
    "single",
    "stored_seeds",
]
