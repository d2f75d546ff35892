"""The ``statelab`` command: envs, play, run, report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from statelab.core import ConfigError, ModelError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Run LLM agents in dynamic environments and compare state representations. "
    "`statelab list` shows every axis a config crosses and what each takes.",
)


def _fail(msg: str) -> typer.Exit:
    typer.echo(f"error: {msg}", err=True)
    return typer.Exit(2)


@app.command()
def envs() -> None:
    """List the environments: the name a config takes, with its options, and its Gymnasium id."""
    from statelab.envs import ENVS, GYM_IDS

    rows = [(spelling, GYM_IDS[name]) for name, spelling in ENVS.describe()]
    width = max(len(r[0]) for r in rows)
    for spelling, gid in rows:
        typer.echo(f"{spelling:<{width}}  {gid}")


@app.command("list")
def list_axis(
    axis: Annotated[
        str | None, typer.Argument(help="an axis (env, model, agent, history, ...); none: all")
    ] = None,
) -> None:
    """List what an axis takes, as a config spells it (every axis when none is named)."""
    from statelab.run.axes import AXES
    from statelab.run.axes import axis as get_axis

    try:
        chosen = [get_axis(axis)] if axis else list(AXES)
    except ConfigError as err:
        raise _fail(str(err)) from None
    for a in chosen:
        if not axis:
            default = f" (default: {a.default})" if a.default else ""
            typer.echo(f"{a.name}: {a.help}{default}")
        for _name, spelling in a.listing():
            typer.echo(f"  {spelling}" if not axis else spelling)


@app.command()
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
    from statelab.run.config import resolve_format
    from statelab.state import observation_renderer
    from statelab.state.formats import check

    try:
        fmt = resolve_format(env, format)
        check(fmt, env_class(env).facts_type, env)
        e = make_env(env, max_steps=max_steps)
    except ConfigError as err:
        raise _fail(str(err)) from None
    render = observation_renderer(fmt)
    obs, info = e.reset(seed=seed)
    policy = e.expert() if expert else None
    typer.echo(e.manual + "\n")
    done = False
    while not done:
        typer.echo(f"\n[step {e.steps}] goal: {obs.goal}\n{render(obs)}")
        if policy is not None:
            action = policy.act(obs, info)
            typer.echo(f"> {action}")
        else:
            actions = obs.admissible or ()
            for i, a in enumerate(actions, 1):
                typer.echo(f"  {i}. {a}")
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
    typer.echo(obs.text)
    typer.echo(f"score={e.score():.4g} success={str(e.success()).lower()} steps={e.steps}")


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="experiment YAML")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override key=value (YAML)")
    ] = None,
    model: Annotated[str | None, typer.Option(help="model spec replacing the config's")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
) -> None:
    """Run (or resume) an experiment; finished episodes are never run twice."""
    from statelab.run.config import load_experiment
    from statelab.run.runner import run_sync

    try:
        exp = load_experiment(config, set_ or [], model)
        res = run_sync(exp, progress=None if quiet else sys.stderr)
    except (ConfigError, ModelError) as err:
        raise _fail(str(err)) from None
    typer.echo(
        f"{exp.name}: {res.done} episodes done, {res.failed} failed, {res.skipped} already done"
        f" | model calls {res.model_calls}, cached {res.cached_calls} | tokens in "
        f"{res.tokens_in:,} out {res.tokens_out:,} | {res.seconds:.1f} s"
    )
    typer.echo(f"store: {exp.out_dir / 'store.sqlite'}  ->  statelab report {exp.out_dir}")
    for f in res.failures[:10]:
        typer.echo(f"failed: {f}", err=True)


def _store_path(exp: str) -> Path:
    p = Path(exp)
    if p.suffix in (".yaml", ".yml") and p.is_file():
        from statelab.run.config import load_experiment

        return load_experiment(p).out_dir / "store.sqlite"
    for cand in (p / "store.sqlite", Path("results") / exp / "store.sqlite", p):
        if cand.is_file():
            return cand
    raise ConfigError(
        f"no results for {exp!r} (looked for {p}/store.sqlite and results/{exp}/store.sqlite)"
    )


@app.command()
def report(
    exp: Annotated[str, typer.Argument(help="experiment name, results folder or config file")],
    out: Annotated[Path | None, typer.Option(help="folder for report files")] = None,
    json_: Annotated[bool, typer.Option("--json", help="print JSON instead of Markdown")] = False,
) -> None:
    """Tables (mean, SD, n, significance vs the baseline) and plots of an experiment."""
    from statelab.analysis.reporting import make_report

    try:
        store = _store_path(exp)
        rep = make_report(store, out or store.parent / "report")
    except ConfigError as err:
        raise _fail(str(err)) from None
    if json_:
        typer.echo(json.dumps(rep.data, indent=2))
    else:
        typer.echo(rep.markdown)
        typer.echo(f"\nfiles: {', '.join(str(p) for p in rep.files.values())}", err=True)


@app.command()
def view(
    exp: Annotated[str, typer.Argument(help="experiment name, results folder or config file")],
    out: Annotated[Path | None, typer.Option(help="HTML file to write")] = None,
    run: Annotated[str | None, typer.Option(help="only runs whose label contains this")] = None,
    seed: Annotated[list[int] | None, typer.Option(help="only these seeds")] = None,
    limit: Annotated[int, typer.Option(help="at most this many episodes")] = 50,
) -> None:
    """Write an HTML page of trajectories (prompts, replies, actions, maps, summaries)."""
    from statelab.viewer import write_viewer

    try:
        store = _store_path(exp)
    except ConfigError as err:
        raise _fail(str(err)) from None
    path = write_viewer(
        store, out or store.parent / "trajectories.html", run=run, seeds=seed, limit=limit
    )
    typer.echo(str(path))


def main() -> None:  # pragma: no cover
    app()
