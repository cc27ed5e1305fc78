"""How the game ends: after each legal move at once, and for a finished game.

For the children :func:`knights.board.children.expand` makes, :func:`terminal_outcomes`
says which end the game, :func:`opponent_claims` which let the opponent claim a
draw with its reply and :func:`opponent_mates` which let it mate at once
(:func:`mates_in_one`):

>>> from knights.board.children import expand
>>> board = chess.Board("7k/8/6K1/8/8/8/8/R7 w - - 0 1")
>>> children = expand(board)
>>> outcomes = terminal_outcomes(board, children)   # how the game ends after each move
>>> [m.uci() for m, o in zip(children.moves, outcomes) if o == CHECKMATE]
['a1a8']

It also holds the ends the front ends share: :func:`game_over` and :func:`result_of`
for a finished game. (Their input, a FEN, moves or a position, is checked in
:mod:`knights.engine.user_input`.)

Outcomes are named by the strings :data:`CHECKMATE`, :data:`STALEMATE`,
:data:`INSUFFICIENT`, :data:`REPETITION` and :data:`FIFTY` (the move ends the game)
and :data:`OPPONENT_REPETITION` and :data:`OPPONENT_FIFTY` (the opponent's reply can
claim a draw).

How it stays fast
-----------------
python-chess is asked only where an answer can differ: a checking move (the
children know which, see :mod:`knights.board.children`) is tested for mate; a quiet
move is tested for stalemate only when the opponent's mobility is so low that one
move could take it all away (see :func:`_mobile_pieces`); insufficient material
only when no pawn, rook or queen is left; repetition only for reversible moves
whose resulting placement already occurred twice (or, for the opponent's claim, is
one piece move away from a placement that did); the fifty-move rule only when the
clock is at 98-99.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import chess
import numpy as np

from knights.board.arrays import squares_from_board
from knights.board.children import Children
from knights.board.outcome import outcome

CHECKMATE, STALEMATE, INSUFFICIENT, REPETITION, FIFTY = (
    "checkmate", "stalemate", "insufficient material", "threefold repetition", "fifty-move rule")
OPPONENT_REPETITION, OPPONENT_FIFTY = ("threefold repetition the opponent can claim",
                                       "fifty-move draw the opponent can claim")


# -- game-ending positions -------------------------------------------------------------------
_STALEMATE_BOUND_NORMAL, _STALEMATE_BOUND_EP, _STALEMATE_BOUND_CASTLING = 6, 7, 10


def _mobile_pieces(board: chess.Board, limit: int) -> int:
    """How many of the opponent's non-king pieces surely have a legal move if it
    were the opponent's turn now, counted up to ``limit + 1``: a piece that is not
    pinned and has a pseudo-legal move (the opponent is not in check: it is our turn).

    One move of ours can take every move away from at most a few such pieces: the
    piece it captures (1), pieces newly pinned on the king's rays through the
    squares it changes (1 per changed square: 2 normally, 3 en passant, 4 castling),
    a pawn blocked by a piece arriving in front of it (1 per arrival square) and
    pawns that could only capture on a square it vacates (2 per vacated square).
    Knights and sliders keep a move otherwise (a piece that arrives on their path
    can be captured). Hence bounds 6 (normal moves and promotions), 7 (en passant)
    and 10 (castling): with more mobile pieces than the bound, a quiet move cannot
    stalemate, and python-chess is not asked.
    """
    them = not board.turn
    own = board.occupied_co[them]
    king = board.king(them)
    if king is None:
        return 0
    count = 0
    for square in chess.scan_forward(own & ~board.kings):
        bb = chess.BB_SQUARES[square]
        if board.pawns & bb:
            ahead = square + 8 if them == chess.WHITE else square - 8
            moves = 0 if not 0 <= ahead < 64 else chess.BB_SQUARES[ahead] & ~board.occupied
            moves |= chess.BB_PAWN_ATTACKS[them][square] & board.occupied_co[board.turn]
        else:
            moves = board.attacks_mask(square) & ~own
        if not moves or (chess.BB_RAYS[king][square] and board.is_pinned(them, square)):
            continue
        count += 1
        if count > limit:
            break
    return count


def _recent(board: chess.Board) -> chess.Board:
    """A copy with only the moves that can matter for repetitions: at most the last
    ``halfmove_clock`` (every move since the last irreversible one is reversible, and
    reversible moves never reset the clock)."""
    return board.copy(stack=min(len(board.move_stack), board.halfmove_clock + 1))


History = tuple[Counter[bytes], Counter[bytes]]
"""Placements (signed squares bytes) seen since the last irreversible move, counted:
``(theirs, ours)``, see :func:`recent_placements`."""


def recent_placements(board: chess.Board) -> History | None:
    """Placements of the positions since the last irreversible move: ``(theirs,
    ours)``, those with the opponent to move (what a child could repeat) and those
    with the side to move, the current one included (what the opponent's reply to a
    child could repeat). ``None`` when no position can repeat yet (fewer than three
    reversible half-moves, or no moves played on ``board``).

    >>> board = chess.Board()
    >>> for move in map(chess.Move.from_uci, ("g1f3", "g8f6", "f3g1", "f6g8")):
    ...     board.push(move)
    >>> theirs, ours = recent_placements(board)
    >>> ours[squares_from_board(chess.Board()).tobytes()]   # the start position, twice
    2
    >>> recent_placements(chess.Board()) is None
    True
    """
    if board.halfmove_clock < 3 or not board.move_stack:
        return None
    theirs: Counter[bytes] = Counter()
    ours: Counter[bytes] = Counter({squares_from_board(board).tobytes(): 1})
    past = _recent(board)
    while past.move_stack:
        move = past.pop()
        if past.is_irreversible(move):
            break
        (theirs if past.turn != board.turn else ours)[squares_from_board(past).tobytes()] += 1
    return theirs, ours


def terminal_outcomes(board: chess.Board, children: Children, history: History | None = None) -> list[str | None]:
    """For each child, how the game ends there (``CHECKMATE``, ``STALEMATE``,
    ``INSUFFICIENT``, ``REPETITION``, ``FIFTY``) or ``None``; python-chess
    confirms only the candidates that cheap necessary conditions leave.
    ``history``: :func:`recent_placements` of ``board``, if the caller has it."""
    n = len(children)
    out: list[str | None] = [None] * n
    if n == 0:
        return out
    scratch = board.copy(stack=False)
    moves = children.moves

    def no_legal_move(i: int) -> bool:
        scratch.push(moves[i])
        try:
            return not any(scratch.generate_legal_moves())
        finally:
            scratch.pop()

    # checkmate: only a checking move can mate
    for i in np.flatnonzero(children.check):
        if no_legal_move(int(i)):
            out[i] = CHECKMATE
    # stalemate: only where the opponent's mobility is low enough to be taken away
    quiet = np.flatnonzero(~children.check)
    if len(quiet):
        bound = np.where(children.castling, _STALEMATE_BOUND_CASTLING,
                         np.where(children.en_passant, _STALEMATE_BOUND_EP, _STALEMATE_BOUND_NORMAL))
        # counted only past the normal bound: castling and en passant (at most 4 moves)
        # are tested directly unless the count exceeds their larger bounds anyway
        mobile = 0 if board.is_check() else _mobile_pieces(board, _STALEMATE_BOUND_NORMAL)
        for i in quiet:
            if mobile <= bound[i] and no_legal_move(int(i)):
                out[i] = STALEMATE
    # insufficient material: only without pawns, rooks and queens
    kinds = np.abs(children.squares)
    bare = ~((kinds == 1) | (kinds == 4) | (kinds == 5)).any(axis=1)
    for i in np.flatnonzero(bare):
        if out[i] is None:
            scratch.push(moves[i])
            try:
                if scratch.is_insufficient_material():
                    out[i] = INSUFFICIENT
            finally:
                scratch.pop()
    # fifty-move rule: a claimable draw once the clock reaches 100 half-moves
    if board.halfmove_clock >= 99:
        for i in np.flatnonzero(~children.zeroing):
            if out[i] is None:
                out[i] = FIFTY
    # threefold repetition: only reversible moves to a placement seen twice already
    reversible = np.flatnonzero(~children.zeroing & ~children.castling)
    history = history or (recent_placements(board) if len(reversible) else None)
    if history is not None:
        seen = history[0]
        full = None
        for i in reversible:
            if out[i] is None and seen.get(children.squares[i].tobytes(), 0) >= 2:
                full = full or _recent(board)
                full.push(moves[i])
                try:
                    if full.is_repetition(3):
                        out[i] = REPETITION
                finally:
                    full.pop()
    return out


def opponent_claims(board: chess.Board, children: Children, outcomes: Sequence[str | None],
                    history: History | None = None) -> list[str | None]:
    """For each child that does not end the game: whether the opponent can then claim
    a draw with its reply (``OPPONENT_REPETITION``: a reply repeats a position a third
    time; ``OPPONENT_FIFTY``: a reply reaches the hundredth half-move), else ``None``.
    The opponent takes that draw when it is better for it, so such a child is worth
    at most 0 to the mover (:meth:`knights.engine.one_ply.OnePlyEngine.score_children`)."""
    n = len(children)
    out: list[str | None] = [None] * n
    candidates = [i for i in range(n) if outcomes[i] is None and not children.zeroing[i]]
    if not candidates:
        return out
    if board.halfmove_clock == 98:
        scratch = board.copy(stack=False)
        for i in candidates:
            scratch.push(children.moves[i])
            try:
                if scratch.can_claim_fifty_moves():
                    out[i] = OPPONENT_FIFTY
            finally:
                scratch.pop()
    history = history or recent_placements(board)
    if history is not None:
        ours = history[1]
        twice = [np.frombuffer(key, np.int8) for key, count in ours.items() if count >= 2]
        rest = [i for i in candidates if out[i] is None and not children.castling[i]]
        if twice and rest:
            placements = np.stack(twice)
            # a reversible reply moves one piece: the child differs from the repeated
            # placement on exactly two squares, the reply's from and to squares
            differ = (children.squares[rest][:, None, :] != placements[None]).sum(axis=2)
            them = -1 if board.turn == chess.WHITE else 1
            full = None
            for j in np.flatnonzero((differ == 2).any(axis=1)):
                i = rest[j]
                child = children.squares[i]
                replies = set()
                for r in np.flatnonzero(differ[j] == 2):
                    a, b = np.flatnonzero(child != placements[r])
                    if child[a] == 0:
                        a, b = b, a
                    if child[a] * them > 0 and child[b] == 0 and placements[r][b] == child[a]:
                        replies.add(chess.Move(int(a) ^ 56, int(b) ^ 56))
                if not replies:
                    continue
                full = full or _recent(board)
                full.push(children.moves[i])
                try:
                    for reply in replies:
                        if full.is_legal(reply):
                            full.push(reply)
                            try:
                                if full.is_repetition(3):
                                    out[i] = OPPONENT_REPETITION
                            finally:
                                full.pop()
                        if out[i] is not None:
                            break
                finally:
                    full.pop()
    return out


# -- the opponent's mate in one ----------------------------------------------------------------
def _checking_candidates(board: chess.Board) -> list[chess.Move]:
    """The side to move's legal moves that *can* give check (a superset of those that
    do): a piece landing where its kind attacks the enemy king, a move of the only
    piece between that king and a slider of the mover's (a discovered check), every
    promotion, castling and en passant. python-chess generates each group with masks,
    so the many moves that cannot check are never made."""
    them = board.turn
    king = board.king(not them)
    if king is None:
        return list(board.generate_legal_moves())
    occupied, own = board.occupied, board.occupied_co[them]
    diagonal = chess.BB_DIAG_ATTACKS[king][chess.BB_DIAG_MASKS[king] & occupied]
    straight = (chess.BB_RANK_ATTACKS[king][chess.BB_RANK_MASKS[king] & occupied]
                | chess.BB_FILE_ATTACKS[king][chess.BB_FILE_MASKS[king] & occupied])
    groups = [(board.knights & own, chess.BB_KNIGHT_ATTACKS[king]),
              (board.pawns & own, chess.BB_PAWN_ATTACKS[not them][king]),
              (board.bishops & own, diagonal), (board.rooks & own, straight),
              (board.queens & own, diagonal | straight)]
    # discovered checks: the one piece of ours between the king and our slider may go anywhere
    sliders = ((board.bishops | board.queens) & own & chess.BB_DIAG_ATTACKS[king][0]
               | (board.rooks | board.queens) & own & (chess.BB_RANK_ATTACKS[king][0] | chess.BB_FILE_ATTACKS[king][0]))
    lone = 0
    for slider in chess.scan_forward(sliders):
        between = chess.between(king, slider) & occupied
        if between and not between & (between - 1) and between & own:
            lone |= between
    promoting = board.pawns & own & (chess.BB_RANK_7 if them == chess.WHITE else chess.BB_RANK_2)
    groups.append((lone | promoting, chess.BB_ALL))
    seen: set[chess.Move] = set()
    out = []
    for from_mask, to_mask in groups:
        for move in board.generate_legal_moves(from_mask, to_mask):
            if move not in seen:
                seen.add(move)
                out.append(move)
    if board.ep_square is not None:
        out += [m for m in board.generate_legal_ep() if m not in seen]
    if board.castling_rights & own:
        out += [m for m in board.generate_castling_moves() if m not in seen]
    return out


def mates_in_one(board: chess.Board) -> bool:
    """Whether the side to move on ``board`` has a move that mates at once (``board``
    is left as it was).

    >>> mates_in_one(chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"))   # Ra8#
    True
    >>> mates_in_one(chess.Board("6k1/5pp1/7p/8/8/8/8/R5K1 w - - 0 1"))  # the king has h7
    False
    """
    for move in _checking_candidates(board):
        board.push(move)
        try:
            if board.is_check() and not any(board.generate_legal_moves()):
                return True
        finally:
            board.pop()
    return False


def opponent_mates(board: chess.Board, children: Children, outcomes: Sequence[str | None]) -> np.ndarray:
    """For each child that does not end the game: whether the opponent can mate with
    its reply, ``(N,)`` bool. The engine scores such a child as lost
    (:meth:`knights.engine.one_ply.OnePlyEngine.score_children`). A standard board asks the compiled
    board (:func:`knights.engine.compiled_board.opponent_mates`: the same answer, tested, at a fraction of the
    cost: the guard took the one-ply decision from 2.1 to about 3.9 ms in python-chess, 0.5 ms more
    compiled); any other (Chess960) plays :func:`mates_in_one` on python-chess's board."""
    from knights.engine.compiled_board import (
        opponent_mates as compiled_opponent_mates,  # numba: loaded when first asked
    )
    from knights.engine.compiled_board import standard

    out = np.zeros(len(children), bool)
    if standard(board):
        open_ = [i for i in range(len(children)) if outcomes[i] is None]
        out[open_] = compiled_opponent_mates(board, [children.moves[i] for i in open_])
        return out
    scratch = board.copy(stack=False)
    for i, move in enumerate(children.moves):
        if outcomes[i] is None:
            scratch.push(move)
            try:
                out[i] = mates_in_one(scratch)
            finally:
                scratch.pop()
    return out


# -- a finished game ---------------------------------------------------------------------------
def game_over(board: chess.Board) -> str | None:
    """Why the game on ``board`` is over, or ``None``: checkmate, stalemate,
    insufficient material, the 75-move and fivefold rules, and the draws a player
    may claim now (threefold repetition, fifty moves), which the engine scores as
    draws and lichess applies automatically."""
    ended = outcome(board)
    if ended is None:
        return None
    if ended.termination == chess.Termination.FIFTY_MOVES:
        return FIFTY
    return ended.termination.name.lower().replace("_", " ")


def result_of(board: chess.Board) -> str:
    """The PGN result of a finished game ("1-0", "0-1", "1/2-1/2") or "*"."""
    ended = outcome(board)
    return "*" if ended is None else ended.result()

