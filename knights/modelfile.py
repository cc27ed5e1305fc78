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

import torch
from torch import nn


class ModelFileError(ValueError):
    """A model file that is not a plain state dict."""


def save_model(model: nn.Module, path: str | Path, meta: dict | None = None) -> None:
    """Write ``model``'s state dict to ``path`` and ``meta`` beside it (``.json``),
    each through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)
    if meta is not None:
        write_meta(path.with_suffix(".json"), meta)


def write_meta(path: str | Path, meta: dict) -> None:
    path = Path(path)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)


def read_meta(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


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
    state = load_state(path)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ModelFileError(f"{path}: weights do not fit {type(model).__name__}: {exc}") from None
    return model
