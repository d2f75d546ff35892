"""The Zipf placement of the earlier games (``household:starts=apart``, versions 2 and 3),
kept so that those games are written byte for byte."""

from __future__ import annotations

import random

from statelab.envs._household_layout import display_names

ZIPF_ALPHA = 1.25


def zipf_order(otype: str, kinds: dict[str, str]) -> list[str]:
    """Receptacle names ranked for seed 004's Zipf placement prior (section 5.3), most likely
    first: receptacle types in an order fixed per object type (a stable hash of both types),
    instances of one type by their number. ``kinds`` maps receptacle names to ALFWorld types.
    """
    import hashlib

    def key(name: str) -> tuple[str, int]:
        digest = hashlib.sha256(f"{otype}|{kinds[name]}".encode()).hexdigest()
        number = name.rsplit(" ", 1)[-1]
        return digest, int(number) if number.isdigit() else 0

    return sorted(kinds, key=key)


def zipf_choice(
    rng: random.Random, otype: str, allowed: list[str], recs: list[tuple[str, str, str]]
) -> str:
    """One of ``allowed`` (receptacle uids) by the Zipf law over :func:`zipf_order` of their
    display names."""
    rtype = {u: rt for u, rt, _ in recs}
    names = display_names([u for u, _, _ in recs])
    by_name = {names[u]: u for u in allowed}
    ranked = zipf_order(otype, {n: rtype[u] for n, u in by_name.items()})
    weights = [1.0 / (k**ZIPF_ALPHA) for k in range(1, len(ranked) + 1)]
    return by_name[rng.choices(ranked, weights=weights)[0]]
