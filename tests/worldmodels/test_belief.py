"""Property tests of the categorical belief (seed 004, A.4.2 / C.3.2)."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from statelab.worldmodels import queries as Q
from statelab.worldmodels.belief import Belief, mixture, uniform, zipf

ATOMS = [f"r{i}" for i in range(8)]

events = st.lists(
    st.one_of(
        st.tuples(st.just("absent"), st.sets(st.sampled_from(ATOMS), max_size=3)),
        st.tuples(st.just("seen"), st.sampled_from(ATOMS)),
    ),
    max_size=12,
)
priors = st.lists(st.sampled_from(ATOMS), min_size=1, max_size=8, unique=True).flatmap(
    lambda atoms: st.tuples(
        st.just(atoms), st.lists(st.floats(0.01, 10), min_size=len(atoms), max_size=len(atoms))
    )
)


def apply(b: Belief, evs: list) -> Belief:
    for kind, arg in evs:
        b = b.absent(arg) if kind == "absent" else b.seen(arg)
    return b


@given(priors, events)
def test_the_belief_sums_to_one_over_its_support_after_any_events(prior, evs):
    atoms, weights = prior
    b = apply(Belief.from_weights(dict(zip(atoms, weights, strict=True))), evs)
    assert b.empty or math.isclose(sum(p for _, p in b.dist), 1.0)
    assert all(p > 0 for _, p in b.dist)


@given(priors, st.sets(st.sampled_from(ATOMS), min_size=1, max_size=3))
def test_absence_zeroes_those_atoms_and_renormalises_the_rest(prior, gone):
    atoms, weights = prior
    b = Belief.from_weights(dict(zip(atoms, weights, strict=True)))
    after = b.absent(gone)
    assert not after.support & gone
    kept = sum(b.prob(a) for a in after.support)
    for a in after.support:  # the ratios of the survivors are unchanged
        assert math.isclose(after.prob(a), b.prob(a) / kept)


@given(priors, st.sampled_from(ATOMS))
def test_a_sighting_gives_a_point_mass(prior, atom):
    atoms, weights = prior
    b = Belief.from_weights(dict(zip(atoms, weights, strict=True))).seen(atom)
    assert b.dist == ((atom, 1.0),) and b.located_at == atom


@given(priors, events)
def test_the_posterior_is_exact_bayesian_conditioning(prior, evs):
    """Presence/absence renormalisation equals the prior times the likelihood of every
    observation, normalised, computed from scratch."""
    atoms, weights = prior
    b = apply(Belief.from_weights(dict(zip(atoms, weights, strict=True))), evs)
    # from scratch: the likelihood of "absent from S" is 0 on S, of "seen at a" 1 only at a
    post = dict(zip(atoms, weights, strict=True))
    for kind, arg in evs:
        if kind == "absent":
            post = {a: (0.0 if a in arg else w) for a, w in post.items()}
        else:  # a sighting is a new fact: the point mass
            post = {arg: 1.0}
    total = sum(post.values())
    expected = {a: w / total for a, w in post.items() if w > 0} if total > 0 else {}
    assert set(expected) == b.support
    for a, p in expected.items():
        assert math.isclose(b.prob(a), p)


@given(priors, st.integers(0, 1000))
@settings(max_examples=50)
def test_noprob_names_exactly_the_support_of_belief_without_numbers(prior, seed):
    atoms, weights = prior
    b = Belief.from_weights(dict(zip(atoms, weights, strict=True)))
    text = Q.may_be("apple", [a for a, _ in b.dist], random.Random(seed))
    named = text.removeprefix("apple may be at: ").rstrip(".").split(", ")
    assert set(named) == b.support and len(named) == len(b.support)
    assert "(" not in text


def test_where_is_lists_locations_until_ninety_percent_then_the_rest():
    b = Belief.from_weights({"a": 0.5, "b": 0.3, "c": 0.15, "d": 0.05})
    assert Q.most_likely("egg", b.ranked(), "receptacles") == (
        "egg is most likely at: a (0.50), b (0.30), c (0.15), and other receptacles (5%)."
    )
    assert Q.ranking(uniform(["x", "y"]).ranked()) == "x (0.50), y (0.50)"


def test_zipf_prior_weights_rank_k_by_k_to_the_minus_1_25():
    b = zipf(["a", "b", "c"])
    w = [1, 2**-1.25, 3**-1.25]
    assert [round(p, 6) for _, p in b.dist] == [round(x / sum(w), 6) for x in w]


def test_mixture_of_a_located_and_an_open_belief():
    m = mixture([uniform(["a"]).seen("a"), uniform(["b", "c"])])
    assert m.prob("a") == 0.5 and m.prob("b") == 0.25
