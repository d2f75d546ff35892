"""The tool library's geometry (seed 001): geodesics of the moving-car grid, their k-medoids
quantization into five-step tools, and the collision check. Pictures: :mod:`.plots`."""

from statelab.tools.geodesics import (
    PRIMITIVES,
    Geodesic,
    TrafficState,
    safe_tools,
    sample_geodesics,
    shortest_path,
    windows,
)
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
