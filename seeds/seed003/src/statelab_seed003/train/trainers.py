"""The two optimisers of seed 003's training, both TRL on a LoRA adapter (PEFT):

- :func:`sft`: supervised fine-tuning on prompt -> completion pairs (chat messages), the loss
  on the completion only (TRL's prompt-completion format). Reader behaviour cloning (prompt:
  the reader's; completion: the labelled a*) and DSSR round 0 (prompt: the writer's;
  completion: the best candidate state) use it.
- :func:`dpo`: DSSR rounds 1+: DPO on (prompt, chosen = best, rejected = worst) with, besides
  the sigmoid DPO loss, TRL's ``"sft"`` loss (the mean token NLL of the chosen completion)
  weighted 0.5 - the seed's "0.5-weighted likelihood term on the chosen state" (RPO; TRL 1.x
  spells ``rpo_alpha=0.5`` as ``loss_type=["sigmoid", "sft"], loss_weights=[1.0, 0.5]``). The
  reference is a frozen copy of the adapter the round starts from (TRL 1.16, for a model
  loaded from an adapter; not the base with the adapter switched off, see docs/seed003.md).

Training starts from the base model (a fresh adapter) or from an earlier adapter (``init``,
trainable), and writes the adapter (``adapter_model.safetensors``, ``adapter_config.json``)
plus :data:`~statelab.llm.transformers_backend.ADAPTER_META` (the base model's spec, what it
was trained on, the losses) into ``out``: a directory ``hf:<base>?adapter=<out>`` and
``bounded:dssr=<out>:B`` load.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from statelab.core import ConfigError, Message
from statelab.llm._hf_load import ADAPTER_META

Example = dict[str, Any]


@dataclass(frozen=True)
class Hyper:
    """Optimisation settings (the seed's GPU values are in configs/seed003/train_*.yaml)."""

    steps: int = 4
    #: passes over the data (the seed-scale configs); set, it replaces ``steps``
    epochs: float | None = None
    batch_size: int = 2
    #: batches accumulated per optimiser step (the effective batch is batch_size x this)
    grad_accum: int = 1
    lr: float = 2e-4
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.0
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
    max_length: int = 2048
    beta: float = 0.1
    #: the weight of the chosen state's likelihood term in DPO (the seed: 0.5)
    sft_weight: float = 0.5
    seed: int = 0


@dataclass
class TrainResult:
    out: Path
    examples: int
    steps: int
    seconds: float
    losses: list[float] = field(default_factory=list)


def _libs() -> tuple[Any, Any, Any, Any]:
    try:
        import datasets
        import peft
        import torch
        import trl
    except ImportError as e:
        raise ConfigError("training needs the train extra: pip install 'statelab[train]'") from e
    return torch, datasets, peft, trl


def _model(base: str, init: str | Path | None) -> tuple[Any, Any, Any]:
    """(trainable model, tokenizer, peft config or None when ``init`` is an adapter)."""
    import transformers

    from statelab.llm._hf_load import resolve

    _, _, peft, _ = _libs()
    where = resolve(base)
    tok = transformers.AutoTokenizer.from_pretrained(str(where))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = transformers.AutoModelForCausalLM.from_pretrained(str(where))
    if init is not None:
        model = peft.PeftModel.from_pretrained(model, str(init), is_trainable=True)
    return model, tok, where


def linear_names(model: Any) -> list[str]:
    """The names (last part) of a model's linear layers: what LoRA ``target_modules`` match."""
    import torch

    linear = torch.nn.Linear
    return sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, linear)})


def check_targets(model: Any, modules: tuple[str, ...] | list[str]) -> None:
    """Refuse LoRA target modules the model's architecture lacks (a fused ``qkv_proj`` layout,
    Phi-3/Phi-4, has no ``q_proj``), in one line naming the ones it has."""
    have = linear_names(model)
    missing = [m for m in modules if m not in have]
    if missing:
        arch = type(model).__name__
        raise ConfigError(
            f"hyper.target_modules {missing} are not layers of {arch}; its linear layers: "
            f"{', '.join(have)}"
        )


def check_targets_of(folder: str | Path, modules: tuple[str, ...] | list[str]) -> None:
    """:func:`check_targets` on a model folder's ``config.json`` alone: the model is built on
    torch's meta device (no weights read, nothing downloaded)."""
    import torch
    import transformers

    cfg = transformers.AutoConfig.from_pretrained(str(folder))
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg)
    check_targets(model, modules)


def _rows_kwargs(tok: Any) -> dict[str, Any]:
    """Per-row chat-template arguments: thinking off where the template takes the switch, as
    the backends render the same prompts (:mod:`statelab.llm._thinking`)."""
    from statelab.llm._thinking import template_kwargs

    kw = template_kwargs(getattr(tok, "chat_template", None), reasoning=False)
    return {"chat_template_kwargs": kw} if kw else {}


def _lora(h: Hyper) -> Any:
    _, _, peft, _ = _libs()
    return peft.LoraConfig(
        r=h.lora_r,
        lora_alpha=h.lora_alpha,
        lora_dropout=h.lora_dropout,
        target_modules=list(h.target_modules),
        task_type="CAUSAL_LM",
    )


def _common(h: Hyper, out: Path) -> dict[str, Any]:
    return {
        "output_dir": str(out / "_trainer"),
        "max_steps": h.steps if h.epochs is None else -1,
        **({"num_train_epochs": h.epochs} if h.epochs is not None else {}),
        "per_device_train_batch_size": h.batch_size,
        "gradient_accumulation_steps": h.grad_accum,
        "learning_rate": h.lr,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "seed": h.seed,
        "max_length": h.max_length,
        "use_cpu": os.environ.get("STATELAB_HF_DEVICE", "cpu") == "cpu",
        "bf16": os.environ.get("STATELAB_HF_DEVICE", "cpu") != "cpu",
        "disable_tqdm": True,
    }


def _finish(
    trainer: Any, out: Path, base: str, kind: str, h: Hyper, n: int, t0: float, meta: dict[str, Any]
) -> TrainResult:
    trainer.train()
    trainer.model.save_pretrained(str(out))
    shutil.rmtree(out / "_trainer", ignore_errors=True)  # the trainer's scratch (no checkpoints)
    losses = [float(r["loss"]) for r in trainer.state.log_history if "loss" in r]
    info = {
        "base": base,
        "kind": kind,
        "examples": n,
        "hyper": asdict(h),
        "losses": losses,
        **meta,
    }
    (out / ADAPTER_META).write_text(json.dumps(info, indent=1, default=str))
    steps = h.steps if h.epochs is None else int(trainer.state.global_step)
    return TrainResult(out, n, steps, time.perf_counter() - t0, losses)


def _threads() -> None:
    import torch

    if os.environ.get("STATELAB_HF_DEVICE", "cpu") == "cpu":
        torch.set_num_threads(int(os.environ.get("STATELAB_HF_THREADS", "1")))


def sft(
    examples: list[tuple[list[Message], str]],
    out: str | Path,
    *,
    base: str,
    hyper: Hyper | None = None,
    init: str | Path | None = None,
    kind: str = "sft",
    meta: dict[str, Any] | None = None,
) -> TrainResult:
    """LoRA SFT on (prompt messages, completion text) pairs; the adapter goes to ``out``."""
    if not examples:
        raise ConfigError("nothing to train on: no examples")
    _, datasets, _, trl = _libs()
    _threads()
    h, out, t0 = hyper or Hyper(), Path(out), time.perf_counter()
    model, tok, _ = _model(base, init)
    if init is None:
        check_targets(model, h.target_modules)
    extra = _rows_kwargs(tok)
    rows = [
        {"prompt": list(p), "completion": [{"role": "assistant", "content": c}], **extra}
        for p, c in examples
    ]
    args = trl.SFTConfig(**_common(h, out), completion_only_loss=True)
    trainer = trl.SFTTrainer(
        model=model,
        args=args,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tok,
        peft_config=_lora(h) if init is None else None,
    )
    return _finish(trainer, out, base, kind, h, len(rows), t0, meta or {})


def dpo(
    pairs: list[tuple[list[Message], str, str]],
    out: str | Path,
    *,
    base: str,
    hyper: Hyper | None = None,
    init: str | Path | None = None,
    kind: str = "dpo",
    meta: dict[str, Any] | None = None,
) -> TrainResult:
    """LoRA DPO on (prompt messages, chosen, rejected), plus the weighted likelihood term on
    the chosen completion (see the module docstring); the adapter goes to ``out``."""
    if not pairs:
        raise ConfigError("nothing to train on: no preference pairs passed the gap")
    _, datasets, _, trl = _libs()
    _threads()
    h, out, t0 = hyper or Hyper(), Path(out), time.perf_counter()
    model, tok, _ = _model(base, init)
    if init is None:
        check_targets(model, h.target_modules)
    extra = _rows_kwargs(tok)
    rows = [
        {
            "prompt": list(p),
            "chosen": [{"role": "assistant", "content": c}],
            "rejected": [{"role": "assistant", "content": r}],
            **extra,
        }
        for p, c, r in pairs
    ]
    args = trl.DPOConfig(
        **_common(h, out),
        beta=h.beta,
        loss_type=["sigmoid", "sft"],
        loss_weights=[1.0, h.sft_weight],
    )
    trainer = trl.DPOTrainer(
        model=model,
        args=args,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tok,
        peft_config=_lora(h) if init is None else None,
    )
    return _finish(trainer, out, base, kind, h, len(rows), t0, meta or {})
