import json

from typer.testing import CliRunner

from statelab.cli import app

runner = CliRunner()


def test_envs_lists_config_names_with_options_and_gym_ids():
    res = runner.invoke(app, ["envs"])
    assert res.exit_code == 0
    rows = [line.split() for line in res.output.splitlines()]
    assert ["babyai/goto[:dists=N][+levels=statelab|balrog]", "statelab/BabyAI-GoTo-v0"] in rows
    assert any(r[0].startswith("hanoi[") and r[1] == "statelab/Hanoi-v0" for r in rows)


def test_list_reads_the_table_of_axes():
    from statelab.run.axes import AXES

    res = runner.invoke(app, ["list", "history"])
    assert res.exit_code == 0
    assert res.output.split() == [
        "full",
        "none",
        "window:<k>",
        "summary",
        "oracle-summary",
        "last-k:<B>",
        "bounded:summary|guide|belief|slots|nohint|dssr=<dir>:<B>",
        "oracle-bounded:<B>",
        "oracle-readtime:<B>[:<samples>]",
    ]
    every = runner.invoke(app, ["list"])
    heads = [line.split(":")[0] for line in every.output.splitlines() if not line.startswith(" ")]
    assert heads == [a.name for a in AXES]
    assert "worldmodel" in heads and "writer" in heads
    bad = runner.invoke(app, ["list", "colour"])
    assert bad.exit_code == 2 and "'colour' is not an axis" in bad.output


def test_list_long_prints_each_component_s_parameters_with_their_help():
    res = runner.invoke(app, ["list", "history", "--long"])
    assert res.exit_code == 0
    lines = res.output.splitlines()
    at = lines.index("oracle-readtime:<B>[:<samples>]")
    assert lines[at + 1 : at + 3] == [
        "  budget: int 8..4096  the token budget B",
        "  samples: int 1..64 = 8  candidate states sampled per step",
    ]
    assert lines[lines.index("full") + 1] == "none"  # a component without parameters: none
    every = runner.invoke(app, ["list", "--long"]).output.splitlines()
    assert "      disks: int 1..10 = 3  disks=N" in every  # hanoi's option, under env


def test_play_expert_solves_hanoi_in_7_moves():
    res = runner.invoke(app, ["play", "hanoi", "--expert", "--seed", "0"])
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[-1] == "score=1 success=true steps=7"
    assert sum(line.startswith("> Move the top disk") for line in lines) == 7


def test_play_human_by_number_and_text():
    moves = "2\nMove the top disk of rod A to the top of rod B\n6\n"
    res = runner.invoke(app, ["play", "hanoi", "--format", "dict-list"], input=moves)
    assert res.exit_code == 0, res.output
    assert '{"A":[2], "B":[1, 0]' not in res.output  # dict-list has no spaces in lists
    assert '{"A":[2], "B":[1,0], "C":[]}' in res.output
    assert res.output.strip().splitlines()[-1] == "score=0 success=false steps=3"


def test_play_bad_format_is_one_line_error():
    res = runner.invoke(app, ["play", "hanoi", "--format", "symbolic"])
    assert res.exit_code == 2
    assert "format 'symbolic' does not apply to env 'hanoi'" in res.output


def test_run_and_report(tmp_path):
    script = tmp_path / "r.json"
    script.write_text(json.dumps(["Action: Move the top disk of rod A to the top of rod C"]))
    cfg = tmp_path / "e.yaml"
    cfg.write_text(
        f"name: e\nmodel: scripted:{script}\nseeds: [0, 1]\nmax_steps: 8\nout: {tmp_path}\n"
        f"cache: {tmp_path}/c.sqlite\ngrid: {{env: [hanoi], history: [full, oracle-summary]}}\n"
        "baseline: {history: full}\n"
    )
    res = runner.invoke(app, ["run", str(cfg), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "e: 8 episodes done, 0 failed" in res.output  # 4 model, 2 random floor, 2 expert
    rep = runner.invoke(app, ["report", str(tmp_path / "e"), "--json"])
    assert rep.exit_code == 0, rep.output
    data = json.loads(rep.stdout)
    runs = {(r["agent"], r["history"]): r for r in data["runs"]}
    assert runs[("act", "full")]["n"] == 2
    assert runs[("expert", "-")]["mean"] == 1.0
    assert runs[("random", "-")]["role"] == "floor"
    assert data["test"]["adjust"] == "holm"
    bad = runner.invoke(app, ["report", str(tmp_path / "e"), "--adjust", "bonferroni"])
    assert bad.exit_code == 2 and "allowed: holm, bh, none" in bad.output
    again = runner.invoke(app, ["run", str(cfg), "--quiet"])
    assert "0 episodes done, 0 failed, 8 already done" in again.output


def test_run_config_error_exit_2(tmp_path):
    cfg = tmp_path / "e.yaml"
    cfg.write_text("name: e\ngrid: {env: [hanoi]}\nseeds: [0]\nbogus: 1\n")
    res = runner.invoke(app, ["run", str(cfg)])
    assert res.exit_code == 2 and "unknown key 'bogus'" in res.output
