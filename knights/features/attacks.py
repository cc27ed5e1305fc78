"""Who attacks which square, for a whole batch of positions at once (NumPy, no Board).

A one-ply engine asks its evaluator about positions where the *opponent* is to
move, so the evaluator has to see what hangs. The piece planes alone make a network
discover attack geometry from scratch; these maps hand it over directly:

* :func:`attack_maps` -- for every square and each colour, how many pieces attack it
  and the value of the cheapest one (pseudo-legal: pins and checks are ignored,
  and a slider's ray stops at the first piece it meets, so no x-rays);
* :func:`capture_gains` -- for each colour, the best one-capture gain in pawns,
  ``value(victim) - (value(cheapest attacker) if the victim is defended else 0)``,
  from those maps (EL/v10's input; pseudo-legal like them);
* :func:`legal_capture_gains` -- the same one-step exchange for the side to move
  only, over its *legal* captures, and "defended" meaning attacked after the capture
  (a defender x-raying through the capturer counts): the threat term of
  :mod:`knights.evaluate.threats`.

Squares follow :mod:`knights.board.arrays`: index 0 = a8 ... 63 = h1, row 0 is rank 8, so
White's pawns advance towards row 0. Piece values are :mod:`knights.board.pieces`'.

>>> import numpy as np
>>> from knights.board.arrays import parse_fens
>>> sq, _, _ = parse_fens(["4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1"])   # pawns attack each other
>>> counts, cheapest = attack_maps(sq)
>>> int(counts[0, 0, 27]), int(cheapest[0, 1, 36])                  # d5 by White, e4 by Black
(1, 1)
>>> capture_gains(sq).tolist()                                     # both pawns hang
[[1.0, 1.0]]
>>> sq, white, _ = parse_fens(["4k3/8/8/3p4/4P3/8/8/r3K3 w - - 0 1"])   # in check: exd5 is illegal
>>> capture_gains(sq)[:, 0].tolist(), legal_capture_gains(sq, white).tolist()
([1.0], [0.0])
"""

from __future__ import annotations

import numpy as np

from knights.board.arrays import bitboards
from knights.board.pieces import PAWN_VALUES, PAWNS

KING_AS_ATTACKER = 12
"""The king's value as an *attacker*, where :data:`~knights.board.pieces.PAWNS` has 0.
It must be more than any victim (a queen is 9): ordered by value, the king is then
the cheapest attacker of a square only when nothing else attacks it, and its capture
of a defended piece shows as a loss (``victim - 12 < 0``), which is right, since the
king may not take a defended piece at all."""

ATTACKER_VALUE = np.array((*PAWNS[:6], KING_AS_ATTACKER), dtype=np.int8)
"""Value of an attacking piece by code (none P N B R Q K): the project's one table,
:data:`knights.board.pieces.PAWNS`, with the king as :data:`KING_AS_ATTACKER`."""
VICTIM_VALUE = PAWN_VALUES
"""Value of a captured piece by code: :data:`knights.board.pieces.PAWN_VALUES` as it
is (the king, never captured, is worth 0)."""

# Inside, positions are python-chess style bitboards (bit 0 = a1, bit 63 = h8), one
# uint64 per position per set. Every (colour, piece, direction) is one column of an
# (N, J) array, so each shift moves all of them for a whole batch in one NumPy call.
_FILES = [sum(1 << (8 * r + f) for r in range(8)) for f in range(8)]
_KNIGHT = [(2, 1), (2, -1), (1, 2), (1, -2), (-1, 2), (-1, -2), (-2, 1), (-2, -1)]
_KING = [(1, -1), (1, 0), (1, 1), (0, -1), (0, 1), (-1, -1), (-1, 0), (-1, 1)]
_DIAGONAL = [(1, 1), (1, -1), (-1, 1), (-1, -1)]
_STRAIGHT = [(1, 0), (-1, 0), (0, 1), (0, -1)]
_VALUES = np.unique(ATTACKER_VALUE[1:])          # the attacker values, cheapest first: 1 3 5 9 12
_LINES = _DIAGONAL + _STRAIGHT                   # the eight directions of a line through a square


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
_CODE = np.array([r[1] for r in _RAYS])
_SOURCE = np.array([r[0] * 6 + r[1] - 1 for r in _RAYS])            # column of the (N, 12) own-piece sets
_VALUE = ATTACKER_VALUE[[r[1] for r in _RAYS]]
_SLIDES = np.array([r[4] for r in _RAYS])
_STEPS = int(_SLIDES.sum())                                          # the first _STEPS columns slide

_Table = tuple[np.ndarray, np.ndarray, np.ndarray]
"""How :func:`_shift` moves a stack of bitboards along each row's ray: the left and
right shift amounts and the mask of what does not wrap round, each shaped (K, 1)."""


def _table(columns: np.ndarray, steps: int = 1) -> _Table:
    """The :data:`_Table` moving these columns of :data:`_RAYS` (in this order) ``steps``
    steps (computed once, at import)."""
    rays = [_RAYS[j] for j in columns]
    amount = np.array([steps * (8 * r[2] + r[3]) for r in rays])
    # moving `files` sideways, what wraps round to the other edge lands on these files
    wraps = [sum(_FILES[f] for f in range(8) if f < files or f >= 8 + files) for files in (steps * r[3] for r in rays)]
    keep = np.array([~w & (2**64 - 1) for w in wraps], dtype=np.uint64)
    left, right = np.maximum(amount, 0).astype(np.uint64), np.maximum(-amount, 0).astype(np.uint64)
    return left[:, None], right[:, None], keep[:, None]


def _fill_tables(columns: np.ndarray) -> tuple[_Table, _Table, _Table]:
    """The tables :func:`_slide` reads: 1, 2 and 4 steps."""
    return _table(columns, 1), _table(columns, 2), _table(columns, 4)


_SLIDERS = _fill_tables(np.arange(_STEPS))
_STEPPERS = _table(np.arange(_STEPS, len(_RAYS)))

# legal_capture_gains turns the side to move into White, so its tables are White's
_ALL = np.uint64(2**64 - 1)
_LINE = np.array([_LINES.index(r[2:4]) if r[2:4] in _LINES else len(_LINES) for r in _RAYS])
"""The line (index into _LINES) each column moves along; 8, past them, for a knight's jump."""
_MINE = np.flatnonzero(_COLOUR == 0)
_THEIR_SLIDERS = np.flatnonzero((_COLOUR == 1) & _SLIDES)
_KING_LINES = np.array([np.flatnonzero((_COLOUR == 0) & (_CODE == 5))[_LINES.index(d)] for d in _LINES])
"""A White queen's column per line, in _LINES order: the king's eight lines, walked from the king."""
_CHECK_STEPS = np.flatnonzero((_COLOUR == 0) & (_CODE <= 2))
"""White's knight and pawn columns: from the king they reach the squares a knight or a pawn checks it from."""
_CHECK_KIND = _CODE[_CHECK_STEPS] - 1                                  # their pawns or knights, per row
_DIAGONAL_LINE = np.array([d in _DIAGONAL for d in _LINES])
_FIRST_PASS = _fill_tables(np.concatenate([np.arange(_STEPS), _KING_LINES]))
_SECOND_PASS = _fill_tables(np.concatenate([_KING_LINES, _THEIR_SLIDERS]))
_CHECKS = _table(_CHECK_STEPS)
_SWAP_COLOURS = [0, 1, 2, 3, 4, 5, 7, 6]                              # bitboards()' columns, the colours swapped
_KING_ROWS = np.where(_CODE[_MINE] == 6, _ALL, np.uint64(0))[:, None]
"""All ones on White's king columns, whose captures are never filtered as evasions: one
the king may not make is retaken, so it is worth nothing (12 is more than any victim)."""
_THEIRS = np.flatnonzero(_COLOUR == 1)
_VICTIMS = VICTIM_VALUE[1:6]                                          # P N B R Q (the king is no victim)
_PAID = np.maximum(_VICTIMS[None, :] - _VALUE[_MINE, None], 0)
"""The gain (>= 0) of a capture that is retaken, by White's column (its capturer) and victim."""


def _shift(bb: np.ndarray, table: _Table) -> np.ndarray:
    """Each row of ``bb`` moved along its ray (a row of ``table``); bits leaving the board vanish."""
    left, right, keep = table
    moved: np.ndarray = (bb << left) >> right & keep
    return moved


def _slide(start: np.ndarray, tables: tuple[_Table, _Table, _Table], empty: np.ndarray) -> np.ndarray:
    """The squares each row of ``start`` reaches along its ray (a row of ``tables``,
    :func:`_fill_tables`) over empty squares, up to and including the first occupied one.

    A Kogge-Stone fill: ``reach`` grows over empty squares by 1, then 2, then 4 steps
    (``open_`` marks the squares that end a run of 2, then 4, empty ones), so the longest
    ray takes three rounds; the last step, onto the first occupied square, is a plain shift."""
    one, two, four = tables
    reach = start | empty & _shift(start, one)
    open_ = empty & _shift(empty, one)
    reach = reach | open_ & _shift(reach, two)
    open_ &= _shift(open_, two)
    reach = reach | open_ & _shift(reach, four)
    return _shift(reach, one)


def _sources(p: np.ndarray) -> np.ndarray:
    """(J, N) uint64: each column's pieces (its colour and kind). ``p``: (8, N), the
    transposed output of :func:`knights.board.arrays.bitboards`."""
    own = (p[None, :6] & p[6:8, None]).reshape(12, -1)                  # (colour x kind, N)
    sources: np.ndarray = own[_SOURCE]
    return sources


def _attacks(sources: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """(J, N) uint64: the squares each column's ``sources`` attack (J = :data:`_RAYS`)."""
    return np.concatenate([_slide(sources[:_STEPS], _SLIDERS, empty),   # the sliders come first
                           _shift(sources[_STEPS:], _STEPPERS)])


def _attack_sets(pieces: np.ndarray) -> np.ndarray:
    """(J, N) uint64: the squares each ray's pieces attack (J = :data:`_RAYS`).
    ``pieces``: the (N, 8) output of :func:`knights.board.arrays.bitboards`."""
    p = np.ascontiguousarray(pieces.T)                                  # (8, N)
    return _attacks(_sources(p), ~(p[6] | p[7]))


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
        mine = colour == _COLOUR
        counts.append(_unpack(sets[mine].T).sum(axis=1, dtype=np.int8))
        exclusive, covered = [], np.zeros(sets.shape[1], np.uint64)
        for value in _VALUES:
            merged = np.bitwise_or.reduce(sets[mine & (value == _VALUE)], axis=0)
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


def legal_capture_gains(squares: np.ndarray, white: np.ndarray) -> np.ndarray:
    """Best one-capture gain in pawns (>= 0) for the side to move, over its legal
    captures: ``(N,)`` float32. ``white``: (N,) 1 where White is to move.

    The exchange is :func:`capture_gains`' (the victim, less the capturer when the
    square is defended) with what makes a capture illegal or answered taken in:

    * a piece pinned to its king takes nothing but its pinner, moving along the pin;
    * in check only the checker may be taken (by an unpinned piece), in double check
      nothing but by the king;
    * the king takes only a piece that is not defended (nor seen through the king);
    * "defended" is attacked *after* the capture: a slider of the other side whose ray
      ran into the capturer, on the line of its capture, now reaches the square.

    En passant is not seen (the arrays carry no en-passant square); a defender counts
    even if it could not legally recapture (pinned, or a king taking a defended piece).

    >>> from knights.board.arrays import parse_fens
    >>> sq, white, _ = parse_fens(["4k3/8/8/3p4/4P3/8/8/4K3 b - - 0 1",      # ...dxe4 wins a pawn
    ...                            "4k3/7p/6P1/8/8/3q4/8/4K3 w - - 0 1",     # gxh7 Qxh7: through g6
    ...                            "4k3/4r3/8/8/4B3/3p4/8/4K3 w - - 0 1"])   # the bishop is pinned
    >>> legal_capture_gains(sq, white).tolist()
    [1.0, 0.0, 0.0]
    """
    black_to_move = np.asarray(white).reshape(-1, 1) == 0
    pieces = bitboards(squares)
    # the mover plays White: colours swapped, ranks mirrored (for a bitboard, a byte swap)
    pieces = np.where(black_to_move, pieces[:, _SWAP_COLOURS].byteswap(), pieces)
    p = np.ascontiguousarray(pieces.T)                                  # (8, N): P N B R Q K, mover, other
    n = p.shape[1]
    mine, theirs = p[6], p[7]
    empty = ~(mine | theirs)
    king = p[5] & mine
    lines = len(_LINES)
    sources = _sources(p)

    # first pass: every slider's ray, and the king's eight lines up to the first piece
    slid = _slide(np.concatenate([sources[:_STEPS], np.broadcast_to(king, (lines, n))]), _FIRST_PASS, empty)
    sets = np.concatenate([slid[:_STEPS], _shift(sources[_STEPS:], _STEPPERS)])
    reach = slid[_STEPS:]
    shield = reach & mine                                               # our first piece each way
    # second pass, on through one piece of ours: from the shields (pins), and along
    # each of their sliders' rays (x-rays: defenders behind a capturer)
    beyond = _slide(np.concatenate([shield, sets[_THEIR_SLIDERS] & mine]), _SECOND_PASS, empty)
    sliders = theirs & np.where(_DIAGONAL_LINE[:, None], p[2] | p[4], p[3] | p[4])   # per line, what pins or checks
    pinners = np.zeros((lines + 1, n), np.uint64)                      # a zero row for the knights' "line"
    pinners[:lines] = beyond[:lines] & sliders
    pinned = np.bitwise_or.reduce(np.where(pinners[:lines] != 0, shield, 0), axis=0)
    xrays = np.zeros((lines + 1, n), np.uint64)
    np.bitwise_or.at(xrays, _LINE[_THEIR_SLIDERS], beyond[lines:])

    steps = _shift(np.broadcast_to(king, (len(_CHECK_STEPS), n)), _CHECKS)   # knight and pawn checks
    checkers = np.bitwise_or.reduce(np.concatenate([reach & sliders, steps & p[_CHECK_KIND] & theirs]), axis=0)
    checks = np.bitwise_count(checkers)
    evasions = np.where(checks == 0, _ALL, np.where(checks == 1, checkers, np.uint64(0)))

    if pinned.any():   # a pinned piece takes nothing but its pinner, moving along the pin
        rays = _attacks(sources & pinned, empty)
        sets = sets & ~rays | rays & pinners[_LINE]
    defended = np.bitwise_or.reduce(sets[_THEIRS], axis=0)
    takes = sets[_MINE] & theirs & (evasions | _KING_ROWS)
    answered = defended | xrays[_LINE[_MINE]]                            # retaken after this capture
    victims = p[:5] & theirs                                             # their pawns ... queens
    paid = np.where(((takes & answered)[:, None] & victims) != 0, _PAID[:, :, None], 0)
    free = np.where((np.bitwise_or.reduce(takes & ~answered, axis=0) & victims) != 0, _VICTIMS[:, None], 0)
    gain: np.ndarray = np.maximum(paid.max(axis=(0, 1)), free.max(axis=0)).astype(np.float32)
    return gain


QUIET_BLOCK = 200_000
"""Rows :func:`quiet` works through at a time: the exchange's bitboard temporaries take a few kilobytes a row, so
millions of rows at once (a training run's letters of every grown folder) ran out of 24 GB."""


def quiet(squares: np.ndarray, white: np.ndarray, check: np.ndarray, block: int = QUIET_BLOCK) -> np.ndarray:
    """The project's one definition of a **quiet** position: the side to move is not in
    check and has no legal capture that wins material by :func:`legal_capture_gains`'
    exchange. A static evaluation is asked to judge these; the others a search resolves
    with captures first. ``(N,)`` bool, computed ``block`` rows at a time."""
    n = len(squares)
    if n > block:
        return np.concatenate([quiet(squares[i:i + block], white[i:i + block], check[i:i + block], block)
                               for i in range(0, n, block)])
    calm: np.ndarray = (np.asarray(check) == 0) & (legal_capture_gains(squares, white) == 0)
    return calm
