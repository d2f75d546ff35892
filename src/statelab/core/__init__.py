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
from statelab.core._env import (
    CAPABILITIES,
    FORMAT_ERROR,
    MOVED,
    NO_OP,
    SERIAL,
    Capability,
    Env,
    Observation,
    ObservationSpace,
    Policy,
    a_star_of,
    fingerprint_of,
    prelude_of,
    serial_for,
    task_type_of,
    tracked_of,
)
from statelab.core._json import loads_json
from statelab.core._llm import (
    LLM,
    CompleteRequest,
    Completion,
    GenParams,
    Message,
    ModelError,
    ScoreRequest,
    Usage,
)
from statelab.core._params import (
    REQUIRED,
    Args,
    ArgumentError,
    Param,
    Params,
    choice,
    count,
    on_off,
)
from statelab.core._plugins import GROUP as PLUGIN_GROUP
from statelab.core._plugins import load_plugins, plugin_errors
from statelab.core._prompt import Prompt
from statelab.core._registry import DRY, BuildContext, ConfigError, Registry
from statelab.core._sentinels import ACTING, MODEL_AXES, MODEL_FREE
from statelab.core._state import Memory
from statelab.core._worldmodel import WorldModel

__all__ = [
    "ACTING",
    "CAPABILITIES",
    "DRY",
    "FORMAT_ERROR",
    "LLM",
    "MODEL_AXES",
    "MODEL_FREE",
    "MOVED",
    "NO_OP",
    "PLUGIN_GROUP",
    "REQUIRED",
    "SERIAL",
    "TAGS",
    "Agent",
    "Args",
    "ArgumentError",
    "BuildContext",
    "Call",
    "Capability",
    "CompleteRequest",
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
    "Param",
    "Params",
    "Policy",
    "PrivilegedView",
    "Prompt",
    "Registry",
    "ScoreRequest",
    "StepContext",
    "Transition",
    "Usage",
    "WorldHandle",
    "WorldModel",
    "a_star_of",
    "choice",
    "count",
    "describe",
    "fingerprint_of",
    "frozen_view",
    "load_plugins",
    "loads_json",
    "on_off",
    "plugin_errors",
    "prelude_of",
    "serial_for",
    "task_type_of",
    "tracked_of",
]
