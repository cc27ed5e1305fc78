"""Features a tree can use: material, mobility, king safety, pawn structure and what hangs, for a batch at once.

The classical learners of the original read the board as 384 +-1 plane entries and ten piece counts
(:mod:`knights.learn.learners.inputs`); a tree splits one number at a time, and no single plane entry says much.
These are the numbers a chess player would name, each one column, computed with NumPy over the signed squares
(``(N, 64)`` int8, a8 = 0 ... h1 = 63, White positive; :mod:`knights.board.arrays`) and the attack maps of
:mod:`knights.features.attacks` (pseudo-legal, no x-rays), no python-chess board built:

* **material**: each side's count of every piece kind, the balance (P=1 N=3 B=3 R=5 Q=9), the pieces' material
  beside the pawns (the game's phase), the bishop pair;
* **whose move**: the side to move, whether it is in check, the castling rights;
* **mobility**: the squares each side attacks (not holding its own pieces) by knights, bishops, rooks and queens,
  every square it attacks, in the other half and in the centre;
* **threats**: the material each side has attacked and undefended, or attacked by a cheaper piece, the best
  one-capture gain of each side (:func:`~knights.features.attacks.capture_gains`) and the side to move's legal one
  (:func:`~knights.features.attacks.legal_capture_gains`, signed for White);
* **king safety**: for each king, the attacks on the squares around it, its defenders there, its pawn shield, the
  open files beside it, how far it stands from home, and the other side's queen on the board;
* **pawn structure**: doubled, isolated and passed pawns, the most advanced passed pawn and how far the pawns
  stand, the pawn islands;
* **placement**: knights' and bishops' distance from the centre, rooks on open and half-open files and on the
  seventh rank.

Each side's figure is its own column (White's, then Black's), and the main ones also as White's minus Black's, so
a tree splits on a difference at once. :data:`FEATURE_NAMES` names every column.

>>> from knights.board.arrays import parse_fens
>>> sq, white, _ = parse_fens(["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"])
>>> X = positional_features(sq, white, np.zeros(1, np.int8), np.full(1, 15, np.int8))
>>> X.shape == (1, len(FEATURE_NAMES)), float(X[0, FEATURE_NAMES.index("material balance")])
(True, 0.0)
>>> [float(X[0, FEATURE_NAMES.index(n)]) for n in ("white pawns advanced", "black pawns advanced")]
[2.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from knights.board.arrays import bitboards
from knights.board.pieces import PAWN_VALUES
from knights.features import attacks as A

_ROW = np.arange(64) // 8           # 0 = rank 8
_FILE = np.arange(64) % 8
_CHEB = np.maximum(np.abs(_ROW[:, None] - _ROW[None, :]), np.abs(_FILE[:, None] - _FILE[None, :]))
_ZONE = (_CHEB <= 1)                 # (king square, square): the king's square and its neighbours
# pawn shield: the three files around the king, one and two ranks ahead of it (White's ahead: the rows above)
_AHEAD = _ROW[:, None] - _ROW[None, :]            # (king square, square): rows from the square up to the king
_NEAR_FILE = np.abs(_FILE[:, None] - _FILE[None, :]) <= 1
_SHIELD = np.stack([_NEAR_FILE & (_AHEAD >= 1) & (_AHEAD <= 2), _NEAR_FILE & (-_AHEAD >= 1) & (-_AHEAD <= 2)])
_CENTRE_DISTANCE = np.maximum(np.abs(_ROW - 3.5), np.abs(_FILE - 3.5)) - 0.5     # 0 in the centre ... 3 in a corner
_CENTRE4 = _CENTRE_DISTANCE == 0
_CENTRE16 = _CENTRE_DISTANCE <= 1
_HALF = np.stack([_ROW <= 3, _ROW >= 4])       # the other side's half: for White rows 0-3 (ranks 5-8)
_SEVENTH = np.stack([_ROW == 1, _ROW == 6])    # the seventh rank, each side's
_HOME_ROW = np.array([7, 0])
_KINDS = ("pawns", "knights", "bishops", "rooks", "queens")
_SIDES = ("white", "black")


def _names() -> list[str]:
    names = [f"{s} {k}" for s in _SIDES for k in _KINDS]
    names += ["material balance", "white pieces material", "black pieces material", "men",
              "white bishop pair", "black bishop pair", "white to move", "in check",
              "white can castle short", "white can castle long", "black can castle short", "black can castle long"]
    for what in ("knight mobility", "bishop mobility", "rook mobility", "queen mobility", "squares attacked",
                 "attacks", "attacks in the other half", "centre attacks", "centre16 attacks",
                 "hanging material", "hanging pieces", "material attacked by cheaper", "best capture gain",
                 "king zone attacked", "king zone attacks", "king zone defenders", "pawn shield",
                 "open files by king", "king distance from home", "king file centrality", "enemy queen on board",
                 "doubled pawns", "isolated pawns", "passed pawns", "best passed pawn rank", "passed pawn ranks",
                 "pawns advanced", "pawn islands", "knight centre distance", "bishop centre distance",
                 "rooks on open files", "rooks on half-open files", "rooks on seventh"):
        names += [f"{s} {what}" for s in _SIDES]
    names += ["mover legal capture gain (white)"]
    names += [f"{what} difference" for what in ("mobility", "squares attacked", "hanging material", "king zone attacks",
                                                 "pawn shield", "passed pawns", "best passed pawn rank",
                                                 "pawns advanced", "isolated pawns", "doubled pawns")]
    return names


FEATURE_NAMES: list[str] = _names()
"""The name of every column of :func:`positional_features`, in order."""
N_POSITIONAL = len(FEATURE_NAMES)


def _count(mask: np.ndarray) -> np.ndarray:
    return np.asarray(mask.sum(axis=-1, dtype=np.int16), dtype=np.float32)


def _mobility(squares: np.ndarray) -> np.ndarray:
    """(N, 2, 4): the squares each side's knights, bishops, rooks and queens attack that its own pieces do not
    hold, counted once per attacking direction (every column of the attack rays, :mod:`knights.features.attacks`)."""
    pieces = bitboards(squares)
    sets = A._attack_sets(pieces)                     # (J, N): one ray family per column
    own = np.stack([pieces[:, 6], pieces[:, 7]])      # (2, N) White's, Black's men
    out = np.zeros((len(squares), 2, 4), np.float32)
    for colour in (0, 1):
        free = sets & ~own[colour][None, :]
        for j, code in enumerate((2, 3, 4, 5)):
            cols = (colour == A._COLOUR) & (code == A._CODE)
            out[:, colour, j] = np.bitwise_count(free[cols]).sum(axis=0, dtype=np.int32)
    return out


def positional_features(squares: np.ndarray, white: np.ndarray, check: np.ndarray,
                        castling: np.ndarray, block: int = 100_000) -> np.ndarray:
    """``(N, N_POSITIONAL)`` float32: the features of the module docstring, one row a position (``block`` rows at
    a time: the attack maps take a few kilobytes a row)."""
    sq = np.ascontiguousarray(np.asarray(squares, dtype=np.int8).reshape(-1, 64))
    n = len(sq)
    if n > block:
        return np.concatenate([positional_features(sq[i:i + block], np.asarray(white)[i:i + block],
                                                   np.asarray(check)[i:i + block], np.asarray(castling)[i:i + block],
                                                   block) for i in range(0, n, block)])
    white = np.asarray(white).reshape(-1).astype(np.float32)
    check = np.asarray(check).reshape(-1).astype(np.float32)
    castling = np.asarray(castling).reshape(-1).astype(np.int64)
    kind = np.abs(sq)
    mine = np.stack([sq > 0, sq < 0], axis=1)                            # (N, 2, 64)
    cols: list[np.ndarray] = []

    # material
    counts = np.stack([_count(mine[:, c] & (kind == k)) for c in (0, 1) for k in range(1, 6)], axis=1)
    cols.append(counts)
    value = PAWN_VALUES[kind]
    pieces_material = np.stack([(value * (mine[:, c] & (kind >= 2))).sum(axis=1) for c in (0, 1)], axis=1)
    balance = (np.sign(sq) * value).sum(axis=1)
    bishops = counts[:, [2, 7]]
    cols += [balance[:, None], pieces_material, _count(sq != 0)[:, None], (bishops >= 2).astype(np.float32),
             white[:, None], check[:, None], np.stack([(castling >> b) & 1 for b in range(4)], axis=1)]

    # mobility and threats
    maps_counts, cheapest = A.attack_maps(sq)                           # (N, 2, 64) each
    mobility = _mobility(sq)                                            # (N, 2, 4)
    attacked = maps_counts > 0
    not_own = ~mine
    per_side: dict[str, np.ndarray] = {}
    per_side["knight mobility"], per_side["bishop mobility"] = mobility[:, :, 0], mobility[:, :, 1]
    per_side["rook mobility"], per_side["queen mobility"] = mobility[:, :, 2], mobility[:, :, 3]
    per_side["squares attacked"] = _count(attacked & not_own)
    per_side["attacks"] = maps_counts.sum(axis=2, dtype=np.int16).astype(np.float32)
    per_side["attacks in the other half"] = _count(attacked & _HALF[None])
    per_side["centre attacks"] = _count(attacked & _CENTRE4)
    per_side["centre16 attacks"] = _count(attacked & _CENTRE16)
    enemy_attacks = attacked[:, ::-1]                                   # [:, c]: the other side's attacks on squares
    own_defence = attacked
    exposed = mine & enemy_attacks & ~own_defence & (kind != 6)[:, None]
    per_side["hanging material"] = (exposed * value[:, None]).sum(axis=2)
    per_side["hanging pieces"] = _count(exposed)
    cheaper = mine & enemy_attacks & (cheapest[:, ::-1] < value[:, None]) & (kind != 6)[:, None]
    per_side["material attacked by cheaper"] = (cheaper * value[:, None]).sum(axis=2)
    per_side["best capture gain"] = A.capture_gains(sq, (maps_counts, cheapest))

    # king safety
    kings = np.stack([np.argmax(sq == 6, axis=1), np.argmax(sq == -6, axis=1)], axis=1)   # (N, 2)
    zone = _ZONE[kings]                                                 # (N, 2, 64)
    per_side["king zone attacked"] = _count(zone & enemy_attacks)
    per_side["king zone attacks"] = (zone * maps_counts[:, ::-1]).sum(axis=2, dtype=np.int16).astype(np.float32)
    per_side["king zone defenders"] = (zone * maps_counts).sum(axis=2, dtype=np.int16).astype(np.float32)
    pawns = np.stack([sq == 1, sq == -1], axis=1)                        # (N, 2, 64)
    shield = np.stack([_SHIELD[c][kings[:, c]] for c in (0, 1)], axis=1)
    per_side["pawn shield"] = _count(shield & pawns)
    file_pawns = pawns.reshape(n, 2, 8, 8).sum(axis=2)                   # (N, 2, files)
    king_file = kings % 8
    near = np.abs(np.arange(8)[None, None, :] - king_file[:, :, None]) <= 1
    per_side["open files by king"] = _count(near & (file_pawns == 0))
    per_side["king distance from home"] = np.abs(kings // 8 - _HOME_ROW[None, :]).astype(np.float32)
    per_side["king file centrality"] = (3.5 - np.abs(king_file - 3.5)).astype(np.float32)
    queens = counts[:, [4, 9]]
    per_side["enemy queen on board"] = (queens[:, ::-1] > 0).astype(np.float32)

    # pawn structure
    per_side["doubled pawns"] = np.maximum(file_pawns - 1, 0).sum(axis=2).astype(np.float32)
    has = file_pawns > 0
    left = np.concatenate([np.zeros((n, 2, 1), bool), has[:, :, :-1]], axis=2)
    right = np.concatenate([has[:, :, 1:], np.zeros((n, 2, 1), bool)], axis=2)
    per_side["isolated pawns"] = (file_pawns * (~left & ~right)).sum(axis=2).astype(np.float32)
    rows = np.broadcast_to(_ROW, (n, 64))
    # the most advanced enemy pawn ahead on each file: for White's pawns, Black's pawns with a smaller row
    big = 99
    wrow = np.where(pawns[:, 0], rows, -1).reshape(n, 8, 8).max(axis=1)     # White's pawn nearest rank 1 (largest row)
    brow = np.where(pawns[:, 1], rows, big).reshape(n, 8, 8).min(axis=1)    # Black's pawn nearest rank 8
    def spread(a: np.ndarray, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], fill: int) -> np.ndarray:
        pad = np.full((n, 1), fill)
        return np.asarray(fn(fn(a, np.concatenate([pad, a[:, :-1]], axis=1)), np.concatenate([a[:, 1:], pad], axis=1)))
    black_front = spread(brow, np.minimum, big)     # per file: the smallest row of a Black pawn on it or beside it
    white_back = spread(wrow, np.maximum, -1)       # per file: the largest row of a White pawn on it or beside it
    passed_w = pawns[:, 0] & (rows <= black_front[:, _FILE])       # no Black pawn ahead (smaller row) near it
    passed_b = pawns[:, 1] & (rows >= white_back[:, _FILE])
    rank_w, rank_b = (8 - rows), (rows + 1)         # each side's relative rank (2 .. 7)
    per_side["passed pawns"] = np.stack([_count(passed_w), _count(passed_b)], axis=1)
    per_side["best passed pawn rank"] = np.stack([np.where(passed_w, rank_w, 0).max(axis=1),
                                                  np.where(passed_b, rank_b, 0).max(axis=1)], axis=1).astype(np.float32)
    per_side["passed pawn ranks"] = np.stack([np.where(passed_w, rank_w - 1, 0).sum(axis=1),
                                              np.where(passed_b, rank_b - 1, 0).sum(axis=1)], axis=1).astype(np.float32)
    per_side["pawns advanced"] = np.stack([np.where(pawns[:, 0], rank_w - 2, 0).sum(axis=1),
                                           np.where(pawns[:, 1], rank_b - 2, 0).sum(axis=1)], axis=1).astype(np.float32)
    starts = has & ~left
    per_side["pawn islands"] = _count(starts)

    # placement
    per_side["knight centre distance"] = ((mine & (kind == 2)[:, None]) * _CENTRE_DISTANCE).sum(axis=2)
    per_side["bishop centre distance"] = ((mine & (kind == 3)[:, None]) * _CENTRE_DISTANCE).sum(axis=2)
    rooks = mine & (kind == 4)[:, None]
    any_pawn = file_pawns.sum(axis=1)                                    # (N, files) pawns of either side
    open_file = (any_pawn == 0)[:, _FILE]                                # (N, 64)
    half_open = (file_pawns == 0)[:, :, _FILE] & ~open_file[:, None]     # no own pawn, an enemy one
    per_side["rooks on open files"] = _count(rooks & open_file[:, None])
    per_side["rooks on half-open files"] = _count(rooks & half_open)
    per_side["rooks on seventh"] = _count(rooks & _SEVENTH[None])

    for name in FEATURE_NAMES:
        if name.startswith("white ") and name[6:] in per_side:
            cols.append(per_side[name[6:]].astype(np.float32))
    gain = A.legal_capture_gains(sq, white.astype(np.int8))
    cols.append((np.where(white > 0, gain, -gain))[:, None])
    mob = mobility.sum(axis=2)
    for a in (mob, per_side["squares attacked"], per_side["hanging material"], per_side["king zone attacks"],
              per_side["pawn shield"], per_side["passed pawns"], per_side["best passed pawn rank"],
              per_side["pawns advanced"], per_side["isolated pawns"], per_side["doubled pawns"]):
        cols.append((a[:, 0] - a[:, 1])[:, None])
    out = np.concatenate([np.asarray(c, dtype=np.float32).reshape(n, -1) for c in cols], axis=1)
    if out.shape[1] != N_POSITIONAL:
        raise AssertionError(f"{out.shape[1]} feature columns for {N_POSITIONAL} names")
    return out
