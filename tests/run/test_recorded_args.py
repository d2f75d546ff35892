"""A run stores each component's parsed arguments with its description; reports read them
(and the ``expert`` tag), and a store written before arguments were recorded still reports,
its spellings parsed by their registries."""

from __future__ import annotations

import json
from pathlib import Path

from statelab.analysis._components import arguments, description, is_expert
from statelab.analysis.audit.measures import budget_of, form_of
from statelab.run.components import describe_run
from statelab.run.spec import RunSpec
from statelab.run.store import Store


def _spec(**axes: str) -> RunSpec:
    return RunSpec.make(model="scripted:r.json", **axes)


def test_a_run_records_every_component_s_parsed_arguments() -> None:
    d = describe_run(_spec(env="cooking:lag=10", history="bounded:summary:64", agent="react"))
    assert d["env"] == {  # the run holds the canonical spelling (positional first)
        "spelling": "cooking:10", "label": "cooking:10", "tags": [],
        "args": {"lag": 10, "filler": "post"}
    }  # fmt: skip
    assert d["history"]["args"] == {"form": "summary", "adapter": None, "budget": 64}
    assert d["agent"]["args"]["form"] == "text" and d["agent"]["args"]["anchor"] is False
    assert d["worldmodel"]["args"] == {"derail": False}
    cooking = describe_run(_spec(env="cooking"))["env"]["args"]
    assert cooking == {"lag": 0, "filler": "post"}  # the defaults
    expert = describe_run(RunSpec.make(env="hanoi:4", model="-", agent="expert"))
    assert expert["env"]["args"] == {"disks": 4, "feedback": True}
    assert "expert" in expert["agent"]["tags"] and expert["agent"]["args"] == {}


def test_the_store_keeps_them_and_reports_read_them(tmp_path: Path) -> None:
    spec = _spec(env="cooking:lag=20", history="last-k:128")
    store = Store(tmp_path / "s.sqlite")
    store.save_run(spec.key, spec.label, spec.axes(), {}, describe_run(spec))
    (stored,) = store.db.execute("SELECT components FROM runs").fetchone()
    store.close()
    assert json.loads(stored)["env"]["args"] == {"lag": 20, "filler": "post"}
    assert arguments("env", "cooking:lag=20", stored)["lag"] == 20
    assert budget_of("last-k:128", stored) == 128
    # what was recorded wins over the spelling (the spelling is never parsed again)
    planted = json.dumps({"env": {"spelling": "cooking:lag=20", "tags": [], "args": {"lag": 7}}})
    assert arguments("env", "cooking:lag=20", planted)["lag"] == 7


def test_an_older_store_without_arguments_falls_back_to_the_registries() -> None:
    old = json.dumps({"history": {"spelling": "oracle-readtime:64:2", "label": "x", "tags": []}})
    assert arguments("history", "oracle-readtime:64:2", old) == {"budget": 64, "samples": 2}
    assert description("history", "oracle-readtime:64:2", old)["label"] == "x"  # stored kept
    assert arguments("env", "cooking:lag=40")["lag"] == 40
    assert "lag" not in arguments("env", "hanoi")
    assert arguments("env", "cooking:10")["lag"] == 10 and budget_of("full") is None
    assert form_of("bounded:dssr=results/w/round1:64") == "bounded:dssr=results/w/round1"
    assert form_of("oracle-readtime:64:2") == "oracle-readtime" == form_of("oracle-readtime:64")
    assert is_expert("expert") and not is_expert("react") and not is_expert("-")
