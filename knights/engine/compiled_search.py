"""The fast search behind the bot's usual interface: python-chess in, a Decision out.

:class:`FastSearchEngine` is a :class:`~knights.engine.search.SearchEngine` whose iterations
run in the compiled search (:mod:`knights.engine.compiled`) with a sparse
network of EL/v13's shape (:data:`~knights.learn.registry.FAST_NETWORKS`) evaluated incrementally
(:mod:`knights.engine.incremental`). Everything around the iterations is the same as the
Python search's: the one-ply decision first (so an engine of ``depth=1`` is the one-ply bot,
and the moves that end the game are known; ``go depth 1`` on a deeper engine plays its
compiled first iteration, each move then its captures), the limits
(:class:`~knights.engine.search.SearchLimits`), the stop requests and deadlines
(:class:`~knights.engine.search.Control`), the ``info`` lines (:class:`Iteration`) and the
stochastic opening among the moves searched within a margin of the best.

The compiled code cannot read a clock, so a watcher thread does: it raises the search's
stop flag at the hard deadline or when the control asks (the compiled search releases the
interpreter lock and looks at the flag at every node). The best move of the deepest
finished iteration is played; a stopped iteration counts when it has searched the last
best move again (it is searched first), as in the Python search. Every compiled iteration,
depth 1 included, stops at the hard deadline: the one-ply move is
legal and evaluated, so a move is always there, and a depth 2 that overran a short clock
(a crowded middlegame under quiescence, a busy machine) lost games on time in the soak
(``knights soak``); a node limit still applies. A search asked for depth 1 alone runs without
the watcher, bounded by :data:`DEPTH_ONE_NODES` instead (a fraction of a millisecond as a rule).

The network is packed once (NaN weights are refused then) and the compiled functions are
cached on disk by numba (:func:`warm_up` compiles or loads them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import chess

from knights.engine import compiled as core
from knights.engine.compiled_arrays import SearchArrays, warm_up
from knights.engine.compiled_board import standard, to_chess_move
from knights.engine.constants import INF, MATE, MATE_BOUND, MATE_SCORE, OPENING_MARGIN, UNLIMITED_DEPTH
from knights.engine.incremental import Net, NetEvaluator, load_net
from knights.engine.one_ply import OPENING_MOVES, Decision
from knights.engine.search import Control, Counters, Iteration, SearchEngine, SearchLimits
from knights.engine.spec import SEARCH_NETWORK
from knights.evaluate.base import Evaluator
from knights.learn import registry

"""The network the fast search evaluates with, when its weights are here (the search's default)."""
ASPIRATION = 40
"""Centipawns either side of the last iteration's value: the first window from depth 4."""
# The one-ply stage is plain: it reads the network on each move's position as it stands (batched, well under a
# millisecond a move), and gives the moves, their order and the moves that end the game. Its choice alone hangs a queen
# now and then (8/8/3k4/8/8/8/8/4K2Q w: Qc6+?? Kxc6), so the compiled iterations start again at depth 1: each move, then
# its captures and the replies to a check, a fraction of a millisecond; ``go depth 1`` and a clock too short for depth 2
# play that. Judging each move's captures from Python instead costs a few milliseconds a move, which a short clock
# cannot spare (``tests/test_uci_fuzz.py`` plays such clocks).
WATCH_EVERY = 0.002
"""Seconds between two looks of the watcher thread at the clock and the control."""
DEPTH_ONE_NODES = 20_000
"""The node cap of a search asked for depth 1 only, which runs without the watcher thread (starting one costs
0.5-0.7 ms, most of the clock's floor per move on a busy machine): each move, its captures and the replies to a
check take a few hundred nodes (well under a millisecond); the cap bounds a long run of checks to ~20 ms."""
FEATURES = {"null": core.CFG_NULL, "lmr": core.CFG_LMR, "see": core.CFG_SEE, "check_ext": core.CFG_CHECK_EXT,
            "rfp": core.CFG_RFP, "futility": core.CFG_FUTILITY, "lmr_log": core.CFG_LMR_LOG, "lmp": core.CFG_LMP,
            "history_malus": core.CFG_HISTORY_MALUS, "iir": core.CFG_IIR,
            "lmr_history": core.CFG_LMR_HISTORY, "improving": core.CFG_IMPROVING,
            "null_adaptive": core.CFG_NULL_ADAPTIVE, "cont_history": core.CFG_CONT_HISTORY,
            "see_prune": core.CFG_SEE_PRUNE, "mop_up": core.CFG_MOPUP}
"""The switchable parts of the compiled search (all on by default), for measuring each."""


def default_net_source() -> str | None:
    """:data:`SEARCH_NETWORK` when its weights are shipped, else ``None`` (the piece-square fallback)."""
    try:
        return SEARCH_NETWORK if registry.get(SEARCH_NETWORK).is_trained() else None
    except (KeyError, ValueError, FileNotFoundError):
        return None


def net_name(source: str | Path | None) -> str:
    if source is None:
        return "pst"
    return str(source) if str(source).startswith(("EL/", "SL/")) else f"network ({Path(source).name})"


class FastSearchEngine(SearchEngine):
    """The compiled alpha-beta search with a sparse network (or the piece-square fallback) as a
    :class:`SearchEngine`. ``net``: a version name, a weights file, a packed :class:`Net`,
    or ``None`` for :func:`default_net_source`. ``evaluator``: the one-ply stage's evaluator
    (default: the same network through :class:`NetEvaluator`, on each move's position as it stands:
    the comment above the class says why). ``features``: switch parts
    of the search off by name (:data:`FEATURES`); ``aspiration``: 0 turns the windows off;
    ``trace``: keep the first ``trace`` positions evaluated and their values (tests)."""

    def __init__(self, evaluator: Evaluator | str | None = None, *, net: Net | str | Path | None = None,
                 depth: int = UNLIMITED_DEPTH, movetime: float | None = None, stochastic: bool = True,
                 seed: int | None = None, capture_bonus: float = 0.0, tt_bits: int = 20,
                 features: dict[str, bool] | None = None, aspiration: int = ASPIRATION, trace: int = 0,
                 label: str | None = None) -> None:
        if isinstance(net, Net):
            packed, label = net, label or ("packed network" if net.use[0] == 1 else "pst")
        else:
            source = net if net is not None else default_net_source()
            packed, label = load_net(source), net_name(source)
        self.net = packed
        self.net_label = label
        if evaluator is None:               # the one-ply stage: the network on each move's position as it stands
            evaluator = NetEvaluator(packed, label if packed.use[0] == 1 else "material+pst")
        super().__init__(evaluator, depth=depth, movetime=movetime, stochastic=stochastic, seed=seed,
                         capture_bonus=capture_bonus)
        self.core = SearchArrays(packed, tt_bits, trace)
        self.aspiration = int(aspiration)
        for name, on in (features or {}).items():
            self.core.tables.cfg[FEATURES[name]] = 1 if on else 0
        self.stats: dict[str, int] = {}
        warm_up()

    @property
    def name(self) -> str:
        return f"{self.one_ply.name} (fast search)"

    def new_game(self) -> None:
        t = self.core.tables
        t.tt_key[:] = 0
        t.tt_depth[:] = -1
        t.history[:] = 0
        t.cont[:] = 0

    def choose(self, board: chess.Board, root_moves: Sequence[chess.Move] | None = None, *,
               limits: SearchLimits | None = None, control: Control | None = None,
               on_iteration: Callable[[Iteration], None] | None = None) -> Decision:
        """As :meth:`SearchEngine.choose`; the iterations run compiled, from depth 1 again."""
        if not standard(board):                      # Chess960 and odd boards: the Python search
            return super().choose(board, root_moves, limits=limits, control=control, on_iteration=on_iteration)
        limits, max_depth, started, clock, first, iteration = self._one_ply_iteration(board, root_moves, limits,
                                                                                      on_iteration)
        if self.depth <= 1 or max_depth < 1 or len(first.candidates) == 1 or first.mates:
            return first
        sign = 1 if board.turn == chess.WHITE else -1
        control = control or Control()
        self.counters = Counters()
        fast = self.core
        t = fast.tables
        fast.load(board)
        t.stats[:] = 0
        t.killers[:] = 0
        t.history[:] >>= 3     # each move the tables keep an eighth: the shift is floor division by 8,
        t.cont[:] >>= 3        # several times faster over the continuation history's 5.5 MB
        t.ctl[core.C_STOP] = 0
        alone = max_depth <= 1     # depth 1 only (go depth 1, the floor of a short clock): bounded by nodes, unwatched
        t.ctl[core.C_NODE_LIMIT] = min(limits.nodes or DEPTH_ONE_NODES, DEPTH_ONE_NODES) if alone else limits.nodes or 0
        hard = clock + limits.hard if limits.hard is not None else float("inf")
        soft = clock + limits.soft if limits.soft is not None else float("inf")
        moves = [m for m, _ in first.candidates]
        compiled = {m: fast.compiled(m) for m in moves}
        back = {c: m for m, c in compiled.items()}
        scores = {m: round(s * 100 * sign) for m, s in first.candidates}
        exact_within = OPENING_MARGIN if self.stochastic and board.fullmove_number <= OPENING_MOVES else None
        margin = -1 if exact_within is None else exact_within
        best_move, best = first.move, scores[first.move]
        pool = set(moves)
        # depth 1 leaves out the moves whose end the one-ply stage knows (the game ends, the opponent mates at once),
        # keeping its values, and holds those after which the opponent can claim a draw to at most 0, as it does:
        # the captures after a move see neither a quiet mate in reply nor the claim
        lost = round(MATE_SCORE * 100)
        known = {m for m in moves if first.outcomes.get(m) is not None or abs(scores[m]) >= lost}
        done = threading.Event()
        watcher = None if alone else threading.Thread(target=self._watch, args=(t, control, hard, done), daemon=True)
        if watcher is not None:
            watcher.start()
        try:
            for depth in range(1, max_depth + 1):     # depth 1 again, compiled: each move then its captures
                order = sorted(moves, key=lambda m: (m != best_move, -scores[m]))
                if depth == 1:
                    order = [m for m in order if m not in known]
                    if not order:              # every move's end is known: the one-ply values stand
                        continue
                alpha, beta = -INF, INF
                if self.aspiration and margin < 0 and depth >= 4 and abs(best) < MATE_BOUND:
                    alpha, beta = best - self.aspiration, best + self.aspiration
                while True:
                    index, score = fast.iterate(depth, alpha, beta, [compiled[m] for m in order], margin)
                    if t.stats[core.S_STOPPED] or (alpha == -INF and beta == INF):
                        break
                    if score <= alpha:
                        alpha = -INF
                    elif score >= beta:
                        beta = INF
                    else:
                        break
                finished = int(t.stats[core.S_DONE])
                stopped = bool(t.stats[core.S_STOPPED])
                for i in range(finished):
                    scores[order[i]] = int(t.root_scores[i])
                if stopped:
                    if finished >= 1 and index >= 0:
                        best_move, best = (order[index], score) if depth > 1 else \
                            self._depth_one_best(order[:finished], known, first.claims, scores)
                        pool = set(order[:finished])
                        iteration = Iteration(iteration.depth, int(t.stats[core.S_SELDEPTH]), best,
                                              int(t.stats[core.S_NODES]), time.perf_counter() - started,
                                              (best_move,))
                    break
                best_move, best = (back[int(t.root_moves[index])], score) if depth > 1 else \
                    self._depth_one_best(order, known, first.claims, scores)
                pool = set(moves)
                pv = self._line(board)
                iteration = Iteration(depth, int(t.stats[core.S_SELDEPTH]), best, int(t.stats[core.S_NODES]),
                                      time.perf_counter() - started, pv if pv and pv[0] == best_move else (best_move,))
                if on_iteration is not None:
                    on_iteration(iteration)
                if abs(best) > MATE_BOUND and MATE - abs(best) <= depth:
                    break
                if time.monotonic() >= min(soft, control.deadlines()[0]) or control.should_stop():
                    break
        finally:
            done.set()
            if watcher is not None:
                watcher.join()
        c = self.counters
        c.nodes = int(t.stats[core.S_NODES])
        c.eval_positions = int(t.stats[core.S_EVALS])
        c.seconds = time.perf_counter() - started
        self.stats = {"nodes": c.nodes, "qnodes": int(t.stats[core.S_QNODES]), "evals": c.eval_positions,
                      "movegens": int(t.stats[core.S_MOVEGEN]), "makes": int(t.stats[core.S_MAKES])}
        self.last = iteration
        return self._decision(board, first, best_move, best, scores, pool, exact_within, iteration)

    def _line(self, board: chess.Board) -> tuple[chess.Move, ...]:
        """The principal variation of the last iteration, as far as it is legal."""
        t = self.core.tables
        line: list[chess.Move] = []
        replay = board.copy(stack=False)
        for k in range(int(t.pv_len[0])):
            move = to_chess_move(int(t.pv[0, k]))
            if not replay.is_legal(move):
                break
            line.append(move)
            replay.push(move)
        return tuple(line)

    @staticmethod
    def _depth_one_best(searched: Sequence[chess.Move], known: set[chess.Move], claims: dict[chess.Move, str],
                        scores: dict[chess.Move, int]) -> tuple[chess.Move, int]:
        """The best move after the compiled depth 1 (``searched``, in its order, their values in ``scores``):
        a move after which the opponent can claim a draw is worth at most 0, and the moves it left out (``known``)
        keep the one-ply stage's values, so that a draw at hand beats a line that loses."""
        for m in searched:
            if m in claims:
                scores[m] = min(scores[m], 0)
        best = max([*searched, *sorted(known, key=lambda m: m.uci())], key=scores.__getitem__)
        return best, scores[best]

    @staticmethod
    def _watch(t: Any, control: Control, hard: float, done: threading.Event) -> None:
        """Raise the stop flag at the hard deadline or when ``control`` asks."""
        while not done.wait(WATCH_EVERY):
            hard = min(hard, control.deadlines()[1])    # ponderhit may set one
            if control.should_stop() or time.monotonic() >= hard:
                t.ctl[core.C_STOP] = 1
                return
