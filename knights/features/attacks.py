"""Who attacks which square, for a whole batch of positions at once (NumPy, no Board).

A one-ply engine asks its evaluator about positions where the *opponent* is to
move, so the evaluator has to see what hangs. The piece planes alone make a network
discover attack geometry from scratch; these maps hand it over directly:

* :func:`attack_maps` -- for every square and each colour, how many pieces attack it
  and the value of the cheapest one (pseudo-legal: pins and checks are ignored,
  and a slider's ray stops at the first piece it meets, so no x-rays);
* :func:`capture_gains` -- for each colour, the best one-capture gain in pawns,
  ``value(victim) - (value(cheapest attacker) if the victim is defended else 0)``,
  the same one-step exchange as :mod:`knights.evaluate.threats`, but vectorised.

Squares follow :mod:`knights.board.arrays`: index 0 = a8 ... 63 = h1, row 0 is rank 8, so
White's pawns advance towards row 0.

>>> import numpy as np
>>> from knights.board.arrays import parse_fens
>>> sq, _, _ = parse_fens(["4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1"])   # pawns attack each other
>>> counts, cheapest = attack_maps(sq)
>>> int(counts[0, 0, 27]), int(cheapest[0, 1, 36])                  # d5 by White, e4 by Black
(1, 1)
>>> capture_gains(sq).tolist()                                     # both pawns hang
[[1.0, 1.0]]
"""

from __future__ import annotations

import numpy as np

from knights.board.arrays import bitboards

ATTACKER_VALUE = np.array([0, 1, 3, 3, 5, 9, 12], dtype=np.int8)
"""Value of an attacking piece by code (P N B R Q K); the king counts 12, since it
can only take an undefended piece."""
VICTIM_VALUE = np.array([0, 1, 3, 3, 5, 9, 0], dtype=np.float32)
"""Value of a captured piece by code; the king cannot be captured."""

# Inside, positions are python-chess style bitboards (bit 0 = a1, bit 63 = h8), one
# uint64 per position per set. Every (colour, piece, direction) is one column of an
# (N, J) array, so each shift moves all of them for a whole batch in one NumPy call.
_FILES = [sum(1 << (8 * r + f) for r in range(8)) for f in range(8)]
_KNIGHT = [(2, 1), (2, -1), (1, 2), (1, -2), (-1, 2), (-1, -2), (-2, 1), (-2, -1)]
_KING = [(1, -1), (1, 0), (1, 1), (0, -1), (0, 1), (-1, -1), (-1, 0), (-1, 1)]
_DIAGONAL = [(1, 1), (1, -1), (-1, 1), (-1, -1)]
_STRAIGHT = [(1, 0), (-1, 0), (0, 1), (0, -1)]
_VALUES = np.array([1, 3, 5, 9, 12], np.int8)   # attacker values, cheapest first


def _rays() -> list[tuple[int, int, int, int, bool]]:
    """(colour, piece code, ranks, files, slides) of every column. Within one column no
    square is attacked twice (one king; per direction only the nearest slider reaches a
    square), so a square's attacker count is the number of columns holding it."""
    rays = []
    for colour, forward in ((0, 1), (1, -1)):
        rays += [(colour, 1, forward, df, False) for df in (-1, 1)]
        rays += [(colour, 2, dr, df, False) for dr, df in _KNIGHT]
        rays += [(colour, 6, dr, df, False) for dr, df in _KING]
        rays += [(colour, code, dr, df, True) for code in (3, 4, 5)
                 for dr, df in (_DIAGONAL if code == 3 else _STRAIGHT if code == 4 else _DIAGONAL + _STRAIGHT)]
    return rays


_RAYS = sorted(_rays(), key=lambda r: not r[4])   # sliders first
_COLOUR = np.array([r[0] for r in _RAYS])
_SOURCE = np.array([r[0] * 6 + r[1] - 1 for r in _RAYS])            # column of the (N, 12) own-piece sets
_VALUE = ATTACKER_VALUE[[r[1] for r in _RAYS]]
_SLIDES = np.array([r[4] for r in _RAYS])
_AMOUNT = np.array([8 * r[2] + r[3] for r in _RAYS])
_LEFT = np.maximum(_AMOUNT, 0).astype(np.uint64)
_RIGHT = np.maximum(-_AMOUNT, 0).astype(np.uint64)
# what wraps round to the other edge when moving `files` sideways is dropped
_KEEP = np.array([~sum(_FILES[f] for f in range(8) if (r[3] > 0 and f < r[3]) or (r[3] < 0 and f >= 8 + r[3]))
                  & (2**64 - 1) for r in _RAYS], dtype=np.uint64)


def _shift(bb: np.ndarray, rays: np.ndarray | slice = slice(None)) -> np.ndarray:
    """Each ray's bits (a row of ``bb``) moved one step in its direction; bits leaving the board vanish."""
    return (bb << _LEFT[rays, None]) >> _RIGHT[rays, None] & _KEEP[rays, None]


def _attack_sets(pieces: np.ndarray) -> np.ndarray:
    """(J, N) uint64: the squares each ray's pieces attack (J = :data:`_RAYS`).
    ``pieces``: the (N, 8) output of :func:`knights.board.arrays.bitboards`."""
    p = np.ascontiguousarray(pieces.T)                                  # (8, N)
    own = (p[None, :6] & p[6:8, None]).reshape(12, -1)                  # (colour x kind, N)
    steps = _SLIDES.sum()
    sets = _shift(own[_SOURCE])
    empty = ~(p[6] | p[7])
    ray = sets[:steps]                                                  # the sliders come first
    seen = ray.copy()
    for _ in range(6):   # a ray goes on only through empty squares
        ray = _shift(ray & empty, slice(0, steps))
        seen |= ray
    sets[:steps] = seen
    return sets


def _unpack(bitboards: np.ndarray) -> np.ndarray:
    """(N, K) uint64 -> (N, K, 64) uint8 bits in our square order (a8 = 0). Ours is
    python-chess's order with the ranks reversed, which for a bitboard is a byte swap."""
    flipped = np.ascontiguousarray(bitboards, dtype="<u8").byteswap()
    return np.unpackbits(flipped.view(np.uint8).reshape(*bitboards.shape, 8), axis=-1, bitorder="little")


def attack_maps(squares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, cheapest)``, each int8 ``(N, 2, 64)`` with White at index 0, Black at 1:
    the number of pieces of that colour attacking each square, and the value of the
    cheapest of them (:data:`ATTACKER_VALUE`; 0 where none attacks)."""
    sets = _attack_sets(bitboards(squares))
    counts, cheapest = [], []
    for colour in (0, 1):
        mine = _COLOUR == colour
        counts.append(_unpack(sets[mine].T).sum(axis=1, dtype=np.int8))
        exclusive, covered = [], np.zeros(sets.shape[1], np.uint64)
        for value in _VALUES:
            merged = np.bitwise_or.reduce(sets[mine & (_VALUE == value)], axis=0)
            exclusive.append(merged & ~covered)                  # squares whose cheapest attacker has this value
            covered |= merged
        bits = _unpack(np.stack(exclusive, axis=1))               # (N, 5, 64), at most one bit per square
        cheapest.append((bits * _VALUES[None, :, None]).sum(axis=1, dtype=np.int8))
    return np.stack(counts, axis=1), np.stack(cheapest, axis=1)


def capture_gains(squares: np.ndarray, maps: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Best one-capture gain in pawns (>= 0) for White (column 0) and Black (column 1),
    whoever is to move: ``(N, 2)`` float32."""
    sq = np.asarray(squares, dtype=np.int8).reshape(-1, 64)
    counts, cheapest = maps if maps is not None else attack_maps(sq)
    victim = VICTIM_VALUE[np.abs(sq)]                       # (N, 64)
    gains = []
    for side, sign in ((0, 1), (1, -1)):
        theirs = (sq * sign) < 0                            # the other colour's pieces
        attacked = counts[:, side] > 0
        defended = counts[:, 1 - side] > 0
        gain = victim - np.where(defended, cheapest[:, side].astype(np.float32), 0.0)
        gains.append(np.where(theirs & attacked, np.maximum(gain, 0.0), 0.0).max(axis=1))
    return np.stack(gains, axis=1).astype(np.float32)
