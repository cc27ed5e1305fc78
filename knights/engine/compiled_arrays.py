"""The compiled search's arrays for one network, and the one-time compilation.

:class:`SearchArrays` holds what the compiled functions (:mod:`knights.engine.compiled`) work
on for one network: the position with its accumulators, and the tables (transposition table,
move lists, killers, history, counters, switches). The search (:mod:`knights.engine.compiled_search`)
and the capture search alone (:mod:`knights.engine.judged`) each keep their own.
:func:`warm_up` compiles every compiled function once (numba caches them on disk).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import chess
import numpy as np

from knights.engine import compiled as core
from knights.engine.compiled import acc_refresh
from knights.engine.compiled_board import PLY, Position, from_chess_move, set_from_chess
from knights.engine.constants import INF
from knights.engine.incremental import Net, NetEvaluator

_WARM: list[bool] = []


def warm_up() -> float:
    """Compile (or load from numba's cache) every compiled function once; seconds it took."""
    started = time.perf_counter()
    if not _WARM:
        from knights.engine.incremental import pack

        net = pack(None)
        engine_net = pack({"columns": np.zeros((768, 8), np.float32), "bias": np.zeros(8, np.float32),
                           "head.0.weight": np.zeros((2, 16), np.float32), "head.0.bias": np.zeros(2, np.float32),
                           "head.2.weight": np.zeros((2, 2), np.float32), "head.2.bias": np.zeros(2, np.float32),
                           "head.4.weight": np.zeros((1, 2), np.float32), "head.4.bias": np.zeros(1, np.float32)})
        for n in (net, engine_net):
            fast = SearchArrays(n)
            fast.load(chess.Board())
            fast.iterate(2, -INF, INF, [], -1)
        Position(chess.Board()).perft(1)
        NetEvaluator(engine_net, "warm").evaluate(_start_positions())
        _WARM.append(True)
    return time.perf_counter() - started


def _start_positions() -> Any:
    from knights.board.positions import positions_from_boards

    return positions_from_boards([chess.Board()])


class SearchArrays:
    """The compiled search's arrays for one network: position, accumulators, tables."""

    def __init__(self, net: Net, tt_bits: int = 20, trace: int = 0) -> None:
        self.net = net
        self.pos = core.new_pos(int(net.cols.shape[1]), int(net.w0.shape[1]))
        self.tables = core.new_tables(tt_bits, trace)
        self.moves: dict[tuple[int, int, int], int] = {}

    def load(self, board: chess.Board) -> None:
        """The position (and the game's earlier positions, for repetitions) as the search's root, with
        its legal moves by their python-chess spelling (:meth:`compiled`, :meth:`iterate`)."""
        holder = Position.__new__(Position)
        holder.board, holder.st, holder.undo, holder.hist = self.pos.board, self.pos.st, self.pos.undo, self.pos.hist
        set_from_chess(holder, board)
        if self.net.use[0] == 1:
            acc_refresh(self.pos.acc, int(self.pos.st[PLY]), self.pos.board, self.net)
        holder.changes = self.pos.changes
        self.moves = {}
        for m in holder.legal():
            self.moves[(m & 63, (m >> 6) & 63, (m >> 12) & 7)] = m

    def compiled(self, move: chess.Move) -> int:
        return self.moves[from_chess_move(move)]

    def iterate(self, depth: int, alpha: int, beta: int, order: Sequence[int], margin: int) -> tuple[int, int]:
        t = self.tables
        if not order:
            order = list(self.moves.values())
        t.root_moves[: len(order)] = np.asarray(order, np.int32)
        index, score = core.search_root(self.pos, self.net, t, depth, alpha, beta, len(order), margin)
        return int(index), int(score)
