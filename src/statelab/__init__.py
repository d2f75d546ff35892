"""statelab: LLM agents in dynamic, partially observable environments, and how the state
representation changes what they achieve.

The public API is re-exported here; implementation lives in the sub-packages (one per axis).
"""

from statelab.agents import AGENTS, make_agent
from statelab.core import (
    LLM,
    Agent,
    Completion,
    ConfigError,
    Decision,
    Env,
    GenParams,
    Memory,
    ModelError,
    Observation,
    Prompt,
    Usage,
)
from statelab.envs import ENVS, make_env
from statelab.llm import MODELS, make_llm
from statelab.run.config import Experiment, load_experiment
from statelab.run.episode import run_episode
from statelab.run.replay import replay
from statelab.run.runner import run_experiment
from statelab.run.spec import RunSpec
from statelab.state import FORMATS, HISTORIES

__version__ = "0.1.0"

__all__ = [
    "AGENTS",
    "ENVS",
    "FORMATS",
    "HISTORIES",
    "LLM",
    "MODELS",
    "Agent",
    "Completion",
    "ConfigError",
    "Decision",
    "Env",
    "Experiment",
    "GenParams",
    "Memory",
    "ModelError",
    "Observation",
    "Prompt",
    "RunSpec",
    "Usage",
    "__version__",
    "load_experiment",
    "make_agent",
    "make_env",
    "make_llm",
    "replay",
    "run_episode",
    "run_experiment",
]
