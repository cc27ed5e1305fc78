"""Random legal placements of a few pieces: endgame positions no game had to reach.

A material configuration is written as the pieces of each side, kings first, the two
sides joined by ``v``: ``"KRPvKR"`` is king, rook and pawn against king and rook. The
first side is the *stronger* one by convention only; :func:`random_placement` gives it
White or Black at random.

:func:`random_placement` makes the independent ``endgames`` test set
(:mod:`knights.data.independent`, a fixed list of configurations). The ``endings``
training style (:mod:`knights.data.generate`) draws its material with
:func:`random_material` but puts the men on their home squares, never at random, so that
no training data comes from the test set's generator.

    >>> import random
    >>> board = random_placement("KRPvKR", random.Random(1))
    >>> sorted(p.symbol().upper() for p in board.piece_map().values())
    ['K', 'K', 'P', 'R', 'R']
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

import chess

from knights.board.arrays import position_problem

LETTER = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP, "N": chess.KNIGHT,
          "P": chess.PAWN}
"""A configuration's letters and the piece types they stand for."""

PIECE_WEIGHTS = {"Q": 1.0, "R": 2.0, "B": 1.5, "N": 1.5}
"""How often each piece (not king, not pawn) is drawn by :func:`random_material`."""
PIECE_COUNTS = (3.0, 4.0, 2.0, 1.0)
"""Relative frequency of 0, 1, 2 and 3 pieces on a side (:func:`random_material`)."""
PAWN_COUNTS = (2.0, 3.0, 3.0, 2.0, 1.0, 1.0)
"""Relative frequency of 0-5 pawns on a side (:func:`random_material`)."""


def parse_material(config: str) -> tuple[list[chess.PieceType], list[chess.PieceType]]:
    """``"KRPvKR"`` -> the piece types of the stronger side and of the other, kings first."""
    strong, weak = config.split("v")
    return [LETTER[c] for c in strong], [LETTER[c] for c in weak]


def random_material(rng: random.Random) -> str:
    """A configuration drawn by a general rule rather than from a list: each side, on its
    own, gets 0-3 pieces (:data:`PIECE_COUNTS`, types by :data:`PIECE_WEIGHTS`) and 0-5
    pawns (:data:`PAWN_COUNTS`), except that half the time the second side gets the first
    side's pieces and one pawn more, as many or one fewer, so that balanced endings, where
    judgement matters most, are common. Redrawn until some side could mate (a queen, rook or
    pawn, or two minor pieces). Letters in the order Q R B N P.

    >>> random_material(random.Random(3))
    'KRPPvKRPPP'
    """
    order = "QRBNP"
    while True:
        sides: list[str] = []
        mirror = rng.random() < 0.5
        pieces: list[str] = []
        pawns = ""
        for _ in range(2):
            if sides and mirror:
                pawns = "P" * min(len(PAWN_COUNTS) - 1, max(0, len(pawns) + rng.choice((-1, 0, 1))))
            else:
                pieces = rng.choices(list(PIECE_WEIGHTS), list(PIECE_WEIGHTS.values()),
                                     k=rng.choices(range(len(PIECE_COUNTS)), PIECE_COUNTS)[0])
                pawns = "P" * rng.choices(range(len(PAWN_COUNTS)), PAWN_COUNTS)[0]
            sides.append("K" + "".join(sorted(pieces + list(pawns), key=order.index)))
        if any(any(c in side for c in "QRP") or len(side) >= 3 for side in sides):
            return "v".join(sides)


def place_men(board: chess.Board, men: Sequence[tuple[chess.Color, Sequence[chess.PieceType]]], rng: random.Random,
              squares: Callable[[chess.PieceType, chess.Color], Iterable[chess.Square]]) -> bool:
    """Put each side's men on ``board``, each on a free square drawn from ``squares(piece,
    colour)``; ``False`` (the board part-filled) when a man finds none. A side stops at
    such a man but the next side is still placed: the draws that takes are part of the
    recipes that made the committed ``endgames`` set and ``data/endings``."""
    placed = True
    for colour, pieces in men:
        for piece in pieces:
            free = [s for s in squares(piece, colour) if board.piece_at(s) is None]
            if not free:
                placed = False
                break
            board.set_piece_at(rng.choice(free), chess.Piece(piece, colour))
    return placed


def _anywhere(piece: chess.PieceType, colour: chess.Color) -> list[chess.Square]:
    """Every square, pawns on ranks 2-7."""
    return [s for s in chess.SQUARES if piece != chess.PAWN or 1 <= chess.square_rank(s) <= 6]


def random_placement(config: str, rng: random.Random, tries: int = 1000) -> chess.Board:
    """A legal position of ``config`` (stronger side's colour and the side to move drawn
    at random; pawns on ranks 2-7; no castling or en passant) in which the side to move
    has a legal move."""
    strong, weak = parse_material(config)
    for _ in range(tries):
        strong_colour = rng.random() < 0.5
        board = chess.Board(None)
        board.turn = rng.random() < 0.5
        ok = place_men(board, ((strong_colour, strong), (not strong_colour, weak)), rng, _anywhere)
        if ok and position_problem(board) is None and not board.is_game_over(claim_draw=False):
            return board
    raise RuntimeError(f"no legal {config} position in {tries} tries")
