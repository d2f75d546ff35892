"""Queries on the action channel, in an episode: answered by the world model, never by the env;
stored with their answers; offered to constrained decoding; the derail rule."""

from __future__ import annotations

import asyncio

from statelab.core import FORMAT_ERROR, MOVED, NO_OP
from statelab.envs import make_env
from statelab.llm.scripted import ScriptedLLM
from statelab.run._derail import Derail
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec


def _play(replies, worldmodel="belief", agent="act", max_steps=3, env="babyai/goto"):
    spec = RunSpec.make(env=env, model="scripted:x", agent=agent, worldmodel=worldmodel,
                        max_steps=max_steps)  # fmt: skip
    return asyncio.run(run_episode(spec, 1, ScriptedLLM(replies, "wm")))


def test_a_babyai_agent_asks_where_is_and_the_answer_is_stored_without_an_env_step():
    ep = _play(["Action: query where is the yellow key", "Action: query map",
                "Action: turn left", "Action: turn right", "Action: go forward"])  # fmt: skip
    assert ep.steps == 3 and len(ep.trajectory) == 3  # queries took no env step
    first = ep.trajectory[0]
    assert first.action == "turn left"
    assert [q["query"] for q in first.queries] == ["query where is the yellow key", "query map"]
    assert "yellow key" in first.queries[0]["answer"]
    assert "not localized" in first.queries[1]["answer"] or "Legend" in first.queries[1]["answer"]
    assert "Observation: " in first.reply  # the answer was the next observation
    assert [s.action for s in ep.trajectory] == ["turn left", "turn right", "go forward"]


def test_the_world_model_offers_its_query_forms_and_its_instructions():
    ep = _play(["Action: turn left"], max_steps=1)
    prompt_text = str(ep.trajectory[0].calls[0]["messages"])
    assert "query where is the yellow key" in prompt_text
    assert "query map" in prompt_text


def test_ten_consecutive_queries_end_the_episode():
    ep = _play(["Action: query state"], max_steps=5)
    assert len(ep.trajectory) == 1
    assert ep.trajectory[0].meta["stopped"] == "10 consecutive world-model queries"
    assert len(ep.trajectory[0].queries) == 10


def test_ten_consecutive_format_errors_end_a_babyai_episode():
    """In BabyAI an action outside the six is a format error (the authors' env cannot read
    it), not a no-op; ten in a row end the episode."""
    ep = _play(["Action: fly"], worldmodel="memory", max_steps=30)
    assert len(ep.trajectory) == 10
    assert ep.trajectory[-1].meta["stopped"] == "10 consecutive format errors"
    assert ep.trajectory[-1].meta["ended"] == "format_error_limit"


def _steps_to_the_wall(env_name="babyai/goto", seed=1):
    """How many 'go forward' change the view from the start (then the agent is at a wall or
    an object), counted on the env's own texts."""
    env = make_env(env_name)
    obs, _ = env.reset(seed=seed)
    n = 0
    while True:
        before = obs.text
        obs, *_ = env.step("go forward")
        if obs.text == before:
            return n
        n += 1


def test_walking_into_a_wall_ten_times_ends_a_babyai_episode_as_a_noop_loop():
    """An action that leaves BabyAI's view unchanged is a no-op (the authors' rule): after
    the free cells ahead, every further 'go forward' is one; the tenth in a row ends it."""
    k = _steps_to_the_wall()
    ep = _play(["Action: go forward"], worldmodel="none:derail", max_steps=60)
    assert len(ep.trajectory) == k + 10
    assert all(s.valid for s in ep.trajectory)
    assert ep.trajectory[-1].meta["stopped"] == "10 consecutive no-ops"
    assert ep.trajectory[-1].meta["ended"] == "noop_loop"
    assert "stopped" not in ep.trajectory[-2].meta


def test_the_two_counters_reset_each_other():
    """Nine format errors, a no-op, nine format errors: no rule fires (each kind must come
    ten in a row); a tenth format error after nine does."""
    d = Derail(10)
    seen = [d.see(k) for k in [FORMAT_ERROR] * 9 + [NO_OP] + [FORMAT_ERROR] * 9]
    assert seen == [""] * 19
    assert d.see(FORMAT_ERROR) == "10 consecutive format errors"
    d = Derail(10)
    seen = [d.see(k) for k in [NO_OP] * 9 + [FORMAT_ERROR] + [NO_OP] * 9 + [MOVED] + [NO_OP] * 9]
    assert seen == [""] * 29 and d.see(NO_OP) == "10 consecutive no-ops"
    assert Derail(None).see(NO_OP) == "" and Derail(None).noops == 0


def test_an_invalid_action_is_a_noop_by_default_and_an_empty_reply_a_format_error():
    """On an env without its own reading (hanoi), an action the env calls invalid is a
    no-op; a reply with no action at all is a format error, on any env."""
    ep = _play(["Action: fly"], worldmodel="none:derail", max_steps=30, env="hanoi")
    assert len(ep.trajectory) == 10 and not ep.trajectory[0].valid
    assert ep.trajectory[-1].meta["ended"] == "noop_loop"
    ep = _play([""], worldmodel="none:derail", max_steps=30, env="hanoi")
    assert len(ep.trajectory) == 10
    assert ep.trajectory[-1].meta["ended"] == "format_error_limit"


def test_an_episode_records_how_it_ended():
    ep = _play(["Action: turn left"], worldmodel="none:derail", max_steps=3)
    assert [s.meta.get("ended") for s in ep.trajectory] == [None, None, "max_steps"]


def test_without_a_world_model_a_query_is_an_env_action():
    ep = _play(["Action: query map", "Action: turn left"], worldmodel="none", max_steps=2)
    assert ep.trajectory[0].action == "query map" and not ep.trajectory[0].valid
    assert ep.trajectory[0].queries == []


def test_walle_rejects_a_failing_action_and_the_agent_decides_again():
    ep = _play(["Action: drop", "Action: turn left"], worldmodel="walle", max_steps=1)
    step = ep.trajectory[0]
    assert step.action == "turn left"
    assert step.meta["rejected"][0]["action"] == "drop"
    assert "not carrying" in step.meta["rejected"][0]["feedback"]


def test_walle_rejects_five_times_then_lets_the_sixth_proposal_through():
    """WALL-E's retry budget is 5: five rejections at one decision, each shown to the agent
    as the world model's observation of its action (no env step), then the sixth proposal
    goes to the env unchecked."""
    ep = _play(["Action: drop"], worldmodel="walle", max_steps=1)
    (step,) = ep.trajectory
    assert ep.steps == 1 and step.action == "drop"  # one env step, the sixth proposal
    assert len(step.meta["rejected"]) == 5
    assert all(r["feedback"].startswith("[World model] ") for r in step.meta["rejected"])
    last_prompt = str(step.calls[-1]["messages"])
    assert last_prompt.count("You took action: drop\\nObservation: [World model] ") == 5
    assert step.reply.count("Observation: [World model] ") == 5


def test_none_derail_has_the_derail_rule_and_nothing_else():
    ep = _play(["Action: fly"], worldmodel="none:derail", max_steps=30)
    assert len(ep.trajectory) == 10
    assert ep.trajectory[-1].meta["stopped"] == "10 consecutive format errors"
    ep = _play(["Action: fly"], worldmodel="none", max_steps=12)
    assert len(ep.trajectory) == 12


def test_an_experiment_stores_the_queries_and_their_answers(tmp_path):
    """A scripted BabyAI run with worldmodel belief and react: the where-is query and its
    answer land in the store's queries table; the env steps only for env actions."""
    import json

    from statelab.run.config import Experiment
    from statelab.run.runner import run_experiment
    from statelab.run.store import Store

    script = tmp_path / "replies.json"
    script.write_text(json.dumps([
        ">thought: where is it?\naction: query where is the yellow key",
        ">thought: turn.\naction: turn left",
    ]))  # fmt: skip
    exp = Experiment.model_validate({
        "name": "wm", "model": f"scripted:{script}", "seeds": [1], "max_steps": 2,
        "grid": {"env": ["babyai/goto"], "agent": ["react"], "worldmodel": ["belief"]},
        "out": str(tmp_path), "cache": None, "expert": False, "random": False,
    })  # fmt: skip
    result = asyncio.run(run_experiment(exp, progress=None))
    assert (result.done, result.failed) == (1, 0)
    store = Store(tmp_path / "wm" / "store.sqlite")
    try:
        q = store.table("queries")
        steps = store.table("steps")
    finally:
        store.close()
    assert list(steps["action"]) == ["turn left", "turn left"]
    assert list(q["query"]) == ["query where is the yellow key"] and list(q["t"]) == [1]
    assert "yellow key" in q["answer"][0]
