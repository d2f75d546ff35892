"""Loading for the ``hf:`` backend (:mod:`.transformers_backend`): the spec
``<model>[?adapter=<dir>]``, the model directory it resolves to (a folder, a GGUF converted
once and cached, a hub id downloaded), fingerprints, and the per-process table of loaded
models."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from statelab.core import ConfigError, ModelError

#: the file ``statelab train`` writes next to an adapter: its base model spec and provenance
ADAPTER_META = "statelab.json"
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_INSTALL = "the hf: backend needs the train extra: pip install 'statelab[train]'"


@dataclass(frozen=True)
class HFSpec:
    """A parsed ``hf:`` argument."""

    model: str
    adapter: str | None = None

    @property
    def spec(self) -> str:
        return f"hf:{self.model}" + (f"?adapter={self.adapter}" if self.adapter else "")


#: the options an ``hf:`` spelling takes (name, allowed, help), declared once
HF_DECLARED = (
    ("adapter", "a folder", "a peft (LoRA) adapter loaded on the model; refused where its "
                            "statelab.json names another base"),
)  # fmt: skip


def parse_hf(arg: str, *, planned: bool = False) -> HFSpec:
    """``<model>[?adapter=<dir>]``: the adapter directory must hold a peft adapter; with
    ``planned`` (checking a config before its run) a directory that does not exist yet is
    taken as one a stage before this one writes (the toy line's reader); an existing
    directory without ``adapter_config.json`` is refused either way."""
    model, _, query = arg.partition("?")
    if not model:
        raise ConfigError("model 'hf:' needs a model: hf:<dir|file.gguf|package|owner/name>")
    opts = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    known = [name for name, _, _ in HF_DECLARED]
    unknown = set(opts) - set(known)
    if unknown:
        names = ", ".join(sorted(unknown))
        raise ConfigError(f"hf: model option(s) {names} unknown; known: {', '.join(known)}")
    adapter = opts.get("adapter") or None
    if adapter is not None:
        where = Path(adapter).expanduser()
        if not where.exists() and not planned:
            raise ConfigError(f"hf: adapter {adapter!r} not found (has its training run?)")
        if where.exists() and not (where / "adapter_config.json").is_file():
            raise ConfigError(f"hf: adapter {adapter!r} is not a peft adapter directory")
        trained_on = _trained_on(where)
        if trained_on is not None and not _same_model(trained_on, model):
            raise ConfigError(
                f"hf: adapter {adapter!r} was trained on {trained_on!r}, not {model!r}: "
                f"load it as hf:{trained_on}?adapter={adapter}"
            )
    return HFSpec(model, adapter)


def _trained_on(adapter: Path) -> str | None:
    """The base model an adapter's ``statelab.json`` records (None: none recorded)."""
    meta = adapter / ADAPTER_META
    if not meta.is_file():
        return None
    try:
        base = json.loads(meta.read_text()).get("base")
    except (ValueError, OSError, AttributeError):
        return None
    return str(base).removeprefix("hf:") if base else None


def _same_model(a: str, b: str) -> bool:
    """Two spellings of one base: equal, or paths to one directory."""
    if a == b:
        return True
    pa, pb = Path(a).expanduser(), Path(b).expanduser()
    return pa.exists() and pb.exists() and pa.resolve() == pb.resolve()


def cache_root() -> Path:
    return Path(os.environ.get("STATELAB_CACHE", "~/.cache/statelab")).expanduser() / "hf"


def gguf_of(model: str) -> Path | None:
    """The GGUF file ``model`` names (a .gguf path or a package shipping one), else None."""
    path = Path(model).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ConfigError(f"model file not found: {model}")
        return path
    if not model.isidentifier():
        return None
    found = importlib.util.find_spec(model)
    if found is None or not found.submodule_search_locations:
        return None
    ggufs = sorted(p for d in found.submodule_search_locations for p in Path(d).glob("*.gguf"))
    if len(ggufs) != 1:
        raise ConfigError(f"package {model!r} ships {len(ggufs)} .gguf files; pass a path instead")
    return ggufs[0]


def fingerprint(path: Path) -> str:
    """A short hash of a file (its first MiB and its size) or of a directory's weight and
    adapter files."""
    h = hashlib.sha256()
    files = (
        sorted(p for p in path.iterdir() if p.suffix in (".safetensors", ".bin", ".json", ".gguf"))
        if path.is_dir()
        else [path]
    )
    for f in files:
        h.update(f.name.encode())
        with f.open("rb") as fh:
            h.update(fh.read(1 << 20))
        h.update(str(f.stat().st_size).encode())
    return h.hexdigest()[:12]


def _need_transformers() -> Any:
    try:
        import transformers
    except ImportError as e:
        raise ConfigError(_INSTALL) from e
    return transformers


def resolve(model: str) -> Path:
    """A local transformers model directory for ``model`` (a GGUF converted once and cached;
    a hub id downloaded). A hub id that cannot be fetched is one ModelError line."""
    local = Path(model).expanduser()
    if local.is_dir():
        if not (local / "config.json").is_file():
            raise ConfigError(f"hf: {model!r} is a directory without a transformers config.json")
        return local
    gguf = gguf_of(model)
    if gguf is not None:
        return _converted(gguf)
    if not HUB_ID.fullmatch(model) or local.exists():
        raise ConfigError(
            f"hf: {model!r} is neither a model directory, a .gguf file, an installed package "
            "shipping one, nor a hub id owner/name"
        )
    return _from_hub(model)


def _converted(gguf: Path) -> Path:
    out = cache_root() / f"{gguf.stem}-{fingerprint(gguf)}"
    if (out / "config.json").is_file():
        return out
    tf = _need_transformers()
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    kw = {"gguf_file": gguf.name}
    tok = tf.AutoTokenizer.from_pretrained(str(gguf.parent), **kw)
    model = tf.AutoModelForCausalLM.from_pretrained(str(gguf.parent), **kw)
    # the weights are dequantised (float32) already; the GGUF "quantizer" only refuses to save
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "statelab-source.json").write_text(json.dumps({"gguf": str(gguf)}))
    if not out.exists():  # a parallel load may have finished first
        tmp.replace(out)
    return out


def _from_hub(repo: str) -> Path:
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - a dependency of transformers
        raise ConfigError(_INSTALL) from e
    try:
        return Path(snapshot_download(repo_id=repo))
    except Exception as e:  # any network or hub failure becomes one clear line
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(
            f"could not fetch the model {repo} from the Hugging Face hub ({type(e).__name__}: "
            f"{reason}). Without hub access, download it elsewhere and pass hf:/path/to/dir "
            "(or a .gguf file)"
        ) from e


#: loaded models shared in one process: (directory, adapter) -> (model, tokenizer)
LOADED: dict[tuple[str, str | None], tuple[Any, Any]] = {}
_LOAD_LOCK = threading.Lock()


def load(spec: HFSpec) -> tuple[Any, Any, Path]:
    """(model in eval mode, tokenizer, base directory) for ``spec``; cached per process."""
    tf = _need_transformers()
    base = resolve(spec.model)
    key = (str(base), spec.adapter)
    with _LOAD_LOCK:
        if key not in LOADED:
            import torch

            device = os.environ.get("STATELAB_HF_DEVICE", "cpu")
            if device == "cpu":  # see the module docstring: more threads on a shared CPU stall
                torch.set_num_threads(int(os.environ.get("STATELAB_HF_THREADS", "1")))
            tok = tf.AutoTokenizer.from_pretrained(str(base))
            dtype = torch.float32 if device == "cpu" else torch.bfloat16
            model = tf.AutoModelForCausalLM.from_pretrained(str(base), dtype=dtype)
            if spec.adapter:
                from peft import PeftModel

                model = PeftModel.from_pretrained(model, str(Path(spec.adapter).expanduser()))
            model.to(device)
            model.eval()
            LOADED[key] = (model, tok)
        model, tok = LOADED[key]
    return model, tok, base
