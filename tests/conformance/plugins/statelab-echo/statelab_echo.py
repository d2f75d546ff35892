"""``echo``: a one-room text env whose observations are plain text (:class:`TextFacts`), as a
statelab plugin: an installed package whose ``statelab.plugins`` entry point names this module,
which registers the env when the registries load it.

The key lies under the mat; ``take key`` then ``open door`` wins. The privileged view says
where the key is and holds the plan, which the expert follows through ``step``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from statelab.core import Env, Observation
from statelab.envs import register_env
from statelab.facts import TextFacts

NAME = "echo"
GYM_ID = "statelab-test/Echo-v0"
ACTIONS = ("look", "take key", "open door", "kick door")


class EchoExpert:
    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        plan = info["privileged"]["plan"]
        return str(plan[0]) if plan else "look"


class EchoEnv(Env):
    name = NAME
    max_steps = 6
    history_len = 4
    facts_type: ClassVar[type] = TextFacts
    default_format = "natural"
    manual = "You are in a small room with a locked door. Find the key and open the door."

    def _observe(self, feedback: str) -> Observation:
        held = ("key",) if self.has_key else ()
        text = "A small room. A mat lies by the door." + (" You hold a key." if held else "")
        full = f"{feedback} {text}".strip()
        facts = TextFacts(full, location="room", inventory=held)
        return Observation(full, facts, ACTIONS, "open the door", feedback=feedback)

    def _privileged(self, valid: bool = True) -> dict[str, Any]:
        plan = [] if self.open else (["open door"] if self.has_key else ["take key", "open door"])
        truth = TextFacts("The key is " + ("held." if self.has_key else "under the mat."))
        return {
            "valid": valid,
            "privileged": {"key": "under the mat", "plan": plan, "facts": truth},
        }

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        self.has_key = self.open = False
        return self._observe(""), self._privileged()

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        a = " ".join(action.lower().split())
        if a not in ACTIONS:
            return self._observe("Nothing happens."), 0.0, False, self._privileged(valid=False)
        if a == "take key" and not self.has_key:
            self.has_key, feedback = True, "You lift the mat and take the key."
        elif a == "open door" and self.has_key:
            self.open, feedback = True, "The door opens."
        else:
            feedback = "Nothing changes."
        return self._observe(feedback), float(self.open), self.open, self._privileged()

    def success(self) -> bool:
        return self.open

    def expert(self) -> EchoExpert:
        return EchoExpert()


register_env(NAME, EchoEnv, GYM_ID, help="echo (test plugin)")

