"""Seed 003's Phase-A check and the two filler protocols (Appendices A and F).

- The check that every ingredient and tool appeared before the reveal reads what the writer
  is shown (the prelude's observations), not the reset text no memory receives; Phase A opens
  with ``look`` so the starting room is shown (validation seed 1006, a one-room game, names
  the needed items only in the reset text and its ``look``); a game that fails the check is
  redrawn, deterministically from the env seed.
- ``filler=pre`` (the original protocol F) takes the same seeded walk as F' but before the
  reveal: exploration and the walk to the kitchen, F filler steps, the walk back to the
  kitchen, the cookbook; F' (``filler=post``, the default) reads the cookbook before the walk.

Games come from the on-disk cache (generated on first use, 4-12 s each)."""

from __future__ import annotations

import pytest

pytest.importorskip("textworld")

from statelab.envs import _cooking_games as games
from statelab.envs import make_env
from statelab.envs.cooking import CookingEnv, clean

#: validation, one room: the needed items are named in the reset text and the room's ``look``
#: only (before Phase A opened with ``look``, its first draw failed the check and was redrawn)
ONE_ROOM = 1006


def test_draw_zero_is_the_seeds_own_game_and_a_redraw_is_deterministic():
    assert games.spec_for(0).key == "train-0-r3-g12-405b9309e1"  # unchanged: cached games hold
    assert games.spec_for(0, 0) == games.spec_for(0)
    a, b = games.spec_for(ONE_ROOM, 1), games.spec_for(ONE_ROOM, 1)
    assert a == b and a.draw == 1 and a.split == games.spec_for(ONE_ROOM).split == "valid"
    assert a.seed == ONE_ROOM + games.REDRAW_STRIDE and a.key != games.spec_for(ONE_ROOM).key
    assert games.spec_for(ONE_ROOM, 2).seed != a.seed


def test_phase_a_opens_with_look_so_a_one_room_game_shows_its_room_to_the_writer():
    env = make_env("cooking")
    _, info = env.reset(seed=ONE_ROOM)
    prelude, phase = info["prelude"], info["privileged"]["phase_a"]
    assert games.spec_for(ONE_ROOM).rooms == 1 and phase["draw"] == 0  # its own game now
    assert prelude[0][0] == "look"
    intro = clean(env._tw.reset().feedback).lower()  # the reset text (no memory gets it)
    after_look = "\n".join(o.text for _, o in prelude[1 : phase["reveal"]]).lower()
    hidden = [t for t in phase["targets"] if t.lower() not in after_look]
    assert hidden and all(t.lower() in intro for t in hidden)  # the reset text had them ...
    assert all(t.lower() in prelude[0][1].text.lower() for t in hidden)  # ... and so has look
    assert phase["all_observed"] is True and phase["explore_steps"] >= 1
    env.close()


def test_the_check_reads_the_prelude_and_a_failing_game_is_redrawn(tmp_path, monkeypatch):
    # a private cache holding draws 0 and 1 of ONE_ROOM (the rejection mark lands there)
    draws = [games.spec_for(ONE_ROOM, d) for d in (0, 1)]
    paths = [games.ensure_game(s) for s in draws]
    monkeypatch.setenv("STATELAB_CACHE", str(tmp_path))
    for spec, path in zip(draws, paths, strict=True):
        games.game_path(spec).parent.mkdir(parents=True, exist_ok=True)
        for suffix in (".z8", ".json", ".ni"):
            if path.with_suffix(suffix).exists():
                games.game_path(spec).with_suffix(suffix).symlink_to(path.with_suffix(suffix))
    real = CookingEnv.needed

    def needed(self):  # draw 0 needs a thing no observation names: it must fail the check
        ingredients, tools = real(self)
        return (ingredients, [*tools, "unicorn"]) if self._spec.draw == 0 else (ingredients, tools)

    monkeypatch.setattr(CookingEnv, "needed", needed)
    _, info = make_env("cooking").reset(seed=ONE_ROOM)
    got = info["privileged"]["phase_a"]
    assert got["draw"] == 1 and got["all_observed"] is True
    assert games.rejected(draws[0]) and not games.rejected(draws[1])
    assert info["privileged"]["game"] == draws[1].key
    shown = "\n".join(o.text for _, o in info["prelude"][: got["reveal"]]).lower()
    assert all(t.lower() in shown for t in got["targets"])
    _, again = make_env("cooking").reset(seed=ONE_ROOM)  # the mark skips draw 0 next time
    assert again["privileged"]["game"] == draws[1].key


@pytest.mark.parametrize("seed", [0, 1])
def test_pre_reveal_filler_is_the_same_walk_before_the_cookbook(seed):
    lag = 10
    post_env, pre_env = make_env(f"cooking:lag={lag}"), make_env(f"cooking:lag={lag}+filler=pre")
    _, post = post_env.reset(seed=seed)
    _, pre = pre_env.reset(seed=seed)
    a_post = [a for a, _ in post["prelude"]]
    a_pre = [a for a, _ in pre["prelude"]]
    r = a_post.index("examine cookbook")
    assert a_post[r + 1 :] and len(a_post) - 1 - r == lag  # F': the walk after the reveal
    # F: the same exploration and walk to the kitchen, then the same F walk ...
    assert a_pre[:r] == a_post[:r]
    assert a_pre[r : r + lag] == a_post[r + 1 :]
    # ... then back to the kitchen (doors and moves only) and the cookbook, last
    back = a_pre[r + lag : -1]
    assert all(a.startswith(("go ", "open ")) for a in back)
    assert a_pre[-1] == "examine cookbook" and a_pre.count("examine cookbook") == 1
    assert pre["privileged"]["room"] == "kitchen"
    phase = pre["privileged"]["phase_a"]
    assert (phase["protocol"], phase["pre_filler"], phase["filler"]) == ("pre", lag, 0)
    assert phase["reveal"] == len(a_pre) - 1
    p = post["privileged"]["phase_a"]
    assert (p["protocol"], p["pre_filler"], p["filler"]) == ("post", 0, lag)
    assert pre["privileged"]["game"] == post["privileged"]["game"]  # the same game


def test_the_filler_option_is_declared_and_defaults_to_post():
    from statelab.core import ConfigError

    assert make_env("cooking:lag=5").filler == "post"
    assert make_env("cooking:5+filler=pre").filler == "pre"
    with pytest.raises(ConfigError, match="filler"):
        make_env("cooking:5+filler=middle")
