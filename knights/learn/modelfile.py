"""Model files: a plain PyTorch state dict (``vN.pt``) and JSON metadata (``vN.json``).

Loading never runs code: ``torch.load(..., weights_only=True)`` only rebuilds
tensors and plain containers, and we then insist on a flat mapping of names to
tensors. Anything else (a pickled module, a tampered file) is refused with an
error naming the file.

Every model file is verified before it is opened: its metadata records the
SHA-256 of the ``.pt`` bytes under ``"sha256"`` (written by :func:`save_model`
whenever a model is saved), and :func:`load_state` refuses the file, naming it,
when the bytes do not match, when the file is empty, truncated or not a state
dict, or when a tensor holds NaN or infinity. The checksum is the one the
ensemble's array files use (:func:`knights.learn.store.sha256_file`).

A file whose metadata lacks the checksum (or that has no metadata), e.g. from a
run older than the checksum, is *refused*, not accepted with a warning: a
warning scrolls by and the bytes may have been flipped since. The error names
the command that records the checksum of a file you trust::

    python -m knights.learn.verify stamp models_EL/v8.pt

(``stamp`` still refuses a file that is empty, not a state dict or non-finite,
and never overwrites a different recorded checksum without ``--force``;
``python -m knights.learn.verify verify FILE...`` checks files, shapes included:
:mod:`knights.learn.verify`.)
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from knights.common import write_json
from knights.learn.store import ModelFileError as ModelFileError  # one error for networks' and learners' files
from knights.learn.store import sha256_file

CHECKSUM_KEY = "sha256"
"""The metadata key holding the SHA-256 of the ``.pt`` bytes."""


def meta_path(path: str | Path) -> Path:
    """The metadata file beside the weights ``path`` (``vN.json`` for ``vN.pt``)."""
    return Path(path).with_suffix(".json")


def stamp_command(path: str | Path) -> str:
    return f"python -m knights.learn.verify stamp {path}"


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
               quantize: bool = False) -> str:
    """Write ``model``'s state dict to ``path`` and its metadata beside it (``.json``:
    ``meta`` plus the SHA-256 of the written weights under ``"sha256"``); returns that SHA-256.
    ``quantize=True`` stores matrices of a million or more numbers in 4 bits (the move
    networks, to fit the size budget).

    A broken model never replaces a good one: weights holding NaN or infinity, and metadata
    holding a number that is not finite (a ``"mae": NaN``), are refused
    (:class:`ModelFileError`) before anything is written; both files are written in full
    to temporary names first, then renamed over the old ones."""
    path = Path(path)
    side = meta_path(path)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    bad = [k for k, v in state.items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise ModelFileError(f"{path}: not written: the weights are non-finite (NaN or infinity in "
                             f"{', '.join(bad[:3])}); the file there is kept")
    _check_finite_meta(side, meta or {})
    path.parent.mkdir(parents=True, exist_ok=True)
    if quantize:
        state = compact_state(state)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp_meta = side.with_name(f".{side.name}.{os.getpid()}.tmp")
    try:
        torch.save(state, tmp)
        digest = sha256_file(tmp)
        tmp_meta.write_text(json.dumps({**(meta or {}), CHECKSUM_KEY: digest}, indent=1, allow_nan=False) + "\n")
        os.replace(tmp, path)
        os.replace(tmp_meta, side)
    finally:
        tmp.unlink(missing_ok=True)
        tmp_meta.unlink(missing_ok=True)
    return digest


def _check_finite_meta(path: Path, meta: dict[str, Any]) -> None:
    """Refuse metadata holding a float that is not finite (JSON has no NaN), naming its key."""
    def walk(value: Any, where: str) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            raise ModelFileError(f"{path}: not written: {where or 'the metadata'} is {value}, not a finite number "
                                 "(the run's result is broken); the files there are kept")
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")

    walk(meta, "")


def write_meta(path: str | Path, meta: dict[str, Any]) -> None:
    write_json(path, meta)


def read_meta(path: str | Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(Path(path).read_text())
    return meta


def meta_of(path: Path) -> dict[str, Any] | None:
    """The metadata beside the weights ``path`` (``None`` when there is none)."""
    side = meta_path(path)
    if not side.is_file():
        return None
    try:
        meta = read_meta(side)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{side}: model metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ModelFileError(f"{side}: model metadata is not a JSON object")
    return meta


def verify_checksum(path: str | Path) -> str:
    """Check the bytes at ``path`` against the SHA-256 its metadata records; returns it.

    Refused (:class:`ModelFileError` naming the file): no metadata, no checksum in it,
    or a different checksum."""
    path = Path(path)
    side = meta_path(path)
    meta = meta_of(path)
    if meta is None or CHECKSUM_KEY not in meta:
        where = f"{side.name} records no {CHECKSUM_KEY!r} checksum" if meta is not None else f"no metadata {side.name}"
        raise ModelFileError(f"{path}: {where}, so the weights cannot be verified; "
                             f"if you trust this file, record its checksum: {stamp_command(path)}")
    recorded = meta[CHECKSUM_KEY]
    digest = sha256_file(path)
    if digest != recorded:
        raise ModelFileError(f"{path}: checksum mismatch (SHA-256 {digest[:12]}..., {side.name} records "
                             f"{str(recorded)[:12]}...): the file was altered or damaged; restore or retrain it")
    return digest


def load_state(path: str | Path, *, verify: bool = True) -> dict[str, torch.Tensor]:
    """The state dict stored at ``path``, loaded with ``weights_only=True``.

    ``verify`` (the default): the bytes must match the SHA-256 in the metadata beside
    them (:func:`verify_checksum`), checked before they are unpickled. Always: the file
    must hold a non-empty mapping of names to tensors, every floating-point value finite."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    if verify:
        verify_checksum(path)
    if path.stat().st_size == 0:
        raise ModelFileError(f"{path}: empty file (0 bytes), not a PyTorch state dict")
    try:
        with warnings.catch_warnings():   # torch's notes on a foreign pickle's protocol: the refusal says it all
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - whatever a damaged file makes torch.load raise, it is a bad file
        raise ModelFileError(f"{path}: not a plain PyTorch state dict ({_load_failure(exc)})") from None
    if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise ModelFileError(f"{path}: expected a mapping of parameter names to tensors")
    if not state:
        raise ModelFileError(f"{path}: holds no tensors")
    for name, tensor in state.items():
        if (tensor.is_floating_point() or tensor.is_complex()) and not bool(torch.isfinite(tensor).all()):
            raise ModelFileError(f"{path}: tensor {name!r} holds non-finite values (NaN or infinity)")
    return state


def _load_failure(exc: Exception) -> str:
    """Why ``torch.load(..., weights_only=True)`` refused a file, in our words: torch's own message
    for a pickle of other Python objects advises loading it unsafely, which no model file needs."""
    text = str(exc)
    if "weights_only" not in text:   # damaged bytes: torch's first line says where
        return (text.splitlines() or [type(exc).__name__])[0][:200]
    named = re.search(r"GLOBAL ([\w.]+)", text)
    what = f"a pickled reference to {named.group(1)}" if named else "pickled Python objects, not only tensors"
    return f"it holds {what}; not loaded, since loading it could run code"


def load_into(model: nn.Module, path: str | Path) -> nn.Module:
    """Load the verified weights at ``path`` into ``model`` (shapes must match exactly)."""
    state = expand_state(load_state(path))
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ModelFileError(f"{path}: weights do not fit {type(model).__name__}: {exc}") from None
    return model


def stamp(path: str | Path, *, force: bool = False) -> str:
    """Record the SHA-256 of the weights ``path`` (``.pt``, or its ``.json``) in its
    metadata, every other key left as it is; returns the checksum.

    For files you trust that predate the checksum (the shipped ones were stamped so).
    The weights must still load as a finite state dict; a different checksum already
    recorded is only replaced with ``force=True``."""
    path = Path(path)
    if path.suffix == ".json":
        path = path.with_suffix(".pt")
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    load_state(path, verify=False)
    meta = meta_of(path) or {}
    digest = sha256_file(path)
    recorded = meta.get(CHECKSUM_KEY)
    if recorded is not None and recorded != digest and not force:
        raise ModelFileError(f"{path}: {meta_path(path).name} records a different checksum "
                             f"({str(recorded)[:12]}..., the file is {digest[:12]}...); the file may have been "
                             f"altered: restore it, or pass --force to record the new one")
    if recorded != digest:
        meta[CHECKSUM_KEY] = digest
        write_meta(meta_path(path), meta)
    return digest
