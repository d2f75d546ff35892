"""The spatial-grounding axis (seed 000, section 3.2 and 4.3): what spatial signal joins phi.

- ``none``: text only.
- ``image``: a rendering of the current (partial) observation travels with the text as an
  OpenAI-style image part. Runs whose model cannot take images are refused at config time.
- ``vot`` (Visualization-of-Thought): before acting, the model draws "Map (Top-Down View)" as
  an ASCII grid with a legend; the map is parsed, stored with the step, and stays in context
  for the action. (Two calls: the map is free text, the action may then be constrained.)
- ``oracle-vot``: the env's programmatic ground-truth ASCII map is put in the prompt instead
  (seed 000, Table 8). Reads privileged info.
- ``zoom`` (seed 001): the agent-centred close-up of the observation, as ASCII text for every
  model plus its image when the model takes images (by backend, as the config's image check
  decides: not on ``llamacpp``; or when the backend has vision). ``zoom:text`` never sends it,
  ``zoom:image`` always does and so needs a vision model; ``zoom:<half>`` sets the close-up's
  half-size, default 3). Drawn from the observation's facts (:mod:`statelab.state.closeup`).
"""

from __future__ import annotations

import abc
import base64
import io
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from statelab.core import (
    LLM,
    Args,
    BuildContext,
    Call,
    Component,
    ConfigError,
    GenParams,
    Param,
    Prompt,
    Registry,
    StepContext,
)
from statelab.state.prompt import messages

MAP_HEADER = "Map (Top-Down View):"
GROUNDINGS: Registry[Grounding] = Registry("grounding")


@dataclass
class Grounded:
    """The prompt with its grounding applied, the calls that took, and what to store."""

    prompt: Prompt
    calls: list[Call] = field(default_factory=list)
    #: the grounding text to store with the step (the map drawn or given)
    record: str = ""
    #: a parsed map, for VoT
    parsed: VotMap | None = None


class Grounding(Component, abc.ABC):
    """The grounding axis: what joins the text prompt (an image, a drawn map, a close-up)."""

    name = "none"

    @property
    def needs_vision(self) -> bool:
        """The model must accept image parts (the ``needs-vision`` tag)."""
        return "needs-vision" in self.tags

    @abc.abstractmethod
    async def apply(self, ctx: StepContext, llm: LLM | None) -> Grounded:
        """Return ``ctx.prompt`` with the grounding signal added."""


class NoGrounding(Grounding):
    """No grounding: the prompt as composed."""

    async def apply(self, ctx: StepContext, llm: LLM | None) -> Grounded:
        return Grounded(ctx.prompt)


def png_data_url(image: Any) -> str:
    """An RGB uint8 array as a ``data:image/png;base64,...`` URL."""
    from PIL import Image

    arr = np.asarray(image, dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def image_part(image: Any) -> dict[str, Any]:
    """An image as an OpenAI-style message part (a PNG data URL)."""
    return {"type": "image_url", "image_url": {"url": png_data_url(image)}}


class ImageGrounding(Grounding):
    """The env's image of the observation joins the prompt (seed 000's image grounding)."""

    name = "image"
    tags = frozenset({"needs-vision"})

    async def apply(self, ctx: StepContext, llm: LLM | None) -> Grounded:
        image = ctx.observation.image
        if image is None:
            raise ConfigError("grounding 'image': this env gives no image of its observation")
        return Grounded(replace(ctx.prompt, images=(image_part(image),)), record="[image]")


@dataclass(frozen=True)
class VotMap:
    """A parsed 'Map (Top-Down View)': its rows (cells split), legend, and shape checks."""

    rows: tuple[tuple[str, ...], ...]
    legend: dict[str, str]
    rectangular: bool

    @property
    def ok(self) -> bool:
        return bool(self.rows)


_HEADER = re.compile(r"^\s*map\b[^\n]*:\s*$", re.IGNORECASE | re.MULTILINE)
_LEGEND = re.compile(r"^\s*legend\s*:?\s*(.*)$", re.IGNORECASE)
_ROW_LABEL = re.compile(r"^\s*row\s*\d+\s*:\s*", re.IGNORECASE)
_ITEM = re.compile(
    r"\$?([^\s=$,;]{1,3})\$?\s*=\s*(.+?)(?=\s*[,;]?\s*\$?[^\s=$,;]{1,3}\$?\s*=|\s*$)"
)


def parse_legend(text: str) -> dict[str, str]:
    """'A = agent, B = bird' or '$A$ = Agent $R$ = Robot (message)' -> {symbol: meaning}."""
    return {sym: meaning.strip(" ,;") for sym, meaning in _ITEM.findall(text.strip())}


def parse_map(text: str) -> VotMap | None:
    """Parse the model's map; None when there is no 'Map ...:' header line at all.

    Rows are the non-empty lines after the header up to a 'Legend' or 'Action' line ('Row3:'
    labels dropped; cells split on spaces when the row has any, else per character). A map
    with a header but no rows is malformed (``ok`` False); ``rectangular`` tells whether all
    rows have the same number of cells.
    """
    m = _HEADER.search(text)
    if m is None:
        return None
    rows: list[tuple[str, ...]] = []
    legend: dict[str, str] = {}
    lines = [ln.strip() for ln in text[m.end() :].splitlines()]
    for i, line in enumerate(lines):
        if not line:
            continue
        if line.lower().startswith("action"):
            break
        lm = _LEGEND.match(line)
        if lm:
            tail = [lm.group(1)]
            for rest in lines[i + 1 :]:
                if rest.lower().startswith("action"):
                    break
                tail.append(rest)
            legend = parse_legend(" ".join(tail))
            break
        row = _ROW_LABEL.sub("", line)
        rows.append(tuple(row.split()) if " " in row else tuple(row))
    return VotMap(tuple(rows), legend, len({len(r) for r in rows}) <= 1)


VOT_INSTRUCTION = (
    f'Before choosing, draw the current state as a map. Start with "{MAP_HEADER}", then the '
    'grid, one row per line, then one line "Legend: X = meaning, ...". Do not choose an '
    "action yet."
)


class VotGrounding(Grounding):
    """Visualization-of-thought: the model draws the map first, then decides (seed 000)."""

    name = "vot"
    tags = frozenset({"needs-model"})

    def __init__(self, params: GenParams) -> None:
        self.params = replace(
            params, max_tokens=max(params.max_tokens, 200), choices=None, stop=("Action:",)
        )

    async def apply(self, ctx: StepContext, llm: LLM | None) -> Grounded:
        prompt = ctx.prompt
        if llm is None:
            raise ConfigError("grounding 'vot' needs a model")
        msgs = messages(prompt, VOT_INSTRUCTION)
        completion = await llm.complete(msgs, replace(self.params, seed=prompt.seed + 1))
        drawn = completion.text.strip()
        vmap = parse_map(drawn)
        view = f"{prompt.view}\n\nYour map of the current state:\n{drawn or '(no map)'}"
        return Grounded(
            replace(prompt, view=view), [Call("vot", msgs, completion)], record=drawn, parsed=vmap
        )


class OracleVotGrounding(Grounding):
    """The env's true ASCII map in place of the model's drawing (seed 000's oracle VoT)."""

    name = "oracle-vot"
    tags = frozenset({"reads-privileged"})

    async def apply(self, ctx: StepContext, llm: LLM | None) -> Grounded:
        prompt = ctx.prompt
        ascii_map = ctx.privileged.get("map") if ctx.privileged is not None else None
        if not ascii_map:
            raise ConfigError("grounding 'oracle-vot': this env gives no ground-truth map")
        text = f"{MAP_HEADER}\n{ascii_map}"
        return Grounded(replace(prompt, view=f"{prompt.view}\n\n{text}"), record=text)


def _takes_images(llm: LLM | None) -> bool:
    """Whether image parts may go to ``llm``: as the config decides for image groundings
    (:func:`statelab.llm.accepts_images`, by backend), or the backend says it has vision."""
    from statelab.llm import accepts_images

    if llm is None:
        return False
    try:
        return llm.vision or accepts_images(llm.model_id)
    except ConfigError:  # a model id that names no registered backend
        return llm.vision


class ZoomGrounding(Grounding):
    """An agent-centred close-up of the observation, as text or image (seed 001's zoom)."""

    name = "zoom"

    def __init__(self, mode: str = "auto", half: int = 3) -> None:
        self.mode, self.half = mode, half
        self.tags = frozenset({"close-up", *(("needs-vision",) if mode == "image" else ())})

    async def apply(self, ctx: StepContext, llm: LLM | None) -> Grounded:
        from statelab.facts import close_up

        prompt = ctx.prompt
        text, image = close_up(ctx.observation.facts, self.half)
        send = self.mode == "image" or (self.mode == "auto" and _takes_images(llm))
        view = f"{prompt.view}\n\nClose-up around you:\n{text}"
        images = (*prompt.images, image_part(image)) if send else prompt.images
        return Grounded(
            replace(prompt, view=view, images=images), record=text + ("\n[image]" if send else "")
        )


class AnchorZoomGrounding(Grounding):
    """Seed 001's observation (``zoom:anchor``). On vision backends the prompt carries two
    images and no text grid: the wide view (the whole grid, unseen cells grey, the target
    always drawn) and the close-up of rows -1 ... +10 and columns -5 ... +5 around the agent;
    on text backends the run's text view and the same close-up as text with relative tick
    labels (``zoom:anchor-text`` forces text)."""

    name = "zoom"

    def __init__(self, force_text: bool = False) -> None:
        self.force_text = force_text
        self.tags = frozenset({"close-up"})

    async def apply(self, ctx: StepContext, llm: LLM | None) -> Grounded:
        from statelab.facts.traffic import TrafficFacts, anchor_views

        prompt = ctx.prompt
        facts = ctx.observation.facts
        if not isinstance(facts, TrafficFacts):
            raise ConfigError("grounding 'zoom:anchor' needs the moving-car grid (env traffic)")
        text, wide, close = anchor_views(facts)
        if not self.force_text and _takes_images(llm):
            goal = f"Your task is to: {prompt.goal}\n\n" if prompt.goal else ""
            view = (
                f"{goal}You are given two images of the grid. In the OBSERVATION image you see "
                "the whole grid; cells you cannot see now are GRAY. In the CLOSE-UP image you "
                "see the part of the grid from one row above you to ten rows below you and five "
                "columns to each side (cropped at the grid's edges); it is more precise."
            )
            images = (*prompt.images, image_part(wide), image_part(close))
            return Grounded(replace(prompt, view=view, images=images), record=f"{text}\n[2 images]")
        view = f"{prompt.view}\n\nClose-up around you:\n{text}"
        return Grounded(replace(prompt, view=view), record=text)


@GROUNDINGS.register("none", "none")
def _none(arg: None, ctx: BuildContext) -> Grounding:
    return NoGrounding()


@GROUNDINGS.register("image", "image", tags=("needs-vision",))
def _image(arg: None, ctx: BuildContext) -> Grounding:
    if not ctx.has_image:
        raise ConfigError(f"grounding 'image': env {ctx.env!r} draws no image of its observations")
    return ImageGrounding()


@GROUNDINGS.register("vot", "vot", tags=("needs-model",))
def _vot(arg: None, ctx: BuildContext) -> Grounding:
    return VotGrounding(ctx.params)


@GROUNDINGS.register("oracle-vot", "oracle-vot", tags=("reads-privileged",))
def _oracle_vot(arg: None, ctx: BuildContext) -> Grounding:
    if not ctx.has_map:
        raise ConfigError(f"grounding 'oracle-vot': env {ctx.env!r} gives no ground-truth map")
    return OracleVotGrounding()


def _zoom_kind(value: str) -> str | int:
    if value in ("text", "image", "anchor", "anchor-text"):
        return value
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise ValueError("use text, image, <half> (a positive number), anchor or anchor-text")


_zoom_kind.spelled = "text|image|<half>|anchor|anchor-text"  # type: ignore[attr-defined]


@GROUNDINGS.register(
    "zoom",
    "zoom[:text|image|<half>|anchor|anchor-text]",
    params=(
        Param("kind", _zoom_kind, "auto", "the close-up's form, or its half-width in cells",
              positional=True, named=False),
    ),
)  # fmt: skip
def _zoom(args: Args, ctx: BuildContext) -> Grounding:
    from statelab.facts import close_up

    if ctx.facts_type is not object and close_up.dispatch(ctx.facts_type) is close_up.dispatch(
        object
    ):
        raise ConfigError(
            f"grounding 'zoom': env {ctx.env!r} has no close-up ({ctx.facts_type.__name__})"
        )
    kind = args.kind
    if kind in ("anchor", "anchor-text"):
        from statelab.facts import TrafficFacts

        if ctx.facts_type not in (object, TrafficFacts):
            raise ConfigError(f"grounding 'zoom:{kind}' needs the moving-car grid (env traffic)")
        return AnchorZoomGrounding(force_text=kind == "anchor-text")
    if isinstance(kind, int):
        return ZoomGrounding(half=kind)
    return ZoomGrounding(kind)


def make_grounding(spelling: str, params: GenParams) -> Grounding:
    """Build a grounding outside an episode (tests, tools)."""
    return GROUNDINGS.build(spelling, BuildContext(params=params))
