"""Model files: a plain PyTorch state dict (``vN.pt``) and JSON metadata (``vN.json``).

Loading never runs code: ``torch.load(..., weights_only=True)`` only rebuilds
tensors and plain containers, and we then insist on a flat mapping of names to
tensors. Anything else (a pickled module, a tampered file) is refused with an
error naming the file.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import torch
from torch import nn


class ModelFileError(ValueError):
    """A model file that is not a plain state dict."""


QUANT_MIN_ELEMENTS = 1 << 20
"""Matrices at least this large are stored 4-bit when a model is saved quantised."""


def quantize4(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric 4-bit quantisation with one scale per row: returns (packed uint8
    with two values a byte, float32 scales)."""
    w = weight.detach().float().reshape(weight.shape[0], -1)
    scale = w.abs().amax(dim=1).clamp_min(1e-12) / 7.0
    q = torch.clamp(torch.round(w / scale[:, None]), -8, 7).to(torch.int16) + 8   # 0..15
    if q.shape[1] % 2:
        q = torch.cat([q, torch.full((q.shape[0], 1), 8, dtype=torch.int16)], dim=1)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).to(torch.uint8)
    return packed, scale


def dequantize4(packed: torch.Tensor, scale: torch.Tensor, shape: torch.Size | list[int]) -> torch.Tensor:
    low = (packed & 0x0F).to(torch.int16) - 8
    high = (packed >> 4).to(torch.int16) - 8
    q = torch.stack([low, high], dim=2).reshape(packed.shape[0], -1)
    cols = int(torch.tensor(list(shape[1:])).prod()) if len(shape) > 1 else 1
    return (q[:, :cols].float() * scale[:, None]).reshape(list(shape))


def compact_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Replace every large matrix ``W`` by ``W.q4`` (packed), ``W.q4scale`` and ``W.q4shape``."""
    out = {}
    for k, v in state.items():
        if v.dim() >= 2 and v.numel() >= QUANT_MIN_ELEMENTS and v.is_floating_point():
            packed, scale = quantize4(v)
            out[f"{k}.q4"], out[f"{k}.q4scale"] = packed, scale
            out[f"{k}.q4shape"] = torch.tensor(list(v.shape), dtype=torch.int64)
        else:
            out[k] = v
    return out


def expand_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The inverse of :func:`compact_state` (plain state dicts pass through)."""
    out = {}
    for k, v in state.items():
        if k.endswith(".q4"):
            base = k[:-3]
            out[base] = dequantize4(v, state[f"{base}.q4scale"], state[f"{base}.q4shape"].tolist())
        elif not (k.endswith(".q4scale") or k.endswith(".q4shape")):
            out[k] = v
    return out


def save_model(model: nn.Module, path: str | Path, meta: dict[str, Any] | None = None, *,
               quantize: bool = False) -> None:
    """Write ``model``'s state dict to ``path`` and ``meta`` beside it (``.json``),
    each through a temporary file and a rename. ``quantize=True`` stores matrices of
    a million or more numbers in 4 bits (the move networks, to fit the size budget)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    if quantize:
        state = compact_state(state)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)
    if meta is not None:
        write_meta(path.with_suffix(".json"), meta)


def write_meta(path: str | Path, meta: dict[str, Any]) -> None:
    path = Path(path)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)


def read_meta(path: str | Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(Path(path).read_text())
    return meta


def load_state(path: str | Path) -> dict[str, torch.Tensor]:
    """The state dict stored at ``path``, loaded with ``weights_only=True``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as exc:
        raise ModelFileError(f"{path}: not a plain PyTorch state dict ({str(exc).splitlines()[0]})") from None
    if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise ModelFileError(f"{path}: expected a mapping of parameter names to tensors")
    return state


def load_into(model: nn.Module, path: str | Path) -> nn.Module:
    """Load the weights at ``path`` into ``model`` (shapes must match exactly)."""
    state = expand_state(load_state(path))
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ModelFileError(f"{path}: weights do not fit {type(model).__name__}: {exc}") from None
    return model
