"""The tool library's geometry (seed 001): geodesics of the moving-car grid, their k-medoids
quantization into five-step tools, and the collision check. Pictures: :mod:`.plots`."""

from statelab.envs.traffic_world import PRIMITIVES, TrafficState, shortest_path
from statelab.tools.geodesics import Geodesic, safe_tools, sample_geodesics, windows
from statelab.tools.quantize import PRIMITIVE_TOOLS, Quantization, quantize, tool_library

__all__ = [
    "PRIMITIVES",
    "PRIMITIVE_TOOLS",
    "Geodesic",
    "Quantization",
    "TrafficState",
    "quantize",
    "safe_tools",
    "sample_geodesics",
    "shortest_path",
    "tool_library",
    "windows",
]
