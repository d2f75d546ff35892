"""A trained adapter served by vLLM: what the folder must hold, the command that serves it, and
the writer spelled as the served model.

vLLM serves LoRA adapters by name on top of the base model (``vllm serve <base> --enable-lora
--lora-modules <name>=<dir>``; a request's ``model`` is the adapter's name), so a DSSR writer
``statelab seed003 train writer`` saved becomes ``bounded:dssr=openai-compat:http://HOST:8000/v1#<name>:B``,
and DSSR's candidates and roll-forwards can go to the server, many requests in flight, while
training stays in-process (TRL/PEFT). A server started with ``VLLM_ALLOW_RUNTIME_LORA_UPDATING
=True`` also takes adapters while it runs (``POST /v1/load_lora_adapter``): the writer job's
``serve`` block loads each round's adapter there, so one server serves every round.

vLLM reads ``adapter_config.json`` and ``adapter_model.safetensors`` (what PEFT's
``save_pretrained`` writes); it refuses a rank above ``--max-lora-rank`` (default 16; one of
:data:`VLLM_RANKS`), DoRA, and ``modules_to_save`` (trained copies of whole layers).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from statelab.core import ConfigError, ModelError

__all__ = [
    "VLLM_RANKS",
    "adapter_name",
    "load_adapter",
    "round_writer",
    "served_spec",
    "vllm_command",
    "vllm_info",
    "vllm_problems",
]

#: the ``--max-lora-rank`` values vLLM accepts
VLLM_RANKS = (8, 16, 32, 64, 128, 256, 320, 512)


def adapter_name(job: str, r: int) -> str:
    """The name a round's adapter is served under: ``<job name>-round<r>``."""
    return f"{job}-round{r}"


def served_spec(url: str, name: str) -> str:
    """The model spec of ``name`` on the server at ``url`` (``.../v1``), thinking off: a
    Qwen3-based adapter's name does not say its template thinks (:mod:`statelab.llm._thinking`)."""
    return f"openai-compat:{url.rstrip('/')}#{name}?thinking=off"


def _config(adapter: Path) -> dict[str, Any]:
    """The folder's ``adapter_config.json`` ({} when there is none or it is unreadable)."""
    try:
        got = json.loads((adapter / "adapter_config.json").read_text())
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def vllm_problems(adapter: str | Path) -> list[str]:
    """What keeps vLLM from serving the adapter folder (empty: nothing)."""
    where = Path(adapter)
    cfg = _config(where)
    out = [] if cfg else ["no readable adapter_config.json (vLLM reads the LoRA settings there)"]
    if not (where / "adapter_model.safetensors").is_file():
        out.append("no adapter_model.safetensors (vLLM loads the weights from it)")
    if cfg.get("peft_type", "LORA") != "LORA":
        out.append(f"peft_type {cfg.get('peft_type')!r}: vLLM serves LoRA adapters only")
    if cfg.get("use_dora"):
        out.append("a DoRA adapter (use_dora): vLLM does not serve DoRA")
    if cfg.get("modules_to_save"):
        out.append(f"modules_to_save {cfg['modules_to_save']}: vLLM serves LoRA weights only")
    r = int(cfg.get("r") or 0)
    if r > VLLM_RANKS[-1]:
        out.append(f"rank {r} above vLLM's largest --max-lora-rank {VLLM_RANKS[-1]}")
    return out


def _rank(adapter: Path) -> int:
    r = int(_config(adapter).get("r") or 8)
    return next((v for v in VLLM_RANKS if v >= r), VLLM_RANKS[-1])


def vllm_command(adapter: str | Path, name: str, base: str, *, served_as: str | None = None,
                 port: int = 8000, runtime: bool = False,
                 memory: float | None = None) -> str:  # fmt: skip
    """The command that serves ``base`` (as ``served_as``, vLLM's ``--served-model-name``)
    with the adapter as ``name`` (``runtime``: also accepting later adapters through
    ``/v1/load_lora_adapter``; ``memory``: the share of the GPU vLLM takes, leaving the rest
    to in-process training). ``base`` is what vLLM loads: a hub id or a model folder."""
    where = Path(adapter).resolve()
    env = "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True " if runtime else ""
    named = ["--served-model-name", served_as] if served_as and served_as != base else []
    share = ["--gpu-memory-utilization", f"{memory:g}"] if memory is not None else []
    parts = ["vllm", "serve", base, *named, "--port", str(port), *share, "--enable-lora",
             "--max-lora-rank", str(_rank(where)), "--lora-modules", f"{name}={where}"]  # fmt: skip
    return env + " ".join(shlex.quote(p) for p in parts)


def vllm_base(base: str) -> str:
    """What vLLM loads for an ``hf:`` base argument, without loading or converting anything:
    a hub id as it is, a model folder's absolute path, and for a packaged GGUF the folder the
    ``hf:`` backend converts it into (training has made it by then)."""
    from statelab.llm._hf_load import HUB_ID, cache_root, fingerprint, gguf_of

    local = Path(base).expanduser()
    if local.is_dir():
        return str(local.resolve())
    try:
        gguf = gguf_of(base)
    except ConfigError:
        gguf = None
    if gguf is not None:
        return str(cache_root() / f"{gguf.stem}-{fingerprint(gguf)}")
    return base if HUB_ID.fullmatch(base) else str(local)


async def load_adapter(url: str, name: str, adapter: str | Path, *, transport: Any = None) -> None:
    """Ask the vLLM server at ``url`` (``.../v1``) to serve ``adapter`` as ``name`` (a server
    started with ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``); a ModelError line if it refuses."""
    import httpx

    body = {"lora_name": name, "lora_path": str(Path(adapter).resolve())}
    try:
        async with httpx.AsyncClient(timeout=120.0, transport=transport) as client:
            r = await client.post(url.rstrip("/") + "/load_lora_adapter", json=body)
    except httpx.HTTPError as e:
        raise ModelError(f"cannot load adapter {name} into {url}: {type(e).__name__}") from None
    if r.status_code >= 300 and "already" not in r.text.lower():
        excerpt = " ".join(r.text.split())[:160]
        raise ModelError(
            f"{url} refused to load adapter {name} (HTTP {r.status_code}: {excerpt}); start "
            "vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and --enable-lora"
        )


def round_writer(cfg: Any, adapter: Path | None, r: int) -> str:
    """The model spec round ``r``'s candidates are written with (``cfg``: a writer job's):
    in-process, the base or ``base?adapter=<last round's>``; with ``serve``, the served base
    or the last round's adapter by name (loaded into the server first, when ``serve.load``)."""
    if cfg.serve is None:
        return cfg.base if adapter is None else f"{cfg.base}?adapter={adapter}"
    if adapter is None:
        return served_spec(cfg.serve.url, cfg.serve.base_name or cfg.base.removeprefix("hf:"))
    name = adapter_name(cfg.name, int(adapter.name.removeprefix("round")))
    if cfg.serve.load:
        asyncio.run(load_adapter(cfg.serve.url, name, adapter))
    return served_spec(cfg.serve.url, name)


def vllm_info(cfg: Any, adapter: Path, r: int) -> dict[str, Any]:
    """How vLLM serves the adapter (printed, and kept in summary.json): the command, the
    name, the writer spelled as the served model, and what vLLM would refuse."""
    name = adapter_name(cfg.name, r)
    url = cfg.serve.url if cfg.serve is not None else "http://127.0.0.1:8000/v1"
    base_name = cfg.serve.base_name if cfg.serve is not None else None
    command = vllm_command(adapter, name, vllm_base(cfg.base_arg()), runtime=True, memory=0.45,
                           served_as=base_name or cfg.base_arg())  # fmt: skip
    problems = vllm_problems(adapter)
    writer = f"bounded:dssr={served_spec(url, name)}:{cfg.budget}"
    print(f"serve {adapter} with vLLM: {command}\n  the writer, served: {writer}"
          + "".join(f"\n  vLLM would refuse it: {p}" for p in problems),
          file=sys.stderr, flush=True)  # fmt: skip
    return {"name": name, "command": command, "writer": writer, "problems": problems}
