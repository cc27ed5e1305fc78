"""The bot: one ply, done right.

Every legal move's resulting position is evaluated in **one** batched call of an
:class:`~knights.evaluate.base.Evaluator`; White takes the highest value, Black the
lowest. Positions that end the game are scored exactly, never by the model::

    engine = OnePlyEngine(select_evaluator("EL/v8"), seed=1)
    decision = engine.choose(chess.Board())
    decision.move, decision.score, decision.candidates[:3]

Scores are pawns from White's side throughout (centipawns appear only in the UCI
front end).

Terminal positions
------------------
==========================================  =================================
the position after the move                 score (pawns, White's side)
==========================================  =================================
checkmate (the mover wins)                  ``+MATE_SCORE`` / ``-MATE_SCORE``
stalemate                                   ``0``
insufficient material (python-chess)        ``0``
threefold repetition (this move repeats)    ``0``
fifty-move rule (the clock reaches 100)     ``0``
anything else                               the evaluator's value, clipped to
                                            ``+-EVAL_LIMIT`` (+ capture bonus)
==========================================  =================================

``MATE_SCORE`` is 100 pawns: the training targets put a forced mate at 10, and the
margin (model values are clipped to +-99) makes a mate in one beat every other
move. Draws are exactly 0, so the bot steers into one only when every other move
is valued worse than 0 for it. A position after which the *opponent* can claim a
draw with its reply (its move would repeat a position a third time, or reach the
hundredth half-move) is worth at most 0 to the mover: the opponent takes the draw
when that is better for it (``min(value, 0)`` for White, ``max(value, 0)`` for
Black). So a winning bot does not let the opponent repeat its way out, and a losing
one gains nothing from it. Every draw here is one lichess applies automatically.

How it stays fast
-----------------
* The children's signed-squares arrays are made by applying each move to the
  parent's array, all moves at once in NumPy (castling, en passant and promotion
  patched in afterwards), not by a python-chess ``Board`` per candidate.
* Check is detected on those arrays, vectorised: the opponent's king does not move,
  so its knight squares, pawn squares and eight rays are fixed for the whole batch.
* python-chess is asked only where an answer can differ: a checking move is tested
  for mate; a quiet move is tested for stalemate only when the opponent's
  mobility is so low that one move could take it all away (see
  :func:`_mobile_pieces`); insufficient material only when no pawn, rook or
  queen is left; repetition only for reversible moves whose resulting placement
  already occurred twice (or, for the opponent's claim, is one piece move away
  from a placement that did); the fifty-move rule only when the clock is at 98-99.

Stochastic opening (the paper's table)
--------------------------------------
With ``stochastic=True`` the move is drawn by rank among the model-scored moves:

=====  ======  =========================================================
rank   weight  offered while ``board.fullmove_number`` is
=====  ======  =========================================================
1      65%     always (and it takes the weight of every row not offered)
2      20%     <= 7
3      10%     <= 5
4       5%     <= 3
=====  ======  =========================================================

"until move 7" therefore means *up to and including* the game's own move 7
(``board.fullmove_number <= 7``, the same for White's and Black's move): moves
1-3 draw 65/20/10/5, moves 4-5 70/20/10, moves 6-7 80/20, from move 8 on the best
move is always played. With fewer candidates than offered rows the weights of the
existing ranks are renormalised proportionally (2 legal moves at move 1:
0.65/0.85 and 0.20/0.85). A move that ends the game is never a random
alternative: when the best move ends the game (a mate in one, or a draw that is
better than everything else) it is played; draws ranked lower are left out of the
draw. Each engine has its own seeded ``numpy.random.Generator``.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import chess
import numpy as np

from knights.board.arrays import squares_from_board
from knights.evaluate.base import Evaluator
from knights.board.positions import Positions

MATE_SCORE = 100.0
"""Score of a checkmate, pawns (positive: White mates)."""
DRAW_SCORE = 0.0
EVAL_LIMIT = 99.0
"""Model values (plus the capture bonus) are clipped to +-EVAL_LIMIT, below a mate."""
ORIGINAL_CAPTURE_BONUS = 0.15
"""The shipped bot's bonus to captures, pawns, for the side to move (off by default)."""

OPENING_TABLE: tuple[tuple[float, int | None], ...] = ((0.65, None), (0.20, 7), (0.10, 5), (0.05, 3))
"""(weight, last fullmove number it is offered at, inclusive) for ranks 1-4."""

CHECKMATE, STALEMATE, INSUFFICIENT, REPETITION, FIFTY = (
    "checkmate", "stalemate", "insufficient material", "threefold repetition", "fifty-move rule")
OPPONENT_REPETITION, OPPONENT_FIFTY = ("threefold repetition the opponent can claim",
                                       "fifty-move draw the opponent can claim")


class EngineError(ValueError):
    """Bad input to the engine (no legal move, an invalid FEN or position): one clear line."""


# -- the stochastic opening ------------------------------------------------------------
def opening_weights(fullmove_number: int, n_candidates: int) -> np.ndarray:
    """Probabilities of playing the 1st, 2nd, ... ranked move at this move number.

    >>> opening_weights(1, 20).round(2).tolist()
    [0.65, 0.2, 0.1, 0.05]
    >>> opening_weights(6, 20).round(2).tolist()
    [0.8, 0.2]
    >>> opening_weights(1, 2).round(4).tolist()
    [0.7647, 0.2353]
    """
    if n_candidates < 1:
        raise EngineError("no candidate moves to choose from")
    offered = [w for w, last in OPENING_TABLE[1:] if fullmove_number <= last]
    # rows are nested (7 > 5 > 3), so the offered ones are a prefix of ranks 2-4
    weights = np.array([1.0 - sum(offered), *offered])[:n_candidates]
    return weights / weights.sum()


# -- children: the positions after each move, as arrays ----------------------------------
_KNIGHT = ((-2, -1), (-2, 1), (-1, -2), (-1, 2), (1, -2), (1, 2), (2, -1), (2, 1))
_DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))  # 4 orthogonal, 4 diagonal
_PAD = 64  # an extra, always empty column of the children array


def _on_board(r: int, c: int) -> bool:
    return 0 <= r < 8 and 0 <= c < 8


def _king_table(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For a king on our square ``k`` (a8 = 0): knight squares, the squares of White
    and of Black pawns that would attack it, and its eight rays ``(8, 7)`` padded
    with the empty column."""
    r, c = divmod(k, 8)
    knights = np.array([(r + dr) * 8 + c + dc for dr, dc in _KNIGHT if _on_board(r + dr, c + dc)], np.intp)
    # White pawns move towards row 0, so a White pawn attacking (r, c) stands on row r + 1
    white_pawns = np.array([(r + 1) * 8 + c + dc for dc in (-1, 1) if _on_board(r + 1, c + dc)], np.intp)
    black_pawns = np.array([(r - 1) * 8 + c + dc for dc in (-1, 1) if _on_board(r - 1, c + dc)], np.intp)
    rays = np.full((8, 7), _PAD, np.intp)
    for d, (dr, dc) in enumerate(_DIRECTIONS):
        rr, cc, j = r + dr, c + dc, 0
        while _on_board(rr, cc):
            rays[d, j] = rr * 8 + cc
            rr, cc, j = rr + dr, cc + dc, j + 1
    return knights, white_pawns, black_pawns, rays


_KING_TABLES = [_king_table(k) for k in range(64)]
_RAY_OFFSETS = np.arange(0, 56, 7)


@dataclass
class Children:
    """The positions after ``moves`` (one row per move)."""

    moves: list[chess.Move]
    squares: np.ndarray   # int8 (n, 64) signed squares, a8 = 0
    check: np.ndarray     # bool (n,) the move gives check
    capture: np.ndarray   # bool (n,) the move captures (en passant included)
    zeroing: np.ndarray   # bool (n,) capture or pawn move (resets the fifty-move clock)
    castling: np.ndarray  # bool (n,)
    en_passant: np.ndarray  # bool (n,)

    def __len__(self) -> int:
        return len(self.moves)


def expand(board: chess.Board, moves: Sequence[chess.Move] | None = None) -> Children:
    """Apply every move (legal in ``board``; all legal moves by default) to the
    board's signed squares array, vectorised. Equal, row for row, to
    ``squares_from_board`` of the board after ``push(move)``."""
    moves = list(board.legal_moves) if moves is None else list(moves)
    n = len(moves)
    sign = 1 if board.turn == chess.WHITE else -1
    parent = squares_from_board(board)
    kids = np.empty((n, 65), np.int8)
    kids[:, :64] = parent
    kids[:, _PAD] = 0
    if n == 0:
        empty = np.zeros(0, bool)
        return Children(moves, kids[:, :64], empty, empty, empty, empty, empty)
    frm = np.fromiter((m.from_square ^ 56 for m in moves), np.intp, n)   # python-chess a1 = 0 -> ours a8 = 0
    to = np.fromiter((m.to_square ^ 56 for m in moves), np.intp, n)
    promo = np.fromiter((m.promotion or 0 for m in moves), np.int8, n)
    rows = np.arange(n)
    moving = parent[frm]
    target = parent[to]
    kind = np.abs(moving)
    pawn = kind == 1
    # castling: a king moving two files (standard) or onto its own rook (Chess960)
    castling = (kind == 6) & ((np.abs(frm % 8 - to % 8) > 1) | (target * sign == 4))
    en_passant = pawn & (frm % 8 != to % 8) & (target == 0)
    capture = ((target * sign) < 0) | en_passant
    kids[rows, frm] = 0
    kids[rows, to] = np.where(promo > 0, promo * sign, moving)
    for i in np.flatnonzero(en_passant):
        kids[i, to[i] + 8 * sign] = 0   # the captured pawn stands behind the target square
    for i in np.flatnonzero(castling):
        row = frm[i] // 8 * 8
        kingside = to[i] % 8 > frm[i] % 8
        rook_from = to[i] if target[i] * sign == 4 else row + (7 if kingside else 0)
        kids[i, to[i]] = 0
        kids[i, rook_from] = 0
        kids[i, row + (6 if kingside else 2)] = 6 * sign
        kids[i, row + (5 if kingside else 3)] = 4 * sign
    check = _gives_check(kids, parent, sign)
    return Children(moves, kids[:, :64], check, capture, pawn | capture, castling, en_passant)


def _gives_check(kids: np.ndarray, parent: np.ndarray, sign: int) -> np.ndarray:
    """Whether the opponent's king is attacked in each child (``kids`` has the pad column)."""
    n = kids.shape[0]
    where = np.flatnonzero(parent == -6 * sign)
    if len(where) != 1:
        return np.zeros(n, bool)
    knights, white_pawns, black_pawns, rays = _KING_TABLES[int(where[0])]
    check = (kids[:, knights] == 2 * sign).any(axis=1)
    check |= (kids[:, white_pawns if sign > 0 else black_pawns] == sign).any(axis=1)
    along = kids[:, rays].reshape(n, 56)                    # 8 rays of 7 squares
    first = (along.reshape(n, 8, 7) != 0).argmax(axis=2)    # first occupied square of each ray
    piece = along[np.arange(n)[:, None], first + _RAY_OFFSETS]   # its piece; 0 when the ray is empty
    straight, diagonal = piece[:, :4], piece[:, 4:]
    check |= ((straight == 4 * sign) | (straight == 5 * sign)).any(axis=1)
    check |= ((diagonal == 3 * sign) | (diagonal == 5 * sign)).any(axis=1)
    return check


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


History = tuple[Counter, Counter]


def _history(board: chess.Board) -> History:
    """Placements (signed squares bytes) of the positions since the last irreversible
    move: ``(theirs, ours)``, those with the opponent to move (what a child could
    repeat) and those with the side to move, the current one included (what the
    opponent's reply to a child could repeat)."""
    theirs: Counter = Counter()
    ours: Counter = Counter({squares_from_board(board).tobytes(): 1})
    past = _recent(board)
    while past.move_stack:
        move = past.pop()
        if past.is_irreversible(move):
            break
        (theirs if past.turn != board.turn else ours)[squares_from_board(past).tobytes()] += 1
    return theirs, ours


def _needs_history(board: chess.Board) -> bool:
    return board.halfmove_clock >= 3 and bool(board.move_stack)


def terminal_outcomes(board: chess.Board, children: Children, history: History | None = None) -> list[str | None]:
    """For each child, how the game ends there (``CHECKMATE``, ``STALEMATE``,
    ``INSUFFICIENT``, ``REPETITION``, ``FIFTY``) or ``None``; python-chess
    confirms only the candidates that cheap necessary conditions leave."""
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
    if _needs_history(board):
        reversible = np.flatnonzero(~children.zeroing & ~children.castling)
        if len(reversible):
            seen = (history or _history(board))[0]
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
    at most 0 to the mover (:meth:`OnePlyEngine.score_children`)."""
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
    if _needs_history(board):
        ours = (history or _history(board))[1]
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


def game_over(board: chess.Board) -> str | None:
    """Why the game on ``board`` is over, or ``None``: checkmate, stalemate,
    insufficient material, the 75-move and fivefold rules, and the draws a player
    may claim now (threefold repetition, fifty moves), which the engine scores as
    draws and lichess applies automatically."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return outcome.termination.name.lower().replace("_", " ")
    if board.halfmove_clock >= 100:
        return FIFTY
    if board.is_repetition(3):
        return REPETITION
    return None


def result_of(board: chess.Board) -> str:
    """The PGN result of a finished game ("1-0", "0-1", "1/2-1/2") or "*"."""
    reason = game_over(board)
    if reason is None:
        return "*"
    if board.is_checkmate():
        return "0-1" if board.turn == chess.WHITE else "1-0"
    return "1/2-1/2"


# -- the engine ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Decision:
    """What the engine chose, and why."""

    move: chess.Move
    score: float                               # pawns, White's side, of the position after ``move``
    candidates: list[tuple[chess.Move, float]]  # every candidate, best first for the side to move
    rank: int = 0                              # index of ``move`` in ``candidates`` (0 = the best)
    outcomes: dict[chess.Move, str] = field(default_factory=dict)   # candidates that end the game
    claims: dict[chess.Move, str] = field(default_factory=dict)     # after which the opponent can claim a draw

    @property
    def mates(self) -> bool:
        """Whether ``move`` checkmates."""
        return self.outcomes.get(self.move) == CHECKMATE

    def score_for(self, color: chess.Color) -> float:
        """``score`` from ``color``'s side."""
        return self.score if color == chess.WHITE else -self.score


_FATAL_STATUS = (chess.STATUS_EMPTY | chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING
                 | chess.STATUS_TOO_MANY_KINGS | chess.STATUS_PAWNS_ON_BACKRANK | chess.STATUS_OPPOSITE_CHECK)


def _status_text(status: int) -> str:
    names = [name[len("STATUS_"):].lower().replace("_", " ") for name in dir(chess)
             if name.startswith("STATUS_") and name != "STATUS_VALID" and status & getattr(chess, name)]
    return ", ".join(sorted(names))


def board_from_fen(fen: str, moves: Iterable[str] = ()) -> chess.Board:
    """A board from a FEN (or ``"startpos"``) and UCI or SAN moves, with a clear
    :class:`EngineError` for a bad FEN, an impossible position or an illegal move."""
    text = (fen or "").strip()
    try:
        board = chess.Board() if text in ("startpos", "start") else chess.Board(text)
    except ValueError as exc:
        raise EngineError(f"invalid FEN {fen!r}: {exc}") from None
    check_position(board)
    for token in moves:
        board.push(parse_move(board, token))
    return board


def parse_move(board: chess.Board, text: str) -> chess.Move:
    """A legal move of ``board`` from UCI (``e2e4``, ``e7e8q``) or SAN (``Nf3``, ``O-O``);
    :class:`EngineError` otherwise (a null move included)."""
    token = text.strip()
    for parse in (board.parse_uci, board.parse_san):
        try:
            move = parse(token)
        except ValueError:
            continue
        if move and move in board.legal_moves:
            return move
    raise EngineError(f"illegal move {token!r} in {board.fen()}")


def check_position(board: chess.Board) -> None:
    """Raise :class:`EngineError` if ``board`` is not a position the engine can play."""
    if not isinstance(board, chess.Board):
        raise EngineError(f"expected a chess.Board, got {type(board).__name__}")
    if board.uci_variant != "chess":
        raise EngineError(f"only standard chess is supported, not {board.uci_variant}")
    status = board.status()
    if status & _FATAL_STATUS:
        raise EngineError(f"impossible position ({_status_text(status & _FATAL_STATUS)}): {board.fen()}")


class OnePlyEngine:
    """Evaluate every legal move's resulting position in one batch; pick by the
    paper's stochastic opening or, from move 8 (or with ``stochastic=False``), the best.

    ``evaluator``: an :class:`~knights.evaluate.base.Evaluator`, or a name for
    :func:`select_evaluator` (``None``: the default, with its fallback).
    ``capture_bonus``: pawns added to captures for the side to move (the shipped bot
    used :data:`ORIGINAL_CAPTURE_BONUS`; 0 by default).
    """

    def __init__(self, evaluator: Evaluator | str | None = None, *, stochastic: bool = True,
                 seed: int | None = None, capture_bonus: float = 0.0) -> None:
        if evaluator is None or isinstance(evaluator, str):
            evaluator = select_evaluator(evaluator)
        if not callable(getattr(evaluator, "evaluate", None)):
            raise EngineError(f"{evaluator!r} is not an evaluator (it has no evaluate(positions) method)")
        self.evaluator = evaluator
        self.stochastic = bool(stochastic)
        self.capture_bonus = float(capture_bonus)
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    @property
    def name(self) -> str:
        return str(getattr(self.evaluator, "name", type(self.evaluator).__name__))

    def reseed(self, seed: int | None) -> None:
        """Restart the opening randomness (``None``: fresh entropy)."""
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    # -- scoring -------------------------------------------------------------------------
    def score_children(self, board: chess.Board, children: Children
                       ) -> tuple[np.ndarray, list[str | None], list[str | None]]:
        """Scores (pawns, White's side) of the children, their game-ending outcomes and
        the draws the opponent could claim after them (see :func:`opponent_claims`).
        The evaluator is called once, on the children that do not end the game."""
        n = len(children)
        history = _history(board) if _needs_history(board) else None
        outcomes = terminal_outcomes(board, children, history)
        claims = opponent_claims(board, children, outcomes, history)
        scores = np.zeros(n, np.float64)
        sign = 1.0 if board.turn == chess.WHITE else -1.0
        open_ = np.array([o is None for o in outcomes], bool)
        idx = np.flatnonzero(open_)
        if len(idx):
            positions = Positions(
                squares=np.ascontiguousarray(children.squares[idx]),
                white=np.full(len(idx), 0 if board.turn == chess.WHITE else 1, np.int8),
                check=children.check[idx].astype(np.int8),
                capture=np.zeros(len(idx), np.int8))
            values = np.asarray(self.evaluator.evaluate(positions), dtype=np.float64).reshape(-1)
            if values.shape[0] != len(idx):
                raise EngineError(f"evaluator {self.name} returned {values.shape[0]} values "
                                  f"for {len(idx)} positions")
            values = np.nan_to_num(values, nan=0.0, posinf=EVAL_LIMIT, neginf=-EVAL_LIMIT)
            if self.capture_bonus:
                values = values + sign * self.capture_bonus * children.capture[idx]
            scores[idx] = np.clip(values, -EVAL_LIMIT, EVAL_LIMIT)
        for i, outcome in enumerate(outcomes):
            if outcome == CHECKMATE:
                scores[i] = sign * MATE_SCORE
            elif outcome is not None:
                scores[i] = DRAW_SCORE
            elif claims[i] is not None:   # the opponent may take a draw instead: at most 0 for us
                scores[i] = min(scores[i], DRAW_SCORE) if sign > 0 else max(scores[i], DRAW_SCORE)
        return scores, outcomes, claims

    # -- choosing --------------------------------------------------------------------------
    def choose(self, board: chess.Board, root_moves: Sequence[chess.Move] | None = None) -> Decision:
        """The move to play on ``board`` (not modified). ``root_moves``, when a
        non-empty list, restricts the candidates (its legal moves; all legal moves
        if none of them is legal)."""
        check_position(board)
        moves = list(board.legal_moves)
        if not moves:
            why = "checkmate" if board.is_check() else "stalemate"
            raise EngineError(f"no legal moves: the game is over ({why}) in {board.fen()}")
        if root_moves:
            allowed = set(root_moves)
            restricted = [m for m in moves if m in allowed]
            moves = restricted or moves
        children = expand(board, moves)
        scores, outcomes, claims = self.score_children(board, children)
        sign = 1.0 if board.turn == chess.WHITE else -1.0
        order = np.argsort(-sign * scores, kind="stable")
        rank = self._pick_rank(board, order, outcomes)
        chosen = int(order[rank])
        candidates = [(moves[i], float(scores[i])) for i in order]
        terminal = {moves[i]: o for i, o in enumerate(outcomes) if o is not None}
        claimable = {moves[i]: c for i, c in enumerate(claims) if c is not None}
        return Decision(moves[chosen], float(scores[chosen]), candidates, rank, terminal, claimable)

    def _pick_rank(self, board: chess.Board, order: np.ndarray, outcomes: list[str | None]) -> int:
        if not self.stochastic or outcomes[int(order[0])] is not None:
            return 0
        pool = [r for r, i in enumerate(order) if outcomes[int(i)] is None]
        weights = opening_weights(board.fullmove_number, len(pool))
        if len(weights) == 1:
            return pool[0]
        return pool[int(self.rng.choice(len(weights), p=weights))]

    def choose_fen(self, fen: str, moves: Iterable[str] = ()) -> Decision:
        """:meth:`choose` for a FEN (or ``"startpos"``) and moves played from it."""
        return self.choose(board_from_fen(fen, moves))

    def best_move(self, board: chess.Board) -> chess.Move:
        return self.choose(board).move
