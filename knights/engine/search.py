"""Search: the paper's future work. Alpha-beta over any evaluator, leaves in batches.

The one-ply bot (:class:`~knights.engine.one_ply.OnePlyEngine`) looks at the positions
after each of its moves and stops there, so it cannot see a reply. :class:`SearchEngine`
looks further with the classical recipe, written to be read in one sitting:

* **negamax alpha-beta** with **iterative deepening** (depth 1, 2, 3, ... until the time
  or the depth runs out) and **principal-variation search** (the first move with a full
  window, the rest with a null window, re-searched only when they beat it);
* a **quiescence search** at the horizon: the side to move may "stand pat" on the
  evaluator's value or try captures and queen promotions, so no line ends in the middle of
  an exchange; in check at its first ply it tries every evasion instead (no standing pat);
* **move ordering**: the hash move, then captures by most valuable victim / least
  valuable attacker, then two killer moves per ply, then the history table; at the last
  full ply the children's evaluations (which are there anyway) order the moves;
* a **transposition table** keyed by incrementally updated Zobrist hashes
  (:mod:`knights.engine.zobrist`), **mate-distance** scores (a shorter mate is better),
  **repetition** (any position already seen in the game or on the current line scores 0)
  and the **fifty-move** rule;
* **leaves in batches**: a node at the horizon evaluates *all* its children in one call of
  the evaluator (the interface is batched; one position per call would pay the network's
  fixed cost, about 0.75 ms for EL/v10, every time), and so does a quiescence node for its
  captures. Values are cached by hash, so the next iteration does not pay for them again.

Scores inside the search are integer centipawns from the side to move's view; a mate in
``n`` plies is ``MATE - n``. The evaluator's pawns (White's side) are turned into them in
one place, :meth:`SearchEngine._evaluate_children`.

Depth 1 is exactly the one-ply bot: with ``depth=1`` the decision is
:meth:`OnePlyEngine.choose`'s, stochastic opening included (tests pin it). Deeper, the
stochastic opening keeps the paper's table but draws only among the moves that the search
values within :data:`OPENING_MARGIN` of the best, so a random pick is never a blunder the
search has seen.

    >>> engine = SearchEngine("material", depth=3, stochastic=False)
    >>> engine.choose(chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")).move.uci()
    'a1a8'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import chess
import numpy as np

from knights.board.children import expand
from knights.board.outcome import rule_draw
from knights.board.pieces import CENTIPAWNS
from knights.board.positions import Positions, positions_from_boards
from knights.engine.clock import MOVETIME_SOFT_SHARE
from knights.engine.constants import (
    DELTA,
    EVAL_LIMIT,
    INF,
    LMR_AFTER,
    LMR_MIN_DEPTH,
    MATE,
    MATE_BOUND,
    MATE_SCORE,
    MAX_PLY,
    NULL_MIN_DEPTH,
    NULL_REDUCTION,
    OPENING_MARGIN,
    REVERSE_FUTILITY_DEPTH,
    REVERSE_FUTILITY_MARGIN,
    UNLIMITED_DEPTH,
)
from knights.engine.one_ply import OPENING_MOVES, Decision, OnePlyEngine, opening_weights
from knights.engine.user_input import EngineError
from knights.engine.zobrist import hash_after, hash_after_null, zobrist
from knights.evaluate.base import Evaluator, finite_evaluations

MEASURE_FEN = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 9"
"""The middlegame position :meth:`SearchEngine.measure_one_ply` times a decision on."""

EVAL_CAP = int(EVAL_LIMIT * 100)
MAX_QPLY = 12
"""Quiescence plies at most (captures run out long before in practice)."""
CHECK_EVERY = 4
"""Nodes between two looks at the stop flag (the clock is read at every node). A node over a network
costs a batched evaluation, a millisecond or more: every 4 nodes a stop is seen within a few milliseconds."""
TT_ENTRIES = 500_000
EVAL_ENTRIES = 1_000_000
KILLER_BONUS = 50
EXACT, LOWER, UPPER = 0, 1, 2


class _Stop(Exception):
    """Raised inside the search when the time, the node budget or a stop request ends it."""


@dataclass(frozen=True)
class SearchLimits:
    """When one search ends. Seconds count from the call; ``None``: no such limit.

    ``soft``: no new iteration starts after it; ``hard``: the search stops at once (the best
    move of the deepest finished iteration is played). ``depth`` and ``nodes`` as UCI's;
    ``depth`` 0: the one-ply decision alone, nothing searched after it (what the UCI front end
    asks for when the clock leaves no more: :data:`~knights.engine.clock.ONE_PLY_FLOOR`)."""

    depth: int | None = None
    nodes: int | None = None
    soft: float | None = None
    hard: float | None = None

    @classmethod
    def movetime(cls, seconds: float) -> SearchLimits:
        """A fixed time a move: no iteration starts after 60% of it, a stop at ``seconds`` (letting every iteration
        run into the deadline was measured not to pay: ``make time-use``, ``report/results/time_use.json``)."""
        return cls(soft=seconds * MOVETIME_SOFT_SHARE, hard=seconds)


class Control:
    """What may end a search from outside: a stop request, or a deadline set while it runs
    (UCI's ``stop`` and ``ponderhit``). The UCI front end shares one across processes; a
    plain call needs none."""

    def should_stop(self) -> bool:
        return False

    def deadlines(self) -> tuple[float, float]:
        """Absolute ``time.monotonic()`` soft and hard deadlines (``inf``: none)."""
        return float("inf"), float("inf")


@dataclass(frozen=True)
class Iteration:
    """What one finished iteration found (UCI's ``info`` line)."""

    depth: int
    seldepth: int
    score: int              # centipawns from the side to move's view (mates: MATE - plies)
    nodes: int
    seconds: float
    pv: tuple[chess.Move, ...]

    @property
    def mate_in(self) -> int | None:
        """Moves to mate (negative: being mated), or ``None``."""
        if abs(self.score) <= MATE_BOUND:
            return None
        plies = MATE - abs(self.score)
        return (plies + 1) // 2 if self.score > 0 else -((plies + 1) // 2)

    def uci(self) -> str:
        score = f"mate {self.mate_in}" if self.mate_in is not None else f"cp {self.score}"
        ms = max(1, round(self.seconds * 1000))
        pv = " ".join(m.uci() for m in self.pv)
        return (f"info depth {self.depth} seldepth {self.seldepth} score {score} nodes {self.nodes} "
                f"nps {int(self.nodes * 1000 / ms)} time {ms} pv {pv}")


@dataclass
class Counters:
    """Where a search spent its time: evaluator calls against everything else."""

    nodes: int = 0
    eval_calls: int = 0
    eval_positions: int = 0
    eval_seconds: float = 0.0
    seconds: float = 0.0

    @property
    def eval_share(self) -> float:
        return self.eval_seconds / self.seconds if self.seconds else 0.0


def _to_tt(score: int, ply: int) -> int:
    return score + ply if score > MATE_BOUND else score - ply if score < -MATE_BOUND else score


def _from_tt(score: int, ply: int) -> int:
    return score - ply if score > MATE_BOUND else score + ply if score < -MATE_BOUND else score


def _victim_value(board: chess.Board, move: chess.Move) -> int:
    if board.is_en_passant(move):
        return CENTIPAWNS[chess.PAWN]
    taken = board.piece_type_at(move.to_square)
    gain = CENTIPAWNS[taken] if taken else 0
    if move.promotion:
        gain += CENTIPAWNS[move.promotion] - CENTIPAWNS[chess.PAWN]
    return gain


def _losing_capture(board: chess.Board, move: chess.Move) -> bool:
    """A capture that gives more than it takes if answered: a piece worth more than its
    victim taking on a square the opponent defends (promotions are never pruned)."""
    if move.promotion:
        return False
    attacker = board.piece_type_at(move.from_square) or chess.PAWN
    return (CENTIPAWNS[attacker] > _victim_value(board, move)
            and board.is_attacked_by(not board.turn, move.to_square))


class SearchEngine:
    """Iterative-deepening alpha-beta over an evaluator; ``choose`` returns a
    :class:`~knights.engine.one_ply.Decision` like the one-ply bot's.

    ``depth``: the deepest iteration (1: exactly :class:`OnePlyEngine`); ``movetime``:
    seconds a move when :meth:`choose` gets no limits. The transposition table and the
    evaluation cache live as long as the engine (:meth:`new_game` clears them)."""

    def __init__(self, evaluator: Evaluator | str | None = None, *, depth: int = UNLIMITED_DEPTH,
                 movetime: float | None = None, stochastic: bool = True, seed: int | None = None,
                 capture_bonus: float = 0.0) -> None:
        if depth < 1:
            raise EngineError(f"search depth must be at least 1, not {depth}")
        self.one_ply = OnePlyEngine(evaluator, stochastic=stochastic, seed=seed, capture_bonus=capture_bonus)
        self.evaluator = self.one_ply.evaluator
        self.depth = int(depth)
        self.movetime = movetime
        self.counters = Counters()
        self.last: Iteration | None = None
        self.tt: dict[int, tuple[int, int, int, chess.Move | None]] = {}
        self.evals: dict[int, int] = {}
        self._reset_tables()
        # the state of the search in progress (set by choose)
        self._control = Control()
        self._node_limit: int | None = None
        self._hard = float("inf")
        self._seen: dict[int, int] = {}            # positions on the line searched now, the root included
        self._history: dict[int, int] = {}         # earlier positions of the game, counted
        self._pv: list[list[chess.Move]] = []
        self._seldepth = 0
        self._root_best: tuple[chess.Move, int] | None = None
        self._root_searched: set[chess.Move] = set()
        self.one_ply_seconds = 0.0                  # what the last call's one-ply decision cost
        self._root_static: dict[chess.Move, int] = {}

    # -- the one-ply engine's options, shared ----------------------------------------------
    @property
    def name(self) -> str:
        return self.one_ply.name

    @property
    def stochastic(self) -> bool:
        return self.one_ply.stochastic

    @stochastic.setter
    def stochastic(self, value: bool) -> None:
        self.one_ply.stochastic = bool(value)

    @property
    def capture_bonus(self) -> float:
        return self.one_ply.capture_bonus

    @capture_bonus.setter
    def capture_bonus(self, value: float) -> None:
        self.one_ply.capture_bonus = float(value)

    @property
    def seed(self) -> int | None:
        return self.one_ply.seed

    def reseed(self, seed: int | None) -> None:
        self.one_ply.reseed(seed)

    def new_game(self) -> None:
        """Forget the transposition table and the evaluation cache."""
        self.tt.clear()
        self.evals.clear()

    def _reset_tables(self) -> None:
        self.killers: list[list[chess.Move | None]] = [[None, None] for _ in range(MAX_PLY + MAX_QPLY + 2)]
        self.history: dict[tuple[bool, int, int], int] = {}

    # -- evaluation, in batches ---------------------------------------------------------------
    def _evaluate_children(self, board: chess.Board, moves: Sequence[chess.Move], hashes: Sequence[int]) -> list[int]:
        """The evaluator's value of the position after each move, centipawns from the view of
        the side to move *there*; one evaluator call for those not in the cache."""
        cache = self.evals
        if len(cache) > EVAL_ENTRIES:        # full: start again (before looking, so every hash stays)
            cache.clear()
        missing = [i for i, h in enumerate(hashes) if h not in cache]
        if missing:
            kids = expand(board, [moves[i] for i in missing])
            n = len(missing)
            positions = Positions(squares=kids.squares, white=np.full(n, board.turn == chess.BLACK, np.int8),
                                  check=kids.check.astype(np.int8), capture=np.zeros(n, np.int8))
            started = time.perf_counter()
            values = np.asarray(self.evaluator.evaluate(positions), dtype=np.float64).reshape(-1)
            c = self.counters
            c.eval_seconds += time.perf_counter() - started
            c.eval_calls += 1
            c.eval_positions += n
            if values.shape[0] != n:
                raise EngineError(f"evaluator {self.name} returned {values.shape[0]} values for {n} positions")
            values = finite_evaluations(values, self.name)   # never a NaN read as 0.00
            cps = np.clip(np.rint(values * 100), -EVAL_CAP, EVAL_CAP).astype(int).tolist()
            for i, cp in zip(missing, cps, strict=True):
                cache[hashes[i]] = cp            # White's view
        sign = -1 if board.turn == chess.WHITE else 1   # the child's side to move is the other one
        return [sign * cache[h] for h in hashes]

    def _static(self, board: chess.Board, h: int) -> int:
        """The evaluator's value of ``board`` itself (side to move's view); rare: the
        search takes a node's value from its parent's batch whenever it can."""
        if h not in self.evals:
            value = float(np.asarray(self.evaluator.evaluate(positions_from_boards([board]))).reshape(-1)[0])
            self.evals[h] = int(np.clip(round(value * 100), -EVAL_CAP, EVAL_CAP))
        return self.evals[h] if board.turn == chess.WHITE else -self.evals[h]

    # -- the clock ------------------------------------------------------------------------------
    def _tick(self) -> None:
        c = self.counters
        c.nodes += 1
        if self._node_limit is not None and c.nodes >= self._node_limit:
            raise _Stop
        if time.monotonic() >= self._hard:
            raise _Stop
        if c.nodes % CHECK_EVERY == 0:
            if self._control.should_stop():
                raise _Stop
            self._hard = min(self._hard, self._control.deadlines()[1])   # ponderhit may have set one

    # -- ordering ---------------------------------------------------------------------------------
    def _order(self, board: chess.Board, moves: list[chess.Move], hash_move: chess.Move | None, ply: int,
               statics: list[int] | None) -> list[int]:
        """Indices of ``moves``, most promising first."""
        killers = self.killers[ply]
        history = self.history
        turn = board.turn

        def key(i: int) -> int:
            move = moves[i]
            if move == hash_move:
                return -10_000_000
            if statics is not None:                      # the children's values are known: use them
                bonus = KILLER_BONUS if move in killers else 0   # (lower for the child = better for us)
                return statics[i] - bonus
            if board.is_capture(move) or move.promotion:
                attacker = board.piece_type_at(move.from_square) or chess.PAWN
                return -1_000_000 - 10 * _victim_value(board, move) + CENTIPAWNS[attacker] // 10
            if move == killers[0]:
                return -900_000
            if move == killers[1]:
                return -800_000
            return -history.get((turn, move.from_square, move.to_square), 0)

        return sorted(range(len(moves)), key=key)

    # -- the search -------------------------------------------------------------------------------
    def _draw(self, board: chess.Board, h: int) -> bool:
        """A draw by the rules, or a repetition: of a position on the current line (a cycle the
        side that wants it can repeat), or of one the game has already seen twice."""
        return h in self._seen or self._history.get(h, 0) >= 2 or rule_draw(board)

    def _search(self, board: chess.Board, depth: int, alpha: int, beta: int, ply: int, h: int,
                static: int | None, pv_node: bool) -> int:
        """Negamax alpha-beta: the value of ``board`` for the side to move, exact when it lies
        inside ``(alpha, beta)``. ``static``: the evaluator's value of ``board`` (from its
        parent's batch), or ``None`` when none was made."""
        self._tick()
        self._pv[ply] = []
        if ply > self._seldepth:
            self._seldepth = ply
        if ply and self._draw(board, h):
            return 0
        alpha, beta = max(alpha, -MATE + ply), min(beta, MATE - ply - 1)   # no mate can be faster
        if alpha >= beta:
            return alpha
        in_check = board.is_check()
        if in_check and ply < MAX_PLY:
            depth += 1                                       # look one ply further out of a check
        if depth <= 0 or ply >= MAX_PLY:
            return self._quiesce(board, alpha, beta, ply, h, static, 0)
        entry = self.tt.get(h)
        hash_move = None
        if entry is not None:
            e_depth, flag, value, hash_move = entry
            value = _from_tt(value, ply)
            if e_depth >= depth and not pv_node and (
                    flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha)):
                return value
        if not pv_node and not in_check and static is not None and abs(beta) < MATE_BOUND:
            # reverse futility: far enough above beta that one ply more will not bring it down
            if depth <= REVERSE_FUTILITY_DEPTH and static - REVERSE_FUTILITY_MARGIN * depth >= beta:
                return static
            # null move: if passing still holds beta, a real move will (not in pawn endings: zugzwang)
            if depth >= NULL_MIN_DEPTH and static >= beta and self._has_pieces(board):
                null_hash = hash_after_null(board, h)
                board.push(chess.Move.null())
                try:
                    score = -self._search(board, depth - 1 - NULL_REDUCTION, -beta, -beta + 1, ply + 1,
                                          null_hash, -static, False)
                finally:
                    board.pop()
                if score >= beta:
                    return beta
        moves = list(board.generate_legal_moves())
        if not moves:
            return -(MATE - ply) if in_check else 0
        hashes = [hash_after(board, h, m) for m in moves]
        statics = self._evaluate_children(board, moves, hashes)   # one call: every child at once
        order = self._order(board, moves, hash_move, ply, statics)
        best, best_move, flag = -INF, None, UPPER
        seen = self._seen
        seen[h] = seen.get(h, 0) + 1
        try:
            for n, i in enumerate(order):
                move = moves[i]
                quiet = not (board.is_capture(move) or move.promotion)
                if (depth == 1 and n and quiet and -statics[i] <= alpha and hashes[i] not in seen
                        and not board.gives_check(move)):
                    best = max(best, -statics[i])   # the reply may stand pat on this: it cannot raise alpha
                    continue
                reduce = (depth >= LMR_MIN_DEPTH and n >= LMR_AFTER and quiet and not in_check
                          and move not in self.killers[ply] and not board.gives_check(move))
                board.push(move)
                try:
                    score = self._child(board, depth, alpha, beta, ply, hashes[i], statics[i], pv_node and n == 0,
                                        first=n == 0, reduce=reduce)
                finally:
                    board.pop()
                if score > best:
                    best, best_move = score, move
                    if score > alpha:
                        alpha, flag = score, EXACT
                        self._pv[ply] = [move, *self._pv[ply + 1]]
                        if score >= beta:
                            flag = LOWER
                            if quiet:
                                self._reward(board, move, ply, depth)
                            break
        finally:
            seen[h] -= 1
            if not seen[h]:
                del seen[h]
        if len(self.tt) > TT_ENTRIES:
            self.tt.clear()
        self.tt[h] = (depth, flag, _to_tt(best, ply), best_move)
        return best

    def _child(self, board: chess.Board, depth: int, alpha: int, beta: int, ply: int, h: int, static: int,
               pv_node: bool, *, first: bool, reduce: bool) -> int:
        """The value of the move just played, from the mover's view: the first move with the full
        window; later ones with a null window (one ply less when ``reduce``: a late quiet move),
        searched again in full only when they beat alpha."""
        if first:
            return -self._search(board, depth - 1, -beta, -alpha, ply + 1, h, static, pv_node)
        score = alpha + 1
        if reduce:
            score = -self._search(board, depth - 2, -alpha - 1, -alpha, ply + 1, h, static, False)
        if score > alpha:
            score = -self._search(board, depth - 1, -alpha - 1, -alpha, ply + 1, h, static, False)
        if alpha < score < beta:
            score = -self._search(board, depth - 1, -beta, -alpha, ply + 1, h, static, True)
        return score

    def _reward(self, board: chess.Board, move: chess.Move, ply: int, depth: int) -> None:
        """A quiet move that refuted: remember it as a killer and in the history table."""
        killers = self.killers[ply]
        if killers[0] != move:
            killers[1], killers[0] = killers[0], move
        key = (board.turn, move.from_square, move.to_square)
        self.history[key] = self.history.get(key, 0) + depth * depth

    @staticmethod
    def _has_pieces(board: chess.Board) -> bool:
        """Whether the side to move has a piece other than pawns and the king."""
        return bool(board.occupied_co[board.turn] & ~(board.pawns | board.kings))

    def _quiesce(self, board: chess.Board, alpha: int, beta: int, ply: int, h: int, static: int | None,
                 qply: int) -> int:
        """Captures (and queen promotions) until the position is quiet; the side to move may
        stand pat. The evaluator judged the horizon position; along a capture line the value
        moves by exactly the material taken (a capture sequence changes little else), so the
        capture search costs no evaluator call, except for check evasions at its first ply."""
        self._tick()
        self._pv[ply] = []
        if ply > self._seldepth:
            self._seldepth = ply
        if static is None:
            static = self._static(board, h)
        if qply == 0 and board.is_check():
            moves = list(board.generate_legal_moves())       # every evasion; no standing pat in check
            if not moves:
                return -(MATE - ply)
            best = -INF
            hashes = [hash_after(board, h, m) for m in moves]
            statics = self._evaluate_children(board, moves, hashes)
        else:
            best = static
            if best >= beta or qply >= MAX_QPLY:
                return best
            alpha = max(alpha, best)
            moves = [m for m in board.generate_legal_captures()
                     if static + _victim_value(board, m) + DELTA > alpha and not _losing_capture(board, m)]
            ours = board.pawns & board.occupied_co[board.turn]
            seventh = chess.BB_RANK_7 if board.turn == chess.WHITE else chess.BB_RANK_2
            if ours & seventh:
                moves += [m for m in board.generate_legal_moves(from_mask=ours & seventh)
                          if m.promotion == chess.QUEEN and not board.is_capture(m)]
            if not moves:
                return best
            hashes = [0] * len(moves)                        # not needed: no table, no evaluator below
            statics = [-(static + _victim_value(board, m)) for m in moves]
        for i in self._order(board, moves, None, ply, None):
            board.push(moves[i])
            try:
                score = -self._quiesce(board, -beta, -alpha, ply + 1, hashes[i], statics[i], qply + 1)
            finally:
                board.pop()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    self._pv[ply] = [moves[i], *self._pv[ply + 1]]
                    if score >= beta:
                        break
        return best

    # -- the root ---------------------------------------------------------------------------------
    def _game_hashes(self, board: chess.Board) -> dict[int, int]:
        """Hashes of the game's earlier positions since its last irreversible move."""
        replay = board.root()
        h = zobrist(replay)
        hashes = [h]
        for move in board.move_stack:
            irreversible = replay.is_irreversible(move)
            h = hash_after(replay, h, move)
            replay.push(move)
            hashes = [h] if irreversible else [*hashes, h]
        seen: dict[int, int] = {}
        for x in hashes[:-1]:              # the current position itself is the root
            seen[x] = seen.get(x, 0) + 1
        return seen

    def _root(self, board: chess.Board, moves: list[chess.Move], hashes: list[int], depth: int,
              scores: dict[chess.Move, int], exact_within: int | None,
              previous: chess.Move) -> tuple[chess.Move, int]:
        """One iteration at the root. ``scores`` holds each move's latest value (exact for
        the best; an upper bound below it for the rest) and gives the order, ``previous`` (the
        last iteration's best) first, so that a stopped iteration has searched it again.
        ``exact_within``: search every move whose value is within that many centipawns of
        the best with a full window."""
        root_hash = hashes[-1]
        order = sorted(range(len(moves)), key=lambda i: (moves[i] != previous, -scores.get(moves[i], -INF)))
        alpha, beta = -INF, INF
        best_move, best = moves[order[0]], -INF
        seen = self._seen
        for n, i in enumerate(order):
            move = moves[i]
            static = self._root_static.get(move)
            board.push(move)
            seen[root_hash] = seen.get(root_hash, 0) + 1
            try:
                if exact_within is not None:
                    floor = max(-INF, best - exact_within - 1) if best > -INF else -INF
                    score = -self._search(board, depth - 1, -INF, -floor, 1, hashes[i], static, True)
                elif n == 0:
                    score = -self._search(board, depth - 1, -beta, -alpha, 1, hashes[i], static, True)
                else:
                    score = -self._search(board, depth - 1, -alpha - 1, -alpha, 1, hashes[i], static, False)
                    if score > alpha:
                        score = -self._search(board, depth - 1, -beta, -alpha, 1, hashes[i], static, True)
                    else:
                        score = min(score, alpha - 1)     # a bound: never a tie with the best
            finally:
                board.pop()
                seen[root_hash] -= 1
                if not seen[root_hash]:
                    del seen[root_hash]
            scores[move] = score
            self._root_searched.add(move)
            if score > best:
                best, best_move = score, move
                self._pv[0] = [move, *self._pv[1]]
                alpha = max(alpha, score)
            self._root_best = (best_move, best)
        return best_move, best

    def measure_one_ply(self, board: chess.Board | None = None) -> float:
        """Seconds the one-ply decision takes on ``board`` (default :data:`MEASURE_FEN`, a middlegame), timed on the
        second of two calls (the first loads what the evaluator and the compiled code load on first use), the
        opening randomness off and untouched: what a front end compares with a move's budget before the first
        move of a game."""
        board = chess.Board(MEASURE_FEN) if board is None else board
        stochastic, self.stochastic = self.stochastic, False
        try:
            seconds = 0.0
            for _ in range(2):
                started = time.perf_counter()
                self.one_ply.choose(board)
                seconds = time.perf_counter() - started
        finally:
            self.stochastic = stochastic
        return seconds

    def _one_ply_iteration(self, board: chess.Board, root_moves: Sequence[chess.Move] | None,
                           limits: SearchLimits | None, on_iteration: Callable[[Iteration], None] | None,
                           ) -> tuple[SearchLimits, int, float, float, Decision, Iteration]:
        """What every search (this one and the compiled :mod:`knights.engine`) starts
        with: the limits (default :attr:`movetime`), the deepest iteration allowed, the
        start times (``perf_counter``, ``monotonic``), the one-ply bot's decision and its
        iteration (kept as :attr:`last` and reported)."""
        if limits is None:
            limits = SearchLimits.movetime(self.movetime) if self.movetime else SearchLimits()
        max_depth = self.depth if limits.depth is None else min(self.depth, limits.depth)
        started, clock = time.perf_counter(), time.monotonic()
        first = self.one_ply.choose(board, root_moves)     # depth 1: the one-ply bot's decision
        self.one_ply_seconds = time.perf_counter() - started
        sign = 1 if board.turn == chess.WHITE else -1
        # centipawns from the mover's side; a mate in one either way as the search writes a mate one ply off
        cp = MATE - 1 if first.mates else -(MATE - 2) if first.mate_in == -1 else round(first.score * 100 * sign)
        iteration = Iteration(1, 1, cp, len(first.candidates), self.one_ply_seconds, (first.move,))
        self.last = iteration
        if on_iteration is not None:
            on_iteration(iteration)
        return limits, max_depth, started, clock, first, iteration

    def choose(self, board: chess.Board, root_moves: Sequence[chess.Move] | None = None, *,
               limits: SearchLimits | None = None, control: Control | None = None,
               on_iteration: Callable[[Iteration], None] | None = None) -> Decision:
        """The move to play on ``board`` (not modified), searched within ``limits``
        (default: :attr:`movetime` seconds if set). :attr:`depth` is the engine's own
        ceiling: ``limits.depth`` may ask for less, never for more (so ``depth=1`` stays the
        one-ply bot whatever a ``go depth`` says)."""
        limits, max_depth, started, clock, first, iteration = self._one_ply_iteration(board, root_moves, limits,
                                                                                      on_iteration)
        if max_depth <= 1 or len(first.candidates) == 1 or first.mates:
            return first
        sign = 1 if board.turn == chess.WHITE else -1
        self.counters = Counters()
        self._control = control or Control()
        self._node_limit = limits.nodes
        self._hard = clock + limits.hard if limits.hard is not None else float("inf")
        soft = clock + limits.soft if limits.soft is not None else float("inf")
        board = board.copy()
        moves = [m for m, _ in first.candidates]
        root_hash = zobrist(board)
        hashes = [hash_after(board, root_hash, m) for m in moves] + [root_hash]
        self._history = self._game_hashes(board)
        self._seen = {}
        self._reset_tables()
        scores = {m: round(s * 100 * sign) for m, s in first.candidates}
        self._root_static = {m: -v for m, v in scores.items()}    # the one-ply values, from the reply's side
        exact_within = OPENING_MARGIN if self.stochastic and board.fullmove_number <= OPENING_MOVES else None
        best_move, best = first.move, scores[first.move]
        pool = set(moves)                    # moves whose values come from the last iteration searched
        for depth in range(2, max_depth + 1):
            self._pv = [[] for _ in range(MAX_PLY + MAX_QPLY + 2)]
            self._seldepth = 0
            self._root_best = None
            self._root_searched = set()
            trial = dict(scores)
            try:
                move, score = self._root(board, moves, hashes, depth, trial, exact_within, best_move)
            except _Stop:
                if self._root_best is not None:   # the last best move was searched again first:
                    best_move, best = self._root_best   # the best so far beats or is it
                    scores = trial
                    pool = set(self._root_searched)    # the others' values are an iteration old
                    iteration = replace(iteration, pv=(best_move,), score=best, nodes=self.counters.nodes)
                break
            scores, best_move, best = trial, move, score
            iteration = Iteration(depth, self._seldepth, best, self.counters.nodes,
                                  time.perf_counter() - started, tuple(self._pv[0]))
            if on_iteration is not None:
                on_iteration(iteration)
            if abs(best) > MATE_BOUND and MATE - abs(best) <= depth:
                break                                # a forced mate inside the horizon: deeper adds nothing
            ctl_soft, _ = self._control.deadlines()
            if time.monotonic() >= min(soft, ctl_soft) or self._control.should_stop():
                break
        self.counters.seconds = time.perf_counter() - started
        self.last = iteration
        return self._decision(board, first, best_move, best, scores, pool, exact_within, iteration)

    def _decision(self, board: chess.Board, first: Decision, best_move: chess.Move, best: int,
                  scores: dict[chess.Move, int], searched: set[chess.Move], exact_within: int | None,
                  iteration: Iteration) -> Decision:
        """The :class:`Decision`: every move ranked by its latest value; in the opening, with
        ``stochastic``, the paper's table draws among the moves of ``searched`` valued within
        ``exact_within`` of the best (never one that ends the game)."""
        sign = 1 if board.turn == chess.WHITE else -1
        ranked = sorted(scores, key=lambda m: -scores[m])
        ranked.remove(best_move)
        ranked.insert(0, best_move)
        rank = 0
        if exact_within is not None and abs(best) <= MATE_BOUND:
            pool = [m for m in ranked if m in searched and scores[m] >= best - exact_within
                    and first.outcomes.get(m) is None]
            if len(pool) > 1:
                weights = opening_weights(board.fullmove_number, len(pool))
                rank = ranked.index(pool[int(self.one_ply.rng.choice(len(weights), p=weights))])

        def pawns(cp: int) -> float:
            if abs(cp) > MATE_BOUND:
                return sign * MATE_SCORE * (1 if cp > 0 else -1)
            return sign * cp / 100

        candidates = [(m, pawns(scores[m])) for m in ranked]
        move = ranked[rank]
        best_line = rank == 0
        return replace(first, move=move, score=pawns(scores[move]), candidates=candidates, rank=rank,
                       depth=iteration.depth, seldepth=iteration.seldepth, nodes=iteration.nodes,
                       pv=iteration.pv if best_line else (move,), mate_in=iteration.mate_in if best_line else None)

    def choose_fen(self, fen: str, moves: Sequence[str] = ()) -> Decision:
        from knights.engine.user_input import board_from_fen

        return self.choose(board_from_fen(fen, moves))

    def best_move(self, board: chess.Board) -> chess.Move:
        return self.choose(board).move
