"""Statistics of a folder of CSSLab chunk files: what the networks learn from.

Independent of ``knights`` (stdlib ``csv`` + NumPy) so that the report builds without
torch. Targets follow the project's rule: ``cp`` is in pawns from White's side, a
forced mate (``#n`` / ``#-n``) is +-10 by its sign, everything else is clipped to +-9.
Rows whose ``cp`` does not parse are counted as malformed and left out.
"""

from __future__ import annotations

import csv
import math
import string
from collections import Counter
from pathlib import Path

import numpy as np

MATE, CLIP = 10.0, 9.0
LENGTH_EDGES = list(range(0, 310, 10))                  # positions per game


def target(text: str, mate: float = MATE, clip: float = CLIP) -> float | None:
    text = text.strip()
    if not text:
        return None
    if text[0] == "#":
        body = text[1:]
        if not body.lstrip("+-").isdigit():
            return None
        return -mate if body.startswith("-") else mate
    try:
        value = float(text)
    except ValueError:
        return None
    return max(-clip, min(clip, value)) if math.isfinite(value) else None


def chunk_files(folder: Path) -> list[Path]:
    """Chunk files: the folder's files that end in letters (``Chess_Gen_aa``, ``Sample_a``)."""
    return sorted(p for p in Path(folder).iterdir()
                  if p.is_file() and not p.name.startswith(".") and p.name[-1] in string.ascii_lowercase
                  and "." not in p.name)


def mover_kind(player: str) -> str:
    """``stockfish-eps0.20`` -> ``stockfish eps 0.20``; other names as they are."""
    return player.replace("stockfish-eps", "stockfish eps ") if player.startswith("stockfish-eps") else player


def compute(folder: str | Path, mate: float = MATE, clip: float = CLIP) -> dict:
    """Statistics of every chunk file in ``folder`` (mates at +-``mate``, the rest
    clipped to +-``clip``: pass the project's constants)."""
    folder = Path(folder)
    files = chunk_files(folder)
    if not files:
        raise FileNotFoundError(f"no chunk files in {folder}")
    stem = min(len(f.name.rstrip(string.ascii_lowercase)) for f in files)
    letters = Counter(f.name[stem] for f in files)
    targets: list[float] = []
    per_game: Counter = Counter()
    movers: Counter = Counter()
    terminations: Counter = Counter()
    results: Counter = Counter()
    white = malformed = 0
    for f in files:
        with open(f, newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                continue
            col = {name: i for i, name in enumerate(header)}
            need = ("game_id", "cp", "white_active", "white_player", "black_player", "termination", "result")
            if any(n not in col for n in need):
                raise ValueError(f"{f}: not a CSSLab chunk (missing {[n for n in need if n not in col]})")
            g, c, w, wp, bp, te, re_ = (col[n] for n in need)
            width = len(header)
            for row in reader:
                if len(row) != width:
                    malformed += 1
                    continue
                t = target(row[c], mate, clip)
                if t is None:
                    malformed += 1
                    continue
                targets.append(t)
                game = row[g]
                if game not in per_game:
                    terminations[row[te]] += 1
                    results[row[re_]] += 1
                per_game[game] += 1
                is_white = row[w] == "True"
                white += is_white
                movers[mover_kind(row[wp] if is_white else row[bp])] += 1
    y = np.asarray(targets, dtype=np.float64)
    n = len(y)
    mates = np.abs(y) == mate
    plain = y[~mates]
    lengths = np.asarray(list(per_game.values()), dtype=np.float64)
    edges = [x / 2 for x in range(-int(2 * clip), int(2 * clip) + 1)]
    hist, _ = np.histogram(plain, bins=edges)
    lhist, _ = np.histogram(np.minimum(lengths, LENGTH_EDGES[-1] - 1), bins=LENGTH_EDGES)
    return {
        "folder": str(folder),
        "files": len(files),
        "letters": dict(sorted(letters.items())),
        "rows": n,
        "malformed": malformed,
        "games": len(per_game),
        "positions_per_game": {"mean": float(lengths.mean()), "median": float(np.median(lengths)),
                               "min": int(lengths.min()), "max": int(lengths.max())},
        "mate_share": float(mates.mean()),
        "mate": mate,
        "clip": clip,
        "mates_white": int((y == mate).sum()),
        "mates_black": int((y == -mate).sum()),
        "clipped_share": float((np.abs(plain) == clip).mean()) if len(plain) else 0.0,
        "mean_abs": float(np.abs(plain).mean()) if len(plain) else 0.0,
        "median_abs": float(np.median(np.abs(plain))) if len(plain) else 0.0,
        "within_one_pawn_share": float((np.abs(plain) <= 1).sum() / n),
        "white_to_move_share": white / n,
        "eval_hist": {"edges": edges, "counts": hist.tolist()},
        "length_hist": {"edges": LENGTH_EDGES, "counts": lhist.tolist()},
        "movers": dict(movers.most_common()),
        "terminations": dict(terminations.most_common()),
        "results": dict(results.most_common()),
    }
