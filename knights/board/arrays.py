"""Positions as arrays: FEN strings and python-chess boards to signed squares and back, vectorised.

Everything starts from one compact form, the **signed squares** array: ``int8``
of shape ``(N, 64)``, square 0 = a8 ... 63 = h1 (row 0 is rank 8, as FEN reads),
holding the piece code (P=1 N=2 B=3 R=4 Q=5 K=6), positive for White, negative for
Black, 0 for empty. It is what the encoded cache stores; the network and learner
inputs (:mod:`knights.features`) are cheap NumPy functions of it.

Parsing does not build a python-chess ``Board`` per row: the piece-placement field
is expanded with ``str.translate`` and decoded for the whole batch at once.

>>> sq, white, ok = parse_fens(["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"])
>>> sq[0, :8].tolist(), bool(white[0]), bool(ok[0])
([-4, -2, -3, -5, -6, -3, -2, -4], False, True)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from knights.board.pieces import PAWN_VALUES

if TYPE_CHECKING:   # annotations only: parsing needs no python-chess
    import chess

PIECE_CODES = {"P": 1, "N": 2, "B": 3, "R": 4, "Q": 5, "K": 6}
"""Signed-squares code of each piece letter (White; Black is the negative)."""

_ROW_LEN = 71  # 64 squares + 7 slashes
_INVALID = np.int8(127)
_LUT = np.full(256, _INVALID, dtype=np.int8)
_LUT[ord(".")] = 0
for _ch, _code in PIECE_CODES.items():
    _LUT[ord(_ch)] = _code
    _LUT[ord(_ch.lower())] = -_code


_ADJACENT_DIGITS = re.compile(rb"[0-9][0-9]")
_EXPAND = str.maketrans({str(n): "." * n for n in range(1, 9)})
_CASTLE_BITS = {"K": 1, "Q": 2, "k": 4, "q": 8}
_EP = {f"{f}{r}": (ord(f) - 97) + 8 * (r - 1) for f in "abcdefgh" for r in (3, 6)}


def _castling_code(text: str) -> int:
    return sum(_CASTLE_BITS.get(c, 0) for c in set(text))


_CASTLING_FIELD = re.compile(r"-|K?Q?k?q?")


def fen_fields_problem(castling: str, ep: str) -> str | None:
    """The FEN-text half of the validity rule (:func:`position_problem` is the other):
    ``None`` when the castling field is ``-`` or ``KQkq`` letters in that order and the
    en-passant field ``-`` or a third/sixth-rank square (either may be missing, as
    python-chess reads it), else the problem. Other spellings (``Qk``, Shredder letters,
    ``e4``) are refused by every reader and converter alike."""
    if _CASTLING_FIELD.fullmatch(castling) is None:
        return "bad_castling_field"
    if ep not in ("-", "") and ep not in _EP:
        return "bad_ep_field"
    return None


def _map_unique(values: Sequence[str], fn: Callable[[str], int], dtype: npt.DTypeLike) -> np.ndarray:
    """``fn`` applied to each distinct value only (side, castling and en-passant
    fields take a handful of values across millions of rows)."""
    lookup = {u: fn(u) for u in set(values)}
    return np.fromiter(map(lookup.__getitem__, values), dtype=dtype, count=len(values))


def _fen_fields(fens: Sequence[str]) -> list[Sequence[str]]:
    """The first four fields of every FEN (placement, side, castling, en passant),
    split by pandas' C tokenizer; FENs it cannot split one per line are split by
    Python instead."""
    import csv
    import io

    import pandas as pd

    n = len(fens)
    text = "\n".join(fens)
    if "\n" not in text.replace("\n", "", n - 1) and "\r" not in text:
        try:
            df = pd.read_csv(io.StringIO(text + "\n"), sep=" ", header=None, names=range(6), usecols=range(4),
                             dtype=str, na_filter=False, quoting=csv.QUOTE_NONE, skip_blank_lines=False,
                             engine="c")
            if len(df) == n:
                return [df[i].tolist() for i in range(4)]
        except (pd.errors.ParserError, ValueError):
            pass
    columns: list[Sequence[str]] = list(itertools.zip_longest(*(f.split(" ", 4) for f in fens), fillvalue=""))
    return (columns + [("",) * n] * 4)[:4]


def _expanded_placements(joined: bytes, n: int) -> np.ndarray:
    """``(N, 72)`` uint8: each of the ``n`` placements in ``joined`` (ASCII, one per line,
    each ending in a newline) with its digits expanded to dots (71 characters) and a
    newline; rows that do not expand to 71 characters become '?'."""
    digit = (np.frombuffer(joined, dtype=np.uint8) - np.uint8(48)) < 10   # wraps below '0': one compare
    adjacent = bool((digit[1:] & digit[:-1]).any())   # "44" is not a FEN (python-chess agrees)
    expanded = joined
    for d in "87654321":   # one C-speed pass per digit over the whole batch
        expanded = expanded.replace(d.encode(), b"." * int(d))
    if not adjacent and len(expanded) == n * (_ROW_LEN + 1):
        rows = np.frombuffer(expanded, dtype=np.uint8).reshape(n, _ROW_LEN + 1)
        if (rows[:, _ROW_LEN] == 10).all():
            return rows
    # some rows are malformed: expand them one by one and blank the bad ones
    fixed = []
    for p in joined.split(b"\n")[:n]:
        row = p.decode("ascii").translate(_EXPAND).encode("ascii")
        fixed.append(row if len(row) == _ROW_LEN and not _ADJACENT_DIGITS.search(p) else b"?" * _ROW_LEN)
    return np.frombuffer(b"\n".join(fixed) + b"\n", dtype=np.uint8).reshape(n, _ROW_LEN + 1)


def _side_code(text: str) -> int:
    return {"w": 1, "b": 0}.get(text, -1)


def _castle_info(text: str) -> int:
    """Castling bits 0-15, plus 16 when the text passes :func:`fen_fields_problem`."""
    return _castling_code(text) + 16 * (fen_fields_problem(text, "-") is None)


def _ep_info(text: str) -> int:
    """En-passant square + 1 (0 for none), plus 128 when the text passes :func:`fen_fields_problem`."""
    return _EP.get(text, -1) + 1 + 128 * (fen_fields_problem("-", text) is None)


def parse_fens_full(fens: Sequence[str]) -> dict[str, np.ndarray]:
    """Decode FENs in one batch (see :func:`_parse_fens_full`)."""
    return _parse_fens_full(fens)[0]


def _parse_fens_full(fens: Sequence[str]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Decode FENs in one batch; also the ``(N,)`` bool mask of rows whose castling and
    en-passant fields pass :func:`fen_fields_problem`.

    Returns ``squares`` int8 (N, 64), ``white`` bool, ``valid`` bool, ``castling``
    int8 bitmask (K=1 Q=2 k=4 q=8) and ``ep`` int8 (en-passant square, a1 = 0, or -1).
    A FEN is *valid* here when its placement has 8 ranks of 8 squares made of
    piece letters and digits, exactly one king per side, no pawn on the first or
    last rank, and its side-to-move field is ``w`` or ``b``. Invalid rows are zeroed.
    This is the *syntax*; readers apply the whole rule: :func:`parse_legal_fens`.
    """
    n = len(fens)
    if n == 0:
        empty = np.zeros(0, dtype=bool)
        return {"squares": np.zeros((0, 64), np.int8), "white": empty, "valid": empty,
                "castling": np.zeros(0, np.int8), "ep": np.zeros(0, np.int8)}, empty
    placement, side, castle_text, ep_text = _fen_fields(fens)
    joined = ("\n".join(placement) + "\n").encode("ascii", "replace")
    if joined.count(b"\n") != n:   # a placement holding a line break is none: '?' keeps the rows aligned
        joined = ("\n".join(p if "\n" not in p else "?" for p in placement) + "\n").encode("ascii", "replace")
    side_code = _map_unique(side, _side_code, np.int8)
    castle_info = _map_unique(castle_text, _castle_info, np.int16)   # one lookup: the code and the check
    ep_info = _map_unique(ep_text, _ep_info, np.int16)
    ranks = _expanded_placements(joined, n).reshape(n, 8, 9)   # 8 ranks: 8 squares + a separator
    squares = _LUT.take(ranks[:, :, :8]).reshape(n, 64)
    valid = (ranks[:, :7, 8] == ord("/")).all(axis=1) & (squares != _INVALID).all(axis=1)
    valid &= ((squares == 6).sum(axis=1) == 1) & ((squares == -6).sum(axis=1) == 1)
    edge_pawns = (np.abs(squares[:, :8]) == 1).any(axis=1) | (np.abs(squares[:, 56:]) == 1).any(axis=1)
    valid &= ~edge_pawns & (side_code >= 0)
    castling, ep = castle_info % 16, ep_info % 128 - 1
    fields_ok = (castle_info >= 16) & (ep_info >= 128)
    squares[~valid] = 0
    return {"squares": squares, "white": (side_code == 1) & valid, "valid": valid,
            "castling": np.where(valid, castling, 0).astype(np.int8),
            "ep": np.where(valid, ep, -1).astype(np.int8)}, fields_ok


def parse_fens(fens: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode FENs into ``(squares int8 (N,64), white_to_move bool (N,), valid bool (N,))``
    (see :func:`parse_fens_full` for what counts as valid)."""
    out = parse_fens_full(fens)
    return out["squares"], out["white"], out["valid"]


_SIGNED_CODES = np.array([1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6], np.int8)[:, None]


def squares_from_board(board: chess.Board) -> np.ndarray:
    """The signed squares (64,) int8 of a python-chess board, read from its bitboards
    (no FEN, no loop over pieces: the engine calls it for every position it judges)."""
    white, black = board.occupied_co[True], board.occupied_co[False]
    kinds = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    bitboards = np.array([k & white for k in kinds] + [k & black for k in kinds], dtype="<u8")
    bits = np.unpackbits(bitboards.view(np.uint8), bitorder="little").reshape(12, 64)   # python-chess order
    signed: np.ndarray = (bits * _SIGNED_CODES).sum(axis=0, dtype=np.int8)[_TO_CHESS]
    return signed


def material_balance(squares: np.ndarray) -> np.ndarray:
    """Material from White's side in pawns (P=1 N=3 B=3 R=5 Q=9): the counting
    baseline every model is compared with. ``(N,)`` float32."""
    balance: np.ndarray = (np.sign(squares) * PAWN_VALUES[np.abs(squares)]).sum(axis=1)
    return balance.astype(np.float32)



# our square index (a8 = 0) -> python-chess square (a1 = 0)
_TO_CHESS = np.array([(7 - i // 8) * 8 + i % 8 for i in range(64)])


def bitboards(squares: np.ndarray) -> np.ndarray:
    """``(N, 8)`` uint64 bitboards per position: P N B R Q K, White, Black (python-chess
    square numbering, a1 = bit 0), packed one mask at a time."""
    sq = np.ascontiguousarray(np.asarray(squares).reshape(-1, 64), dtype=np.int8)
    kinds = np.abs(sq)
    out = np.empty((len(sq), 8), np.uint64)
    masks = [kinds == k for k in range(1, 7)] + [sq > 0, sq < 0]
    for i, mask in enumerate(masks):
        # bit i = our square i (a8 = 0); python-chess numbers ranks the other way: swap the bytes
        # (packing the flat mask is twice as fast as packing along axis 1: 64 bits = 8 bytes a row)
        out[:, i] = np.packbits(mask.ravel(), bitorder="little").view("<u8").byteswap()
    return out


def boards_from_arrays(squares: np.ndarray, white: npt.ArrayLike, castling: npt.ArrayLike | None = None,
                       ep: npt.ArrayLike | None = None) -> list[chess.Board]:
    """Rebuild python-chess boards (move counters aside) from the cached arrays,
    a batch at a time: the piece bitboards are packed with NumPy and set directly."""
    import chess

    to_move = np.asarray(white)
    n = len(to_move)
    rights_of = np.zeros(n, np.int8) if castling is None else np.asarray(castling)
    ep_of = np.full(n, -1, np.int8) if ep is None else np.asarray(ep)
    out = []
    for row, w_to_move, rights, ep_square in zip(bitboards(squares).tolist(), to_move.tolist(),
                                                 rights_of.tolist(), ep_of.tolist(), strict=True):
        b = chess.Board(None)
        b.pawns, b.knights, b.bishops, b.rooks, b.queens, b.kings, w, k = row
        b.occupied_co[chess.WHITE], b.occupied_co[chess.BLACK] = w, k
        b.occupied = w | k
        b.turn = bool(w_to_move)
        b.set_castling_fen("".join(c for c, bit in _CASTLE_BITS.items() if rights & bit) or "-")
        b.ep_square = ep_square if ep_square >= 0 else None
        out.append(b)
    return out


def board_from_arrays(squares: np.ndarray, white: bool, castling: int = 0, ep: int = -1) -> chess.Board:
    """One board of :func:`boards_from_arrays`."""
    return boards_from_arrays(np.asarray(squares).reshape(1, 64), [white], [castling], [ep])[0]


def position_problem(board: chess.Board) -> str | None:
    """THE validity rule of every reader and converter: ``None`` when ``board`` is a
    position of standard chess that can occur (python-chess ``Board.status()`` is clean:
    one king each, at most 16 pieces and 8 pawns a side, no pawn on a back rank, the side
    not to move not in check, a possible check, castling rights backed by king and rook,
    an en-passant square behind a pawn that just moved two squares), else the name of
    the first problem (``"opposite_check"``, ``"too_many_white_pieces"``, ...)."""
    import chess

    status = board.status()
    if not status:
        return None
    for flag in chess.Status:
        if flag and flag in status:
            return (flag.name or "invalid").lower().removeprefix("status_")
    return "invalid"   # pragma: no cover - every status is a combination of flags


def legal_mask(squares: np.ndarray, white: npt.ArrayLike, castling: npt.ArrayLike,
               ep: npt.ArrayLike) -> np.ndarray:
    """``(N,)`` bool: :func:`position_problem` is ``None`` for each row of the arrays
    (one king a side and no back-rank pawn assumed: :func:`parse_fens_full` checked them).

    The rule is python-chess's: a vectorised pass over the bitboards clears the ordinary
    rows (at most 16 pieces and 8 pawns a side, castling rights on king and rook squares,
    no en-passant square, the side not to move not attacked, at most one checker), and
    only the rest (two checkers, an en-passant square, anything wrong) is judged one board
    at a time by :func:`position_problem`. The pass only ever *clears* rows python-chess
    clears too, so the answer is exactly the per-board rule's, at NumPy speed."""
    sq = np.asarray(squares, dtype=np.int8).reshape(-1, 64)
    to_move = np.asarray(white).astype(bool)
    rights = np.asarray(castling).astype(np.int16)
    ep_sq = np.asarray(ep).astype(np.int16)
    bb = bitboards(sq)   # P N B R Q K, White, Black (python-chess order, a1 = bit 0)
    w, b = bb[:, 6], bb[:, 7]
    count = np.bitwise_count
    fast = (count(w) <= 16) & (count(b) <= 16) & (count(bb[:, 0] & w) <= 8) & (count(bb[:, 0] & b) <= 8)
    fast &= ep_sq < 0
    kings, rooks = bb[:, 5], bb[:, 3]
    for bit, king, rook, side in ((1, 4, 7, w), (2, 4, 0, w), (4, 60, 63, b), (8, 60, 56, b)):
        home = ((kings & side) >> np.uint64(king)) & ((rooks & side) >> np.uint64(rook)) & np.uint64(1)
        fast &= ((rights & bit) == 0) | (home == 1)
    mover = np.where(to_move, w, b)
    other = np.where(to_move, b, w)
    fast &= _attackers(bb, kings & other, mover, to_move) == 0          # the side not to move is not in check
    fast &= count(_attackers(bb, kings & mover, other, ~to_move)) <= 1  # at most one checker
    out: np.ndarray = np.array(fast, dtype=bool)
    slow = np.flatnonzero(~fast)
    if len(slow):
        boards = boards_from_arrays(sq[slow], to_move[slow], rights[slow], ep_sq[slow])
        out[slow] = np.fromiter((position_problem(x) is None for x in boards), dtype=bool, count=len(slow))
    return out


_U = np.uint64
_NOT_A = _U(0xFEFEFEFEFEFEFEFE)   # every square but the a-file
_NOT_H = _U(0x7F7F7F7F7F7F7F7F)
_NOT_AB = _U(0xFCFCFCFCFCFCFCFC)
_NOT_GH = _U(0x3F3F3F3F3F3F3F3F)
_ALL = _U(0xFFFFFFFFFFFFFFFF)
# direction: (shift, left?, wrap mask): north, south, east, west, NE, NW, SE, SW
_RAYS = ((8, True, _ALL), (8, False, _ALL), (1, True, _NOT_A), (1, False, _NOT_H),
         (9, True, _NOT_A), (7, True, _NOT_H), (7, False, _NOT_A), (9, False, _NOT_H))


def _shift(x: np.ndarray, n: int, left: bool) -> np.ndarray:
    out: np.ndarray = np.left_shift(x, _U(n)) if left else np.right_shift(x, _U(n))
    return out


def _attackers(bb: np.ndarray, target: np.ndarray, by: np.ndarray, by_white: np.ndarray) -> np.ndarray:
    """``(N,)`` uint64: the pieces of ``by`` (a side's occupancy per row; ``by_white``
    whether it is White) attacking the square of ``target`` (one bit per row)."""
    empty = ~(bb[:, 6] | bb[:, 7])
    pawns, knights, bishops, rooks, queens, kings = (bb[:, i] & by for i in range(6))
    white_pawns = ((target >> _U(7)) & _NOT_A) | ((target >> _U(9)) & _NOT_H)   # squares a white pawn hits from
    black_pawns = ((target << _U(7)) & _NOT_H) | ((target << _U(9)) & _NOT_A)
    hit = pawns & np.where(by_white, white_pawns, black_pawns)
    knight_from = ((((target << _U(17)) | (target >> _U(15))) & _NOT_A)
                   | (((target << _U(15)) | (target >> _U(17))) & _NOT_H)
                   | (((target << _U(10)) | (target >> _U(6))) & _NOT_AB)
                   | (((target << _U(6)) | (target >> _U(10))) & _NOT_GH))
    hit |= knights & knight_from
    straight, diagonal = rooks | queens, bishops | queens
    for i, (n, left, wrap) in enumerate(_RAYS):
        gen, pro = target, empty & wrap
        gen = gen | (pro & _shift(gen, n, left))
        pro = pro & _shift(pro, n, left)
        gen = gen | (pro & _shift(gen, 2 * n, left))
        pro = pro & _shift(pro, 2 * n, left)
        gen = gen | (pro & _shift(gen, 4 * n, left))
        ray = _shift(gen, n, left) & wrap   # the squares the ray reaches, the first piece included
        hit |= ray & (straight if i < 4 else diagonal)
        hit |= _shift(target, n, left) & wrap & kings
    result: np.ndarray = hit
    return result


def parse_legal_fens(fens: Sequence[str]) -> dict[str, np.ndarray]:
    """:func:`parse_fens_full` plus the whole validity rule: ``syntax`` (bool (N,)) is
    ``valid`` and :func:`fen_fields_problem` clean, ``legal`` the syntactic rows whose
    position passes :func:`position_problem`, and ``valid`` becomes ``syntax & legal``,
    so a reader keeps exactly the rows a converter keeps."""
    out, fields_ok = _parse_fens_full(fens)
    syntax = out["valid"] & fields_ok
    legal = np.zeros(len(syntax), dtype=bool)
    rows = np.flatnonzero(syntax)
    if len(rows):
        legal[rows] = legal_mask(out["squares"][rows], out["white"][rows], out["castling"][rows], out["ep"][rows])
    valid = syntax & legal
    out["squares"][~valid] = 0
    out["white"] = out["white"] & valid
    out["castling"] = np.where(valid, out["castling"], 0).astype(np.int8)
    out["ep"] = np.where(valid, out["ep"], -1).astype(np.int8)
    out.update(syntax=syntax, legal=legal, valid=valid)
    return out
