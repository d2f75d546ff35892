"""The env contract's optional capabilities: declared on ``Env`` (off by default), kept by what
an env does (``check_env`` refuses a hook used undeclared, or declared and not kept), and
reported with what runs on an env lack without each (``check_env``'s result and
``statelab envs --capabilities``)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from statelab.core import CAPABILITIES, Env, Observation, a_star_of, prelude_of, tracked_of
from statelab.envs import env_class
from statelab.envs.checker import EnvReport, capability_report, check_env
from statelab.envs.hanoi import HanoiEnv

NAMES = [c.name for c in CAPABILITIES]


def test_every_capability_is_off_on_the_bare_contract():
    class Bare(HanoiEnv):
        privileged_map: ClassVar[bool] = False
        expert_any_state: ClassVar[bool] = False

        render_rgb = Env.render_rgb

    assert Bare.capabilities() == dict.fromkeys(NAMES, False)
    env = Bare()
    with pytest.raises(NotImplementedError, match="no action-validity oracle"):
        env.would_accept("Move the top disk of rod A to the top of rod C")
    assert type(env.fewshot_expert()) is type(env.expert())
    assert Env.task_type_of_goal("put a clean mug in the coffeemachine") is None
    assert prelude_of({}) == () and tracked_of({}) is None and a_star_of({"privileged": {}}) is None


@pytest.mark.parametrize(
    ("env", "offers"),
    [
        ("hanoi", ("expert-any-state", "images", "map")),
        ("textcraft", ("splits", "tracked", "expert-any-state")),
        ("cooking", ("splits", "sealed-splits", "a-star", "expert-any-state", "prelude")),
        ("household", ("splits", "kind", "task-family", "tracked", "task-types", "goal-types",
                       "expert-any-state", "fewshot-expert")),
        ("scienceworld/boil", ("splits", "kind", "task-family", "tracked", "oracle")),
        ("babyai/goto", ("kind", "task-family", "expert-any-state", "images", "map")),
        ("traffic", ("expert-any-state", "images")),
    ],
)
def test_the_report_names_what_each_env_offers_and_what_it_lacks(env, offers):
    rep = capability_report(env_class(env), env)
    assert rep.offers == offers
    assert set(rep.lacks) == set(NAMES) - set(offers)
    by_name = {c.name: c for c in CAPABILITIES}
    assert all(rep.lacks[n] == by_name[n].lacking for n in rep.lacks)
    assert rep.lines()[0] == f"{env}:" and len(rep.lines()) == 1 + len(NAMES)


def test_an_env_without_a_train_split_is_reported_to_lack_few_shot_examples():
    rep = capability_report(HanoiEnv)
    assert "few-shot examples" in rep.lacks["splits"]
    assert "  - splits: " + rep.lacks["splits"] in rep.lines()


def test_check_env_returns_the_report():
    offers = ("expert-any-state", "images", "map")
    assert check_env(HanoiEnv()) == EnvReport("hanoi", offers, capability_report(HanoiEnv).lacks)


class _Tracking(HanoiEnv):
    """Hanoi that fills the privileged tracked state (declared or not by the test)."""

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        obs, info = super()._reset(rng_seed, options)
        info["privileged"]["tracked"] = {"location": None, "inventory": [], "visited": []}
        return obs, info


class _Prelude(HanoiEnv):
    scripted_prelude: ClassVar[bool] = True


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (_Tracking, "'tracked'\\] is filled but the env does not declare tracks_state"),
        (type("Declared", (HanoiEnv,), {"tracks_state": True}),
         "declares tracks_state but info\\['privileged'\\]\\['tracked'\\] is missing"),
        (type("Typed", (HanoiEnv,), {"task_types": True}), "declares task_types"),
        (type("Optimal", (HanoiEnv,), {"optimal_action": True}), "declares optimal_action"),
        (_Prelude, "declares scripted_prelude but info\\['prelude'\\] is missing"),
        (type("Sealed", (HanoiEnv,), {"sealed_splits": ("test",)}), "a sealed split"),
        (type("Overlap", (HanoiEnv,), {"splits": {"train": range(0, 10), "test": range(5, 20)}}),
         "splits overlap"),
    ],
)  # fmt: skip
def test_check_env_refuses_a_capability_used_undeclared_or_declared_and_not_kept(cls, message):
    with pytest.raises(AssertionError, match=message):
        check_env(cls())


def test_a_declared_and_kept_capability_passes_and_is_reported():
    cls = type("Tracked", (_Tracking,), {"tracks_state": True})
    assert "tracked" in check_env(cls()).offers


def test_statelab_envs_capabilities_prints_one_line_per_env_and_a_legend():
    from statelab.cli import app

    res = CliRunner().invoke(app, ["envs", "--capabilities"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    legend = lines[1 : 1 + len(NAMES)]
    assert [x.split()[0] for x in legend] == NAMES
    (hanoi,) = [x for x in lines if x.startswith("hanoi ")]
    assert hanoi.split("+")[1].split(" - ")[0].split() == ["expert-any-state", "images", "map"]
    (house,) = [x for x in lines if x.startswith("household ")]
    assert house.split("  - ")[1].split() == ["sealed-splits", "a-star", "prelude", "oracle",
                                              "images", "map"]  # fmt: skip


def test_check_env_refuses_an_env_without_privileged_facts():
    class Blind(HanoiEnv):
        def _privileged(self, valid: bool = True) -> dict[str, Any]:
            info = super()._privileged(valid)
            del info["privileged"]["facts"]
            return info

    with pytest.raises(AssertionError, match="must hold 'facts'"):
        check_env(Blind())
