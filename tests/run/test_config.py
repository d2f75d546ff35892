import pytest

from statelab.core import ConfigError
from statelab.run.config import load_experiment, parse_experiment

BASE = {
    "name": "q",
    "model": "scripted:x.json",
    "seeds": [0, 1],
    "grid": {"env": ["hanoi"], "history": ["full", "summary"], "format": ["tagged-list"]},
    "baseline": {"history": "full"},
}


def err(data) -> str:
    with pytest.raises(ConfigError) as e:
        parse_experiment(data)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def with_(path: str, value):
    import copy

    d = copy.deepcopy(BASE)
    cur = d
    *head, last = path.split(".")
    for k in head:
        cur = cur[k]
    cur[last] = value
    return d


def test_valid_config_expands_grid_plus_random_floor_and_expert():
    exp = parse_experiment(BASE)
    labels = [r.label for r in exp.runs()]
    assert labels == [
        "hanoi | scripted:x.json | act | full | tagged-list",
        "hanoi | scripted:x.json | act | summary | tagged-list",
        "hanoi | random",
        "hanoi | expert",
    ]
    assert [r.model for r in exp.runs()][2:] == ["-", "-"]  # model-free: no model calls
    assert len(parse_experiment({**BASE, "random": False}).runs()) == 3
    # an env without admissible lists gets no floor row (nothing to draw from)
    traffic = parse_experiment({**BASE, "grid": {"env": ["hanoi", "traffic"]}})
    assert [r.label for r in traffic.runs() if r.agent == "random"] == ["hanoi | random"]
    assert exp.params.temperature == 0.2 and exp.params.top_p == 0.95


def test_unknown_top_level_key_is_named():
    assert err({**BASE, "seed": [1]}) == (
        "config error: unknown key 'seed'; allowed here: name, model, seeds, rollouts, replay, "
        "grid, baseline, params, expert, random, max_steps, concurrency, "
        "max_consecutive_failures, timeout, retries, out, cache, report, limits, after_selection"
    )


def test_unknown_grid_key_is_named():
    assert err(with_("grid.histroy", ["full"])) == (
        "config error: grid: unknown axis 'histroy'; axes: env, model, agent, history, format, "
        "grounding, worldmodel, writer, compressor, scorer"
    )


def test_bad_values_name_key_and_allowed_values():
    assert err(with_("grid.history", ["full", "sumary"])) == (
        "config error: grid.history: unknown history 'sumary'; allowed: full, none, "
        "window:<k>, summary, oracle-summary, last-k:<B>, "
        "bounded:summary|guide|belief|slots|nohint|dssr=<dir>:<B>, oracle-bounded:<B>, "
        "oracle-readtime:<B>[:<samples>]"
    )
    msg = err(with_("grid.env", ["hanoy"]))
    assert msg.startswith("config error: grid.env: unknown env 'hanoy'; allowed: ")
    assert "hanoi[:<disks>]" in msg
    assert "unknown agent 'reactt'" in err(with_("grid.agent", ["reactt"]))
    assert "unknown model 'gpt4'" in err(with_("model", "gpt4"))
    assert "window:0" in err(with_("grid.history", ["window:0"]))
    assert err(with_("params", {"temperature": -1})).startswith("config error: params.temperature")


def test_format_env_mismatch():
    assert err(with_("grid.format", ["coordinates"])) == (
        "config error: grid.format: format 'coordinates' does not apply to env 'hanoi'; "
        "formats that do: natural, tagged-list, dict-list, matrix"
    )


def test_baseline_must_be_in_grid():
    assert err(with_("baseline", {"history": "window:3"})) == (
        "config error: baseline.history: 'window:3' is not in the grid; grid has: full, summary"
    )
    assert "baseline.colour: not an axis" in err(with_("baseline", {"colour": "red"}))


def test_overrides_and_model_flag(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text("name: q\nmodel: scripted:x\ngrid: {env: [hanoi]}\n")
    exp = load_experiment(
        p,
        ["seeds=[3,4]", "grid.history=[full, oracle-summary]", "params.temperature=0"],
        model="openai-compat:http://h:1/v1#m",
    )
    assert exp.seeds == [3, 4] and exp.grid.history == ["full", "oracle-summary"]
    assert exp.params.temperature == 0 and exp.model == "openai-compat:http://h:1/v1#m"
    with pytest.raises(ConfigError, match="expected key=value"):
        load_experiment(p, ["seeds"])
    with pytest.raises(ConfigError, match="no such experiment file"):
        load_experiment(tmp_path / "nope.yaml")


def test_seeds_from_an_env_split():
    exp = parse_experiment(
        {**BASE, "grid": {"env": ["textcraft"]}, "seeds": "test[:5]", "baseline": None}
    )
    assert exp.env_seeds("textcraft") == [0, 1, 2, 3, 4]
    assert (
        len(
            parse_experiment(
                {**BASE, "grid": {"env": ["textcraft"]}, "seeds": "test", "baseline": None}
            ).env_seeds("textcraft")
        )
        == 100
    )
    assert "env 'hanoi' has no split 'test'" in err({**BASE, "seeds": "test"})
    assert "a split name like 'test'" in err({**BASE, "seeds": "Test!"})


def test_timeout_and_retries_reach_the_model_backend(tmp_path, monkeypatch):
    """A config's timeout and retries are what the HTTP backend is built with (issue 10.4)."""
    import statelab.run.runner as runner_mod

    seen = {}

    def fake_make_llm(spec, cache=None, *, timeout=None, retries=None, concurrency=None):
        seen.update(spec=spec, timeout=timeout, retries=retries)
        raise RuntimeError("stop here")

    monkeypatch.setattr(runner_mod, "make_llm", fake_make_llm)
    exp = parse_experiment(
        {**BASE, "timeout": 2.5, "retries": 1, "out": str(tmp_path), "cache": None}
    )
    with pytest.raises(RuntimeError, match="stop here"):
        runner_mod.run_sync(exp, progress=None)
    assert seen == {"spec": "scripted:x.json", "timeout": 2.5, "retries": 1}
    assert "timeout" in err({**BASE, "timeout": 0})
