"""statelab's contracts: Env, Observation, LLM, Agent, Memory and the axis registries."""

from statelab.core._agent import Agent, Call, Decision, Prompt
from statelab.core._env import Env, EnvSpec, Observation, ObservationSpace, Policy
from statelab.core._llm import LLM, Completion, GenParams, Message, ModelError, Usage
from statelab.core._registry import ConfigError, Registry
from statelab.core._state import Memory

__all__ = [
    "LLM",
    "Agent",
    "Call",
    "Completion",
    "ConfigError",
    "Decision",
    "Env",
    "EnvSpec",
    "GenParams",
    "Memory",
    "Message",
    "ModelError",
    "Observation",
    "ObservationSpace",
    "Policy",
    "Prompt",
    "Registry",
    "Usage",
]
