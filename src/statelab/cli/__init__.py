"""The ``statelab`` command: envs, play, run, report."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from statelab.cli import _audit, _seed003
from statelab.cli._common import DEBUG_ENV, _debug, _fail, _line
from statelab.core import ConfigError, ModelError, prelude_of


def _say(text: str, err: bool = False) -> None:
    """Echo text that came from a label, a spelling, a model or an env: newlines and tabs
    kept, escape sequences and control characters dropped."""
    from statelab.llm import terminal_safe

    typer.echo(terminal_safe(text), err=err)


def _reason(e: BaseException) -> tuple[str, int]:
    """The one line and exit status of an error that reached the command line."""
    if isinstance(e, ConfigError | ModelError):
        return str(e), 2
    if isinstance(e, sqlite3.Error):
        return f"the store: {type(e).__name__}: {e}", 1
    if isinstance(e, RecursionError):
        return "the input is nested too deeply to read (RecursionError)", 2
    if isinstance(e, OSError):
        where = f" {e.filename}" if e.filename else ""
        return f"{type(e).__name__}{where}: {e.strerror or e}", 1
    return f"internal error: {type(e).__name__}: {e} ({DEBUG_ENV}=1 shows the traceback)", 1


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: what is left to flush at exit goes nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's capture)
        pass


def _usage_error(e: Exception) -> bool:
    """A bad option or argument (typer's UsageError), but not a bare command asking for help."""
    return (
        getattr(e, "exit_code", None) == 2
        and hasattr(e, "format_message")
        and type(e).__name__ != "NoArgsIsHelpError"
    )


class _OneLine(TyperGroup):
    """Every error a command lets through is one line on stderr, never a traceback
    (``STATELAB_DEBUG=1`` lets it through whole)."""

    def invoke(self, ctx: Any) -> Any:  # typer's own click Context
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except BrokenPipeError:  # the reader stopped reading (`statelab envs | head -1`)
            _quiet_stdout()
            raise typer.Exit(0) from None
        except typer.TyperException as e:  # typer's usage errors: one line too
            if not _usage_error(e):
                raise
            where = getattr(getattr(e, "ctx", None), "command_path", "statelab")
            typer.echo(f"error: {_line(e.format_message())} (see {where} --help)", err=True)
            raise typer.Exit(2) from None
        except Exception as e:
            if _debug():
                raise
            msg, code = _reason(e)
            typer.echo(f"error: {_line(msg)}", err=True)
            raise typer.Exit(code) from None


app = typer.Typer(
    cls=_OneLine,
    add_completion=False,
    no_args_is_help=True,
    help="Run LLM agents in dynamic environments and compare state representations. "
    "`statelab list` shows every axis a config crosses and what each takes.",
)


@app.command()
def envs(
    capabilities: Annotated[
        bool, typer.Option("--capabilities", help="what each env offers and what it lacks")
    ] = False,
) -> None:
    """List the environments: the name a config takes, with its options, and its Gymnasium
    id; an env that cannot run here says what it needs and the command installing it."""
    from statelab.core import CAPABILITIES
    from statelab.envs import ENVS, GYM_IDS, env_class, missing_needs
    from statelab.envs.checker import capability_report

    if capabilities:
        typer.echo("capabilities (+ offered; - missing: what runs on the env lack then):")
        for c in CAPABILITIES:
            typer.echo(f"  {c.name:<14}  {c.help}; else {c.lacking}")
        width = max(len(n) for n in ENVS.names())
        for name in ENVS.names():
            rep = capability_report(env_class(name), name)
            offers, lacks = " ".join(rep.offers) or "(none)", " ".join(rep.lacks)
            typer.echo(f"{name:<{width}}  + {offers}  - {lacks}")
        return
    rows = [(n, spelling, GYM_IDS.get(n, "-")) for n, spelling in ENVS.describe()]
    width = max(len(r[1]) for r in rows)
    gid_width = max(len(r[2]) for r in rows)
    missing = {n: why for n, _, _ in rows if (why := missing_needs(n))}
    for name, spelling, gid in rows:
        note = f"  ({missing[name]})" if name in missing else ""
        typer.echo(f"{spelling:<{width}}  {gid:<{gid_width}}{note}".rstrip())
    typer.echo(f"{len(rows) - len(missing)} of {len(rows)} envs installed here", err=True)


@app.command("list")
def list_axis(
    axis: Annotated[
        str | None, typer.Argument(help="an axis (env, model, agent, history, ...); none: all")
    ] = None,
    long: Annotated[
        bool, typer.Option("--long", help="each component's parameters, with their help")
    ] = False,
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
        for name, spelling in a.listing():
            typer.echo(f"  {spelling}" if not axis else spelling)
            for line in a.registry.parameters(name) if long else ():
                typer.echo(f"{'  ' if axis else '      '}{line}")


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
    from statelab.run.config import MAX_SEED, MAX_STEPS_FACTOR, resolve_format
    from statelab.state import observation_renderer
    from statelab.state.formats import check

    if not 0 <= seed <= MAX_SEED:
        raise _fail(f"--seed: seeds are between 0 and 2**63-1, got {seed}")
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
        raise _fail(str(err)) from None
    except (ImportError, ValueError, RuntimeError) as err:  # an env's own one line
        raise _fail(f"{env}: {err}") from None
    policy = e.expert() if expert else None
    _say(e.manual + "\n")
    for i, (act, o) in enumerate(prelude_of(info)):  # an env's scripted steps
        _say(f"\n[scripted {i + 1}] > {act}\n{render(o)}")
    done = False
    while not done:
        _say(f"\n[step {e.steps}] goal: {obs.goal}\n{render(obs)}")
        if policy is not None:
            action = policy.act(obs, info)
            _say(f"> {action}")
        else:
            actions = obs.admissible or ()
            for i, a in enumerate(actions, 1):
                _say(f"  {i}. {a}")
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
    _say(obs.text)
    typer.echo(f"score={e.score():.4g} success={str(e.success()).lower()} steps={e.steps}")


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="experiment YAML")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override key=value (YAML)")
    ] = None,
    model: Annotated[str | None, typer.Option(help="model spec replacing the config's")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="check everything a run would build; call no model"),
    ] = False,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="play the episodes on Ray: auto (RAY_ADDRESS, this machine's cluster, or a "
            "new local one) or a cluster ADDRESS; this process alone writes the store "
            "(needs statelab[ray]; docs/run-on-ray.md)",
        ),
    ] = None,
) -> None:
    """Run (or resume) an experiment; finished episodes are never run twice.

    Exits 1 when an episode failed or the run stopped early (the reasons, grouped, go to
    stderr), 2 on a config error.
    """
    from statelab.run.config import load_experiment
    from statelab.run.runner import run_sync

    try:
        exp = load_experiment(config, set_ or [], model)
        if dry_run:
            _dry_run(exp)
            return
        if ray is not None:
            from statelab.run.on_ray import run_on_ray_sync

            res = run_on_ray_sync(exp, ray, progress=None if quiet else sys.stderr, debug=_debug())
        else:
            res = run_sync(exp, progress=None if quiet else sys.stderr, debug=_debug())
    except (ConfigError, ModelError) as err:
        if _debug():
            raise
        raise _fail(str(err)) from None
    typer.echo(
        f"{exp.name}: {res.done} episodes done, {res.failed} failed, {res.skipped} already done"
        + (f", {res.not_started} not started" if res.not_started else "")
        + f" | model calls {res.model_calls}, cached {res.cached_calls} | tokens in "
        f"{res.tokens_in:,} out {res.tokens_out:,} | {res.seconds:.1f} s"
    )
    typer.echo(f"store: {exp.out_dir / 'store.sqlite'}  ->  statelab report {exp.out_dir}")
    for reason, n in res.reasons.most_common(10):
        typer.echo(_line(f"failed: {n} episode{'s' * (n > 1)}: {reason}"), err=True)
    if res.stopped:
        typer.echo(_line(f"{res.stopped}; {res.not_started} episodes not started"), err=True)
    if not res.ok:
        raise typer.Exit(1)


@app.command()
def tune(
    search: Annotated[Path, typer.Argument(help="search YAML (see statelab.tune.search)")],
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
) -> None:
    """Find the best representation with successive halving over paired seeds; episodes
    already in the store are reused, and a killed tune resumes. Writes tune.md, halving.png
    and winner.yaml into <out>/<name>/tune/."""
    from statelab.tune.report import write
    from statelab.tune.search import label, load_search
    from statelab.tune.tuner import tune as run_tune

    try:
        spec = load_search(search)
        result = run_tune(spec, progress=None if quiet else sys.stderr)
    except (ConfigError, ModelError) as err:
        if _debug():
            raise
        raise _fail(str(err)) from None
    paths = write(result, Path(spec.out) / spec.name / "tune")
    typer.echo(
        _line(
            f"{spec.name}: winner {label(result.halving.winner)} | indistinguishable: "
            + "; ".join(label(c) for c in result.halving.indistinguishable)
        )
    )
    typer.echo(
        f"episodes: plan {result.planned} of the full grid's {result.full_grid}; played"
        f" {result.played}, reused {result.reused} | {result.seconds:.1f} s"
    )
    typer.echo(f"report: {paths['report']}  plot: {paths['plot']}  winner: {paths['winner']}")


@app.command()
def train(
    what: Annotated[str, typer.Argument(help="reader (behaviour cloning) or writer (DSSR)")],
    config: Annotated[Path, typer.Argument(help="training YAML (configs/seed003/train_*.yaml)")],
) -> None:
    """Seed 003's training (the train extra): the reader by behaviour cloning on a*, or the
    writer by DSSR; writes LoRA adapters and summary.json into <out>/<name>/."""
    if what not in ("reader", "writer"):
        raise _fail(f"statelab train {what}: train 'reader' or 'writer'")
    from statelab.train.pipeline import ReaderConfig, load_config, train_reader, train_writer

    try:
        cfg = load_config(config, what)
        done = train_reader(cfg) if isinstance(cfg, ReaderConfig) else train_writer(cfg)
    except (ConfigError, ModelError) as err:
        if _debug():
            raise
        raise _fail(str(err)) from None
    typer.echo(json.dumps(done, indent=1))


app.command()(_seed003.retrain)


def _dry_run(exp: Any) -> None:
    from statelab.run.dryrun import dry_run

    plan = dry_run(exp)
    for line in plan.lines:
        _say(line)
    for spec in plan.not_loaded:
        _say(f"model {spec}: spelling checked, weights not loaded", err=True)
    typer.echo(
        f"dry run: {exp.name}: {plan.runs} runs, {plan.episodes} episodes, "
        f"store {exp.out_dir / 'store.sqlite'}; no model called"
    )


def _store_path(exp: str) -> Path:
    p = Path(exp)
    if p.suffix in (".yaml", ".yml") and p.is_file():
        from statelab.run.config import load_experiment

        return load_experiment(p).out_dir / "store.sqlite"
    for cand in (p / "store.sqlite", Path("results") / exp / "store.sqlite", p):
        if cand.is_file():
            from statelab.run.store import check_store

            check_store(cand)
            return cand
    raise ConfigError(
        f"no results for {exp!r} (looked for {p}/store.sqlite and results/{exp}/store.sqlite)"
    )


@app.command()
def report(
    exp: Annotated[str, typer.Argument(help="experiment name, results folder or config file")],
    out: Annotated[Path | None, typer.Option(help="folder for report files")] = None,
    json_: Annotated[bool, typer.Option("--json", help="print JSON instead of Markdown")] = False,
    adjust: Annotated[
        str, typer.Option(help="multiple-comparison adjustment: holm, bh or none")
    ] = "holm",
) -> None:
    """Tables (mean, SD, n, significance vs the baseline, behaviour), warnings and plots."""
    from statelab.analysis.reporting import make_report
    from statelab.analysis.stats import ADJUSTMENTS

    if adjust not in ADJUSTMENTS:
        raise _fail(f"--adjust: {adjust!r}; allowed: {', '.join(ADJUSTMENTS)}")
    try:
        store = _store_path(exp)
        rep = make_report(store, out or store.parent / "report", adjust=adjust)  # type: ignore[arg-type]
    except ConfigError as err:
        raise _fail(str(err)) from None
    except OSError as err:
        raise _fail(f"--out: cannot write {err.filename or out}: {err.strerror or err}") from None
    if json_:
        typer.echo(json.dumps(rep.data, indent=2))
    else:
        _say(rep.markdown)
        typer.echo(f"\nfiles: {', '.join(str(p) for p in rep.files.values())}", err=True)


@app.command()
def view(
    exp: Annotated[str, typer.Argument(help="experiment name, results folder or config file")],
    out: Annotated[
        Path | None,
        typer.Option(help="folder for the page (index.html and its data/), or the page's .html"),
    ] = None,
    run: Annotated[
        list[str] | None,
        typer.Option(
            help="only this run: its id, label, axis=value or one whole part of its label"
            " (summary is not oracle-summary); repeatable"
        ),
    ] = None,
    seed: Annotated[list[int] | None, typer.Option(help="only these seeds")] = None,
    limit: Annotated[int | None, typer.Option(help="at most this many episodes")] = None,
) -> None:
    """Write the experiment's page (no server needed): runs x seeds by score, each episode's
    steps, prompts and memories, two runs side by side, filters. Prints the page's path."""
    from statelab.viewer import write_viewer

    if limit is not None and limit < 1:
        raise _fail(f"--limit: at least 1 episode, got {limit}")
    try:
        store = _store_path(exp)
        res = write_viewer(
            store, out or store.parent / "view", runs=run or (), seeds=seed or (), limit=limit
        )
    except ConfigError as err:
        raise _fail(str(err)) from None
    except OSError as err:
        raise _fail(f"--out: cannot write {err.filename or out}: {err.strerror or err}") from None
    typer.echo(str(res.page))
    typer.echo(res.summary(), err=True)


@app.command()
def export(
    exp: Annotated[str, typer.Argument(help="experiment name, results folder or config file")],
    format: Annotated[
        str, typer.Option("--format", help="parquet, csv or jsonl (one trajectory a line)")
    ] = "parquet",
    out: Annotated[Path | None, typer.Option(help="folder for the files")] = None,
    table: Annotated[
        list[str] | None, typer.Option(help="tables to export (default: episodes, steps, calls)")
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(help="mlflow (a local file store) or wandb (offline runs) instead of files"),
    ] = None,
) -> None:
    """Write the episodes, steps and calls tables as Parquet or CSV files, the episodes as
    JSON Lines trajectories, or each run to MLflow or W&B (offline)."""
    from statelab.run.export import DEFAULT_TABLES, export_store

    try:
        store = _store_path(exp)
        if to is not None:
            from statelab.analysis.tracking import export_tracking

            files = export_tracking(store, to, out or store.parent / "export")
        else:
            if format == "jsonl" and table:
                raise ConfigError("--table: jsonl writes whole episodes (trajectories.jsonl)")
            files = export_store(
                store, out or store.parent / "export", format, tuple(table or DEFAULT_TABLES)
            )
    except ConfigError as err:
        raise _fail(str(err)) from None
    except OSError as err:
        raise _fail(f"--out: cannot write {err.filename or out}: {err.strerror or err}") from None
    for f in files:
        typer.echo(str(f))


# -- seed 003: the sealed test split, opened once; the decision-loss audit -----------------
app.command("open-test")(_seed003.open_test)


app.command()(_audit.audit)


app.command()(_seed003.amend)


app.command()(_seed003.gates)


app.command()(_seed003.tables)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
