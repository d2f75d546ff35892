"""``statelab play``: an env in the terminal, played by hand or by its expert."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from statelab.cli._common import fail, say_safe
from statelab.core import ConfigError, prelude_of


def play(
    env: Annotated[str, typer.Argument(help="config name (hanoi) or Gymnasium id")],
    seed: Annotated[int, typer.Option(help="episode seed")] = 0,
    expert: Annotated[bool, typer.Option("--expert", help="let the expert play")] = False,
    format: Annotated[str, typer.Option("--format", help="state format to show")] = "default",
    max_steps: Annotated[int | None, typer.Option(help="step budget")] = None,
) -> None:
    """Play an env in the terminal (type an action or its number), or watch the expert.

    The last line is ``score=<float> success=<true|false> steps=<int>``.
    """
    from statelab.envs import env_class, make_env
    from statelab.facts import check
    from statelab.run.config import MAX_SEED, MAX_STEPS_FACTOR
    from statelab.run.spec import resolve_format
    from statelab.state import observation_renderer

    if not 0 <= seed <= MAX_SEED:
        raise fail(f"--seed: seeds are between 0 and 2**63-1, got {seed}")
    try:
        cls = env_class(env)
        if max_steps is not None and not 1 <= max_steps <= MAX_STEPS_FACTOR * cls.max_steps:
            raise ConfigError(
                f"--max-steps: between 1 and {MAX_STEPS_FACTOR * cls.max_steps} for {env!r}"
                f" ({MAX_STEPS_FACTOR}x its own budget of {cls.max_steps}), got {max_steps}"
            )
        fmt = resolve_format(env, format)
        check(fmt, cls.facts_type, env)
        e = make_env(env, max_steps=max_steps)
        render = observation_renderer(fmt)
        obs, info = e.reset(seed=seed)
    except ConfigError as err:
        raise fail(str(err)) from None
    except (ImportError, ValueError, RuntimeError) as err:  # an env's own one line
        raise fail(f"{env}: {err}") from None
    policy = e.expert() if expert else None
    say_safe(e.manual + "\n")
    for i, (act, o) in enumerate(prelude_of(info)):  # an env's scripted steps
        say_safe(f"\n[scripted {i + 1}] > {act}\n{render(o)}")
    done = False
    while not done:
        say_safe(f"\n[step {e.steps}] goal: {obs.goal}\n{render(obs)}")
        if policy is not None:
            action = policy.act(obs, info)
            say_safe(f"> {action}")
        else:
            actions = obs.admissible or ()
            for i, a in enumerate(actions, 1):
                say_safe(f"  {i}. {a}")
            line = sys.stdin.readline()
            if not line:
                break
            line = line.strip()
            action = (
                actions[int(line) - 1] if line.isdigit() and 0 < int(line) <= len(actions) else line
            )
        obs, reward, terminated, truncated, info = e.step(action)
        done = terminated or truncated
        if reward:
            typer.echo(f"(reward {reward:g})")
    say_safe(obs.text)
    typer.echo(f"score={e.score():.4g} success={str(e.success()).lower()} steps={e.steps}")
