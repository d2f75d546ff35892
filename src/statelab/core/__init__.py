"""statelab's contracts: Env, Observation, LLM, Agent, Memory and the axis registries."""

from statelab.core._agent import Agent, Call, Decision
from statelab.core._component import TAGS, Component, describe
from statelab.core._context import (
    PrivilegedView,
    StepContext,
    Transition,
    WorldHandle,
    frozen_view,
)
from statelab.core._env import Env, Observation, ObservationSpace, Policy
from statelab.core._llm import LLM, Completion, GenParams, Message, ModelError, Usage
from statelab.core._prompt import Prompt
from statelab.core._registry import DRY, BuildContext, ConfigError, Registry
from statelab.core._state import Memory
from statelab.core._worldmodel import WorldModel

__all__ = [
    "DRY",
    "LLM",
    "TAGS",
    "Agent",
    "BuildContext",
    "Call",
    "Completion",
    "Component",
    "ConfigError",
    "Decision",
    "Env",
    "GenParams",
    "Memory",
    "Message",
    "ModelError",
    "Observation",
    "ObservationSpace",
    "Policy",
    "PrivilegedView",
    "Prompt",
    "Registry",
    "StepContext",
    "Transition",
    "Usage",
    "WorldHandle",
    "WorldModel",
    "describe",
    "frozen_view",
]
