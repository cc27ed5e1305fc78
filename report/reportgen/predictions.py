"""The best network's own evaluations of the independent test sets, position by position.

``independent.json`` holds only summaries (MAE by set and bucket). Two things in the
report need every position: the predicted-against-Stockfish figure and the example
positions. They are computed here, in the build, from what the repository holds
(``data/independent/*.csv`` and the network's weights in ``models_EL/``), through the
``knights`` library, the same code that measured the summaries; :func:`compute` checks
that its MAE equals the one ``independent.json`` recorded.

This is the one module of the report that imports ``knights`` (and so ``torch``), and
only inside :func:`compute`: without them, or without the files, the figures become
placeholders saying so. The answer is cached under the build's output folder, keyed by
the bytes of the weights and of the sets, so a rebuild does not pay for it again.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import numpy as np

MATE_LIMIT = 9.0
"""Targets at or beyond this many pawns are forced mates (+-10) or clipped (+-9):
left out when choosing example positions, whose point is the size of an error."""

CLOSE = 0.5
"""Pawns within which the network counts as right, for the first example."""

_MEMORY: dict[str, dict] = {}


class Unavailable(Exception):
    """What the computation needs is not here (files, library); the message says what."""


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _fens(path: Path) -> list[str]:
    """The FEN of every row of a CSSLab file (its ``board`` column)."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or "board" not in reader.fieldnames:
            return []
        return [row["board"] for row in reader]


def compute(root: Path, models_dir: Path, network: str, cache_dir: Path | None = None) -> dict:
    """``{"network": name, "sets": [{"name", "target", "network", "material", "fens"}]}``:
    Stockfish's label, the network's and counting material's evaluations (pawns, White's
    side) of every position of every independent set. Raises :class:`Unavailable`."""
    folder = Path(root) / "data" / "independent"
    csvs = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    number = network.removeprefix("EL/v")
    weights = Path(models_dir) / f"v{number}.pt"
    if not csvs:
        raise Unavailable("no independent sets in data/independent")
    if not weights.is_file():
        raise Unavailable(f"no weights for {network} ({weights.name})")
    key = _digest([weights, *csvs])
    if key in _MEMORY:
        return _MEMORY[key]
    cache = Path(cache_dir) / f"predictions-{key}.npz" if cache_dir else None
    if cache and cache.is_file():
        result = _load(cache, network)
    else:
        result = _evaluate(folder, Path(models_dir), network)
        if cache:
            cache.parent.mkdir(parents=True, exist_ok=True)
            for stale in cache.parent.glob("predictions-*.npz"):  # other weights or sets: never read again
                stale.unlink()
            _save(cache, result)
    _MEMORY[key] = result
    return result


def _evaluate(folder: Path, models_dir: Path, network: str) -> dict:
    try:
        from knights.evaluate.base import MaterialEvaluator, network_evaluator
        from knights.evaluate.independent_results import evaluate_in_blocks, load_set, set_files
    except ImportError as exc:  # the report's scripts run without the library too
        raise Unavailable(f"the knights library is not importable ({exc})") from exc
    try:
        net = network_evaluator(network, models_dir)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise Unavailable(f"{network} does not load: {str(exc).splitlines()[0][:100]}") from exc
    material = MaterialEvaluator()
    sets = []
    for path in set_files(folder):
        data, _ = load_set(path, notice=lambda _text: None)
        fens = _fens(path)
        sets.append({"name": path.stem, "target": np.asarray(data.target, dtype=np.float32),
                     "network": evaluate_in_blocks(net, data).astype(np.float32),
                     "material": np.asarray(material.evaluate(data), dtype=np.float32),
                     "fens": fens if len(fens) == len(data) else []})  # rows skipped: no FEN alignment
    return {"network": network, "sets": sets}


def _save(path: Path, result: dict) -> None:
    arrays = {}
    for i, st in enumerate(result["sets"]):
        arrays[f"name_{i}"] = np.array(st["name"])
        for k in ("target", "network", "material"):
            arrays[f"{k}_{i}"] = st[k]
        arrays[f"fens_{i}"] = np.array(st["fens"], dtype=str)
    np.savez_compressed(path, **arrays)


def _load(path: Path, network: str) -> dict:
    with np.load(path, allow_pickle=False) as z:
        count = sum(1 for k in z.files if k.startswith("name_"))
        sets = [{"name": str(z[f"name_{i}"]), **{k: z[f"{k}_{i}"] for k in ("target", "network", "material")},
                 "fens": [str(f) for f in z[f"fens_{i}"]]} for i in range(count)]
    return {"network": network, "sets": sets}


def mae(st: dict) -> float:
    return float(np.abs(st["network"].astype(np.float64) - st["target"]).mean())


LARGE = 6.0
"""Pawns from which an advantage counts as large (the last |eval| bucket of the results)."""


def _large(result: dict) -> tuple[np.ndarray, np.ndarray]:
    t = np.concatenate([st["target"] for st in result["sets"]]).astype(np.float64)
    y = np.concatenate([st["network"] for st in result["sets"]]).astype(np.float64)
    keep = (np.abs(t) >= LARGE) & (np.abs(t) < MATE_LIMIT)
    return t[keep], y[keep]


def shrink(result: dict) -> float | None:
    """How much closer to zero than Stockfish the network puts large advantages: the
    mean of ``|target| - sign(target) * prediction`` over the positions with
    ``LARGE <= |target| < MATE_LIMIT`` on all sets (positive: towards zero)."""
    t, y = _large(result)
    return float(np.mean(np.abs(t) - np.sign(t) * y)) if len(t) else None


def shrink_rows(result: dict) -> int:
    return len(_large(result)[0])


# -- example positions ----------------------------------------------------------------------
def examples(result: dict) -> list[dict]:
    """Four positions chosen by rule, not by hand, each ``{set, why, fen, target,
    network, material}``:

    * from ``games``, among the positions the network gets within :data:`CLOSE` of
      Stockfish, the one counting material gets furthest wrong;
    * from ``games``, the position of median error (a typical one);
    * from ``tactics`` and from ``endgames``, the network's largest error.

    Forced mates and clipped labels (\\|target\\| >= 9) are left out: their error says
    more about the clip than about the network. A set without FENs gives no example."""
    by_name = {st["name"]: st for st in result["sets"] if st["fens"]}
    out: list[dict] = []

    def pick(name: str, why: str, score) -> None:
        st = by_name.get(name)
        if st is None:
            return
        target = st["target"].astype(np.float64)
        ok = np.flatnonzero(np.abs(target) < MATE_LIMIT)
        if not len(ok):
            return
        i = int(ok[score(st, ok)])
        out.append({"set": name, "why": why, "fen": st["fens"][i], "target": float(target[i]),
                    "network": float(st["network"][i]), "material": float(st["material"][i])})

    def err(st, ok):
        return np.abs(st["network"][ok].astype(np.float64) - st["target"][ok])

    def material_off_network_close(st, ok):
        close = err(st, ok) <= CLOSE
        off = np.abs(st["material"][ok].astype(np.float64) - st["target"][ok])
        return int(np.argmax(np.where(close, off, -np.inf))) if close.any() else int(np.argmin(err(st, ok)))

    pick("games", "network close, material far off", material_off_network_close)
    pick("games", "a typical error (the median)",
         lambda st, ok: int(np.argsort(err(st, ok), kind="stable")[len(ok) // 2]))
    pick("tactics", "the network's largest error", lambda st, ok: int(np.argmax(err(st, ok))))
    pick("endgames", "the network's largest error", lambda st, ok: int(np.argmax(err(st, ok))))
    return out
