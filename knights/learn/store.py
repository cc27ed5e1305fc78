"""Model files that cannot run code when loaded: plain arrays plus a JSON sidecar.

Every shipped learner is two files::

    random_forest.npz    np.savez_compressed of plain numeric arrays
    random_forest.json   {"format": "knights-arrays", "kind": "forest", "sha256": ...,
                          "arrays": {"feature": {"dtype": "int16", "shape": [...]}, ...},
                          "meta": {...}}

:func:`load_arrays` reads the sidecar with :mod:`json` (no code), checks the
``.npz``'s SHA-256 against it *before* opening it, opens it with
``allow_pickle=False`` (an object array cannot be materialised: NumPy refuses to
unpickle it), and insists that the arrays are exactly the ones listed, with the
listed numeric dtypes and shapes. Any failure is a :class:`ModelFileError` naming
the file. No pickle, no joblib: the estimators are rebuilt from the arrays by
:mod:`knights.learn.learners`.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from knights.data.cache import file_checksum

FORMAT = "knights-arrays"
FORMAT_VERSION = 1
ALLOWED_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64")


class ModelFileError(ValueError):
    """A shipped model file (a learner's arrays here, a network's weights in :mod:`knights.learn.modelfile`) that is
    missing, altered or not in the expected format."""


def sha256_file(path: str | Path) -> str:
    return file_checksum(path, "sha256")


def sidecar_path(path: str | Path) -> Path:
    """``x.json`` for ``x``, ``x.npz`` or ``x.json``."""
    p = Path(path)
    return p.with_suffix(".json") if p.suffix in (".npz", ".json") else p.with_name(p.name + ".json")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_arrays(path: str | Path, kind: str, arrays: dict[str, np.ndarray], meta: dict[str, Any] | None = None) -> Path:
    """Write ``arrays`` to ``<path>.npz`` and the sidecar ``<path>.json``; returns the sidecar.

    Only plain numeric arrays are accepted (dtypes :data:`ALLOWED_DTYPES`)."""
    side = sidecar_path(path)
    npz = side.with_suffix(".npz")
    npz.parent.mkdir(parents=True, exist_ok=True)
    spec = {}
    clean = {}
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        if arr.dtype.name not in ALLOWED_DTYPES:
            raise TypeError(f"{name}: dtype {arr.dtype} cannot be shipped (allowed: {', '.join(ALLOWED_DTYPES)})")
        clean[name] = arr
        spec[name] = {"dtype": arr.dtype.name, "shape": list(arr.shape)}
    buf = io.BytesIO()
    np.savez_compressed(buf, **clean)  # type: ignore[arg-type]  # numpy's stub: **arrays could name allow_pickle
    _atomic_write(npz, buf.getvalue())
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "kind": kind, "file": npz.name,
           "sha256": sha256_file(npz), "bytes": npz.stat().st_size, "arrays": spec, "meta": meta or {}}
    _atomic_write(side, (json.dumps(doc, indent=1) + "\n").encode())
    return side


def read_sidecar(path: str | Path) -> dict[str, Any]:
    side = sidecar_path(path)
    if not side.is_file():
        raise ModelFileError(f"{side}: model sidecar not found")
    try:
        doc = json.loads(side.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{side}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelFileError(f"{side}: not a {FORMAT} sidecar")
    if doc.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(f"{side}: format version {doc.get('format_version')!r}, expected {FORMAT_VERSION}")
    for key in ("kind", "file", "sha256", "arrays"):
        if key not in doc:
            raise ModelFileError(f"{side}: sidecar lacks {key!r}")
    name = doc["file"]
    if not isinstance(name, str) or Path(name).name != name or not name.endswith(".npz"):
        raise ModelFileError(f"{side}: bad array file name {name!r} (a bare .npz name beside the sidecar)")
    if not isinstance(doc["arrays"], dict):
        raise ModelFileError(f"{side}: 'arrays' must be an object")
    return doc


def load_arrays(path: str | Path, kind: str | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and the sidecar of a shipped model, every check passed.

    ``path``: the sidecar, the ``.npz`` or their common stem. ``kind``: the kind the
    caller expects (``"forest"``, ...), checked against the sidecar."""
    side = sidecar_path(path)
    doc = read_sidecar(side)
    if kind is not None and doc["kind"] != kind:
        raise ModelFileError(f"{side}: holds a {doc['kind']!r} model, expected {kind!r}")
    npz = side.with_name(doc["file"])
    if not npz.is_file():
        raise ModelFileError(f"{npz}: model array file not found (named by {side.name})")
    digest = sha256_file(npz)
    if digest != doc["sha256"]:
        raise ModelFileError(f"{npz}: checksum mismatch (SHA-256 {digest[:12]}..., "
                             f"{side.name} records {str(doc['sha256'])[:12]}...): the file was altered")
    arrays: dict[str, np.ndarray] = {}
    try:
        with np.load(npz, allow_pickle=False) as data:
            names = set(data.files)
            expected = set(doc["arrays"])
            if names != expected:
                raise ModelFileError(f"{npz}: holds arrays {sorted(names)}, {side.name} lists {sorted(expected)}")
            for name in sorted(names):
                arr = data[name]
                if not isinstance(arr, np.ndarray):
                    raise ModelFileError(f"{npz}: member {name!r} is not an array")
                arrays[name] = arr
    except ModelFileError:
        raise
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ModelFileError(f"{npz}: cannot be read as plain arrays ({str(exc).splitlines()[0]})") from None
    for name, arr in arrays.items():
        want = doc["arrays"][name]
        if arr.dtype.name not in ALLOWED_DTYPES or arr.dtype.hasobject:
            raise ModelFileError(f"{npz}: array {name!r} has dtype {arr.dtype}, not a plain number type")
        if not isinstance(want, dict) or arr.dtype.name != want.get("dtype"):
            raise ModelFileError(f"{npz}: array {name!r} has dtype {arr.dtype}, "
                                 f"{side.name} says {want.get('dtype') if isinstance(want, dict) else want!r}")
        if list(arr.shape) != want.get("shape"):
            raise ModelFileError(f"{npz}: array {name!r} has shape {list(arr.shape)}, "
                                 f"{side.name} says {want.get('shape')}")
    return arrays, doc


def expect(cond: bool, path: str | Path, message: str) -> None:
    """Raise :class:`ModelFileError` naming ``path`` unless ``cond``."""
    if not cond:
        raise ModelFileError(f"{path}: {message}")
