"""Every bad input a hostile tester found (issue 10) ends in exit 2 and one line on stderr
naming the problem: never a traceback, never a silent wrong result."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from statelab.cli import app

runner = CliRunner()  # click >= 8.2 keeps stderr apart (result.stderr)


def _files(tmp: Path) -> dict[str, Path]:
    script = tmp / "replies.json"
    script.write_text(json.dumps(["Action: Move the top disk of rod A to the top of rod C"]))
    a_file = tmp / "a_file"
    a_file.write_text("not a folder\n")
    not_store = tmp / "notes.txt"
    not_store.write_text("hello, I am not a store\n")
    (tmp / "empty.sqlite").write_bytes(b"")
    other = sqlite3.connect(tmp / "other.sqlite")
    other.execute("CREATE TABLE IF NOT EXISTS t (x)")
    other.commit()
    other.close()
    return {"script": script, "a_file": a_file, "not_store": not_store}


def _config(tmp: Path, **over: Any) -> Path:
    f = _files(tmp)
    data: dict[str, Any] = {
        "name": "e",
        "model": f"scripted:{f['script']}",
        "seeds": [0],
        "max_steps": 4,
        "out": str(tmp / "out"),
        "cache": None,
        "grid": {"env": ["hanoi"]},
    }
    data.update(over)
    path = tmp / "e.yaml"
    path.write_text(yaml.safe_dump(data).replace("TMP", str(tmp)))
    return path


def _run(**over: Any) -> Callable[[Path], list[str]]:
    return lambda tmp: ["run", str(_config(tmp, **over)), "--quiet"]


def _raw(text: str | bytes, *extra: str) -> Callable[[Path], list[str]]:
    def args(tmp: Path) -> list[str]:
        _files(tmp)
        p = tmp / "raw.yaml"
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text.replace("TMP", str(tmp)))
        return ["run", str(p), *(a.replace("TMP", str(tmp)) for a in extra)]

    return args


def _cmd(*argv: str) -> Callable[[Path], list[str]]:
    def args(tmp: Path) -> list[str]:
        _files(tmp)
        return [a.replace("TMP", str(tmp)) for a in argv]

    return args


def _with_store(*argv: str) -> Callable[[Path], list[str]]:
    """``argv`` against a real store of one finished run (``STORE``)."""

    def args(tmp: Path) -> list[str]:
        res = runner.invoke(app, _run()(tmp))
        assert res.exit_code == 0, res.output
        store = tmp / "out" / "e"
        return [a.replace("STORE", str(store)).replace("TMP", str(tmp)) for a in argv]

    return args


_MIN = "name: e\ngrid: {env: [hanoi]}\n"

#: (id, argv builder, a fragment the one stderr line must hold)
CASES: list[tuple[str, Callable[[Path], list[str]], str]] = [
    # -- run: values refused at load (item 8)
    ("seed -1", _run(seeds=[-1]), "seeds"),
    ("seed 2**70", _run(seeds=[2**70]), "seeds"),
    ("hanoi:0", _run(grid={"env": ["hanoi:0"]}), "hanoi:0"),
    ("hanoi:abc", _run(grid={"env": ["hanoi:abc"]}), "hanoi:abc"),
    ("hanoi:64", _run(grid={"env": ["hanoi:64"]}), "hanoi:64"),
    ("full:3", _run(grid={"env": ["hanoi"], "history": ["full:3"]}), "full"),
    ("unknown env", _run(grid={"env": ["nosuch"]}), "nosuch"),
    ("unknown model", _run(model="nosuch:x"), "nosuch"),
    # -- run: tracebacks at load (item 9)
    ("--set unclosed list", _raw(_MIN, "--set", "seeds=[0,1"), "--set"),
    ("--set undefined alias", _raw(_MIN, "--set", "seeds=*x"), "--set"),
    ("--set without =", _raw(_MIN, "--set", "seeds"), "--set"),
    ("--set into a list", _raw(_MIN, "--set", "grid.env.x=1"), "--set"),
    ("python tag", _raw("name: !!python/object/apply:os.system [echo hi]\n"), "YAML"),
    ("binary file", _raw(b"\x89PNG\r\n\x1a\n\x00\xff\xfe\x00"), "text"),
    ("not a mapping", _raw("- a\n- b\n"), "mapping"),
    ("no such file", _cmd("run", "TMP/nope.yaml"), "no such"),
    ("grid list + --model", _raw("name: e\ngrid: [hanoi]\n", "--model", "scripted:x"), "grid"),
    ("out under a file", _run(out="TMP/a_file/sub"), "out"),
    ("cache under a file", _run(cache="TMP/a_file/c.sqlite"), "cache"),
    # -- run: names stay inside out/ (item 10)
    ("name ..", _run(name=".."), "name"),
    ("name a/b", _run(name="a/b"), "name"),
    # -- run: budgets (item 3) and messages (item 15)
    ("max_steps 100000", _run(max_steps=100000), "max_steps"),
    ("max_steps 0", _run(max_steps=0), "max_steps"),
    ("grid envs", _run(grid={"envs": ["hanoi"]}), "unknown axis 'envs'"),
    ("rollouts 0", _run(rollouts=0), "rollouts: between 1 and 1000"),
    # -- play (item 12)
    ("play --seed -1", _cmd("play", "hanoi", "--seed", "-1", "--expert"), "seed"),
    ("play messenger --seed -3", _cmd("play", "messenger", "--seed", "-3", "--expert"), "seed"),
    ("play seed 2**70", _cmd("play", "hanoi", "--seed", str(2**70), "--expert"), "seed"),
    ("play hanoi:0", _cmd("play", "hanoi:0", "--expert"), "hanoi:0"),
    ("play nosuch", _cmd("play", "nosuch", "--expert"), "nosuch"),
    ("play --max-steps 0", _cmd("play", "hanoi", "--max-steps", "0", "--expert"), "max-steps"),
    ("play --max-steps -5", _cmd("play", "hanoi", "--max-steps", "-5", "--expert"), "max-steps"),
    # -- typer's own usage errors
    ("usage: --seed abc", _cmd("play", "hanoi", "--seed", "abc"), "--seed"),
    ("usage: run without config", _cmd("run"), "config"),
    ("usage: no such command", _cmd("nosuch"), "nosuch"),
    # -- report / view (item 12)
    ("report not a store", _cmd("report", "TMP/notes.txt"), "not a statelab store"),
    ("view not a store", _cmd("view", "TMP/notes.txt"), "not a statelab store"),
    ("report empty file", _cmd("report", "TMP/empty.sqlite"), "not a statelab store"),
    ("view other sqlite db", _cmd("view", "TMP/other.sqlite"), "not a statelab store"),
    ("report nothing there", _cmd("report", "TMP/nothing"), "no results"),
    ("report --out under a file", _with_store("report", "STORE", "--out", "TMP/a_file/r"), "out"),
    ("view --out under a file", _with_store("view", "STORE", "--out", "TMP/a_file/v.html"), "out"),
    ("view --limit -1", _with_store("view", "STORE", "--limit", "-1"), "limit"),
    ("view --limit 0", _with_store("view", "STORE", "--limit", "0"), "limit"),
]


def _check(res: Any, fragment: str) -> None:
    assert "Traceback" not in res.output and "Traceback" not in res.stderr, res.stderr
    assert isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ") and fragment in lines[0], lines[0]


@pytest.mark.parametrize("build, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2(tmp_path, build, fragment):
    res = runner.invoke(app, build(tmp_path))
    _check(res, fragment)


def test_rollouts_message_does_not_repeat_the_key(tmp_path):
    res = runner.invoke(app, _run(rollouts=0)(tmp_path))
    assert "rollouts: rollouts" not in res.stderr


def test_report_leaves_a_file_that_is_not_a_store_untouched(tmp_path):
    _files(tmp_path)
    before = (tmp_path / "empty.sqlite").read_bytes(), (tmp_path / "other.sqlite").read_bytes()
    runner.invoke(app, ["report", str(tmp_path / "empty.sqlite")])
    runner.invoke(app, ["view", str(tmp_path / "other.sqlite")])
    after = (tmp_path / "empty.sqlite").read_bytes(), (tmp_path / "other.sqlite").read_bytes()
    assert before == after


def test_name_dotdot_never_writes_outside_out(tmp_path):
    runner.invoke(app, _run(name="..")(tmp_path))
    assert not (tmp_path / "store.sqlite").exists()


def test_play_household_without_its_extra(tmp_path, monkeypatch):
    for mod in ("textworld", "alfworld", "alfworld.agents.environment.alfred_tw_env"):
        monkeypatch.setitem(sys.modules, mod, None)  # import raises ImportError
    res = runner.invoke(app, ["play", "household", "--expert", "--seed", "0"])
    _check(res, "household")


def test_debug_env_var_shows_the_traceback(tmp_path):
    args = _raw(b"\x89PNG\r\n\x1a\n\x00\xff\xfe\x00")(tmp_path)
    res = runner.invoke(app, args, env={"STATELAB_DEBUG": "1"})
    assert res.exit_code != 0
    assert res.exception is not None and not isinstance(res.exception, SystemExit)


def test_name_linked_outside_out_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "e").symlink_to(elsewhere)
    res = runner.invoke(app, _run()(tmp_path))
    _check(res, "would write outside out")
    assert not list(elsewhere.iterdir())


def test_internal_error_is_one_line_exit_1(tmp_path, monkeypatch):
    from statelab.run import runner as run_mod

    def boom(*a: Any, **k: Any) -> None:
        raise RuntimeError("something\nwe did not foresee")

    monkeypatch.setattr(run_mod, "run_sync", boom)
    res = runner.invoke(app, _run()(tmp_path))
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit)
    assert res.stderr.splitlines() == [
        "error: internal error: RuntimeError: something we did not foresee"
        " (STATELAB_DEBUG=1 shows the traceback)"
    ]
